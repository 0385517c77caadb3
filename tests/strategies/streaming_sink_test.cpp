// strategies/src/streaming_sink.cpp: records parsed while the body arrives, from a JSON array
// (ArrayStreamingSink, FreshArrayStreamingSink) or NDJSON (NdjsonStreamingSink). Bodies are fed as the client feeds a sink (into
// its receive window when it offers one, else from elsewhere), cut at every byte boundary and byte by
// byte; the checksum must equal the generator's whatever the cuts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "ringlab/json/checksum.hpp"
#include "ringlab/json/consume.hpp"
#include "ringlab/json/deserialize.hpp"
#include "streaming_sink.hpp"
#include "../support/generated_bodies.hpp"
#include "../support/piece_ends.hpp"

namespace ringlab::strategies::detail {
namespace {

// Feeds `body` in pieces ending at `ends`: each piece goes into the sink's window (received in place)
// or, when the window is empty or `from_elsewhere`, from a separate buffer (copied by the sink).
template <class Sink>
http::Status feed(Sink& sink, std::string_view body, const std::vector<std::size_t>& ends, bool chunked,
                  bool from_elsewhere = false, int status_code = 200) {
  http::ResponseHead head;
  head.status = status_code;
  head.chunked = chunked;
  if (!chunked) head.content_length = body.size();
  if (auto begun = sink.begin(head); !begun) return begun;
  std::size_t at = 0;
  for (const std::size_t end : ends) {
    while (at < end) {
      const std::span<char> window = sink.receive_window().bytes;
      if (window.empty() || from_elsewhere) {
        if (auto status = sink.on_body(body.substr(at, end - at)); !status) return status;
        at = end;
        continue;
      }
      const std::size_t n = std::min(window.size(), end - at);
      std::memcpy(window.data(), body.data() + at, n);
      at += n;
      if (auto status = sink.on_body(std::string_view(window.data(), n)); !status) return status;
    }
  }
  return sink.end();
}

using ringlab::testing::generated_body;
using ringlab::testing::generated_checksum;
using ringlab::testing::byte_by_byte;
using ringlab::testing::cut_at;

// A Sink expecting `count` records of `payload`, with the full checksum on as on a verified request,
// next to the parser and buffer it works in.
template <class Sink>
struct VerifiedSink {
  VerifiedSink(Payload payload, std::size_t count) : sink(parser, buffer) {
    sink.expect(payload, count);
    sink.verify(true);
  }
  json::Parser parser;
  base::PaddedBuffer buffer;
  Sink sink;
};

// Bodies of a few records of each payload, with Content-Length and chunked, cut at every byte: each
// gives the generator's checksum and record count.
template <class Sink>
void check_every_cut(bool ndjson) {
  struct Row {
    Payload payload;
    std::size_t count;
  };
  for (const Row row :
       {Row{Payload::weather, 0}, Row{Payload::weather, 3}, Row{Payload::repos, 2}, Row{Payload::github, 3},
        Row{Payload::profiles, 3}}) {
    const std::string body = generated_body(row.payload, row.count, ndjson);
    for (const bool chunked : {false, true}) {
      INFO(payload_name(row.payload) << " " << row.count
                                     << (chunked ? std::string(" chunked") : std::string(" with Content-Length")));
      VerifiedSink<Sink> verified(row.payload, row.count);
      for (std::size_t cut = 0; cut <= body.size(); ++cut) {
        INFO("cut at byte " << cut);
        const auto status = feed(verified.sink, body, cut_at(cut, body.size()), chunked);
        REQUIRE_MESSAGE(status, (status ? "" : status.error().message()));
        CHECK(verified.sink.checksum() == generated_checksum(row.payload, row.count));
        CHECK(verified.sink.records() == row.count);
      }
    }
  }
}

struct Bad {
  const char* name;
  std::string body;
  const char* says;  // what the error's detail contains
};

// Each bad body, cut at every byte and fed to a fresh sink expecting two weather records, is a sink error.
template <class Sink>
void check_bad_bodies(std::span<const Bad> bads) {
  for (const Bad& bad : bads) {
    INFO(std::string_view(bad.name));
    for (std::size_t cut = 0; cut <= bad.body.size(); ++cut) {
      INFO("cut at byte " << cut);
      VerifiedSink<Sink> verified(Payload::weather, 2);
      const auto status = feed(verified.sink, bad.body, cut_at(cut, bad.body.size()), false);
      REQUIRE_FALSE(status);
      INFO(status.error().message());
      CHECK(status.error().code == http::Errc::sink);
      CHECK(status.error().detail.find(bad.says) != std::string::npos);
    }
  }
}

TEST_CASE("array: a body cut at every byte gives the generator's checksum, presized and chunked") {
  check_every_cut<ArrayStreamingSink>(false);
}

// A record is known complete once the '{' after it is in (json's parse of an arriving array cuts at
// "},{"): the last one waits for the closing bracket, the last piece here.
TEST_CASE("array: fed byte by byte, every record but the last is parsed before the closing bracket arrives") {
  const std::string body = generated_body(Payload::weather, 5);
  VerifiedSink<ArrayStreamingSink> verified(Payload::weather, 5);
  for (const bool from_elsewhere : {false, true}) {
    INFO(std::string_view(from_elsewhere ? "bytes copied from elsewhere" : "bytes received in place"));
    REQUIRE(feed(verified.sink, body, byte_by_byte(body.size()), false, from_elsewhere));
    CHECK(verified.sink.checksum() == json::checksum_weather(5));
    CHECK(verified.sink.records_before_end() == 4);
  }
}

TEST_CASE("array: pieces of several records each, cut inside records, parse every record before the last piece") {
  const std::string body = generated_body(Payload::repos, 30);
  for (const bool chunked : {false, true}) {
    INFO(std::string_view(chunked ? "chunked" : "with Content-Length"));
    VerifiedSink<ArrayStreamingSink> verified(Payload::repos, 30);
    std::vector<std::size_t> ends;
    for (std::size_t end = 1000; end < body.size(); end += 1000) ends.push_back(end);
    ends.push_back(body.size() - 1);  // all but the closing bracket
    ends.push_back(body.size());
    REQUIRE(feed(verified.sink, body, ends, chunked));
    CHECK(verified.sink.checksum() == json::checksum_repos(30));
    CHECK(verified.sink.records() == 30);
    CHECK(verified.sink.records_before_end() == 29);
  }
}

TEST_CASE("array: a shorter body after a longer one leaves no stale records") {
  VerifiedSink<ArrayStreamingSink> verified(Payload::repos, 4);
  for (const std::size_t count : {std::size_t{4}, std::size_t{1}, std::size_t{3}}) {
    INFO(count);
    const std::string body = generated_body(Payload::repos, count);
    REQUIRE(feed(verified.sink, body, {body.size()}, false));
    CHECK(verified.sink.checksum() == json::checksum_repos(count));
  }
}

TEST_CASE("array: the body of an error status is received, not parsed: the caller reports the status") {
  VerifiedSink<ArrayStreamingSink> verified(Payload::weather, 2);
  const std::string body = R"({"error":"count must be a decimal"})";
  for (const int status : {400, 404, 500}) {
    INFO(status);
    REQUIRE(feed(verified.sink, body, {5, body.size()}, false, false, status));
    CHECK(verified.buffer.view() == body);
    CHECK(verified.sink.records() == 0);
  }
}

TEST_CASE("array: bad bodies are sink errors carrying json's message, at every cut") {
  const std::string good = generated_body(Payload::weather, 2);
  const Bad bads[] = {
      {"a value that is not JSON", R"([{"date":"2024-01-01","temperatureC":oops,"summary":"Mild","temperatureF":1}])",
       "record 0"},
      {"a missing field", R"([{"date":"2024-01-01","summary":"Mild","temperatureF":1}])", "record 0"},
      {"array never closed", good.substr(0, good.size() - 1), "json: "},
      {"garbage between records", good.substr(0, good.find("},{") + 1) + " x " + good.substr(good.find("},{") + 2),
       "json: "},
      {"truncated last record", good.substr(0, good.size() - 8), "record 1"},
      {"not an array", R"({"date":"2024-01-01"})", "json: "},
      {"empty body", "", "json: "},
  };
  check_bad_bodies<ArrayStreamingSink>(bads);
}

// streaming_array_fresh (GetStreamAsync, GetFromJsonAsync): the same cuts, records built anew per body.
TEST_CASE("array, fresh records: a body cut at every byte gives the generator's checksum, presized and chunked") {
  check_every_cut<FreshArrayStreamingSink>(false);
}

TEST_CASE("array, fresh records: fed byte by byte, from a longer body to shorter ones and back") {
  VerifiedSink<FreshArrayStreamingSink> verified(Payload::github, 2);
  for (const std::size_t count : {std::size_t{4}, std::size_t{1}, std::size_t{0}, std::size_t{3}}) {
    INFO(count);
    const std::string body = generated_body(Payload::github, count);
    for (const bool chunked : {false, true}) {
      REQUIRE(feed(verified.sink, body, byte_by_byte(body.size()), chunked));
      CHECK(verified.sink.checksum() == json::checksum_github(count));
      CHECK(verified.sink.records() == count);
      CHECK(verified.sink.records_before_end() == (count == 0 ? 0 : count - 1));
    }
  }
}

TEST_CASE("array, fresh records: bad bodies are sink errors carrying json's message, at every cut") {
  const std::string good = generated_body(Payload::weather, 2);
  const Bad bads[] = {
      {"a value that is not JSON", R"([{"date":"2024-01-01","temperatureC":oops,"summary":"Mild","temperatureF":1}])",
       "record 0"},
      {"a field of the wrong type", R"([{"date":"2024-01-01","temperatureC":"5","summary":"Mild","temperatureF":1}])",
       "record 0"},
      {"truncated inside the second record", good.substr(0, good.size() - 8), "record 1"},
      {"garbage between records", good.substr(0, good.find("},{") + 1) + " x" + good.substr(good.find("},{") + 1),
       "json: "},
      {"array never closed", good.substr(0, good.size() - 1), "json: "},
      {"not an array", R"({"date":"2024-01-01"})", "json: "},
  };
  check_bad_bodies<FreshArrayStreamingSink>(bads);
}

TEST_CASE("array, fresh records: after a bad body the next good one is read whole") {
  VerifiedSink<FreshArrayStreamingSink> verified(Payload::weather, 3);
  const std::string good = generated_body(Payload::weather, 3);
  REQUIRE_FALSE(feed(verified.sink, good.substr(0, good.size() / 2) + "x]", {good.size() / 2 + 2}, false));
  REQUIRE(feed(verified.sink, good, cut_at(good.size() / 3, good.size()), true));
  CHECK(verified.sink.checksum() == json::checksum_weather(3));
  CHECK(verified.sink.records() == 3);
}

TEST_CASE("ndjson: a body cut at every byte gives the generator's checksum, presized and chunked") {
  check_every_cut<NdjsonStreamingSink>(true);
}

TEST_CASE("ndjson: fed byte by byte, each record is parsed as soon as its newline is in") {
  const std::string body = generated_body(Payload::repos, 4, true);
  VerifiedSink<NdjsonStreamingSink> verified(Payload::repos, 4);
  REQUIRE(feed(verified.sink, body, byte_by_byte(body.size()), false));
  CHECK(verified.sink.checksum() == json::checksum_repos(4));
  // The last piece is the last record's newline: the three before were parsed while waiting.
  CHECK(verified.sink.records_before_end() == 3);
}

TEST_CASE("ndjson: a last record without its newline, blank lines, and a shorter body after a longer one") {
  VerifiedSink<NdjsonStreamingSink> verified(Payload::weather, 5);
  NdjsonStreamingSink& sink = verified.sink;
  std::string body = generated_body(Payload::weather, 5, true);
  REQUIRE(feed(sink, body, {body.size()}, false));
  CHECK(sink.checksum() == json::checksum_weather(5));
  body.pop_back();  // no final newline
  REQUIRE(feed(sink, body, {body.size() / 2, body.size()}, false));
  CHECK(sink.checksum() == json::checksum_weather(5));
  const std::string shorter = generated_body(Payload::weather, 2, true) + "\n\n";
  REQUIRE(feed(sink, shorter, {shorter.size()}, false));
  CHECK(sink.checksum() == json::checksum_weather(2));
  CHECK(sink.records() == 2);
}

TEST_CASE("ndjson: bad bodies are sink errors carrying json's message, at every cut") {
  const std::string good = generated_body(Payload::weather, 2, true);
  const Bad bads[] = {
      {"a value that is not JSON", "{\"date\":\"2024-01-01\",\"temperatureC\":oops,\"summary\":\"M\",\"temperatureF\":1}\n",
       "json: "},
      {"a missing field", "{\"date\":\"2024-01-01\",\"summary\":\"Mild\",\"temperatureF\":1}\n", "temperatureC"},
      {"last record cut short", good.substr(0, good.size() - 5), "json: "},
      {"a JSON array instead of lines", generated_body(Payload::weather, 2), "json: "},
      {"a record that is not an object", good + "[1,2]\n", "json: "},
  };
  check_bad_bodies<NdjsonStreamingSink>(bads);
}

TEST_CASE("unverified bodies are consumed record by record, as the whole-body parse consumes them, and not checksummed") {
  const std::string array = generated_body(Payload::weather, 7);
  const std::string lines = generated_body(Payload::weather, 7, true);
  // What a whole-body parse into owning records (array sink) and into views (NDJSON sink) consumes.
  json::Parser whole;
  std::pmr::vector<json::WeatherForecast> owning;
  const simdjson::padded_string padded_array(array);
  REQUIRE(json::parse_array(whole, padded_array, owning));
  const uint64_t owning_consumed = json::consume(std::span<const json::WeatherForecast>(owning));
  std::vector<std::size_t> one_piece{array.size()};
  json::Parser parser;
  base::PaddedBuffer buffer;
  ArrayStreamingSink array_sink(parser, buffer);
  array_sink.expect(Payload::weather, 7);
  REQUIRE(feed(array_sink, array, one_piece, false, false));
  CHECK(array_sink.records() == 7);
  CHECK(array_sink.consumed() == owning_consumed);
  CHECK(array_sink.checksum() != json::checksum_weather(7));  // not computed

  base::PaddedBuffer lines_buffer;
  NdjsonStreamingSink lines_sink(parser, lines_buffer);
  lines_sink.expect(Payload::weather, 7);
  std::vector<std::size_t> lines_piece{lines.size()};
  REQUIRE(feed(lines_sink, lines, lines_piece, false, false));
  CHECK(lines_sink.records() == 7);
  CHECK(lines_sink.checksum() != json::checksum_weather(7));
  // Views and owning records of escape-free text consume alike.
  CHECK(lines_sink.consumed() == owning_consumed);
}

}  // namespace
}  // namespace ringlab::strategies::detail
