// tests json/src/deserialize_arriving.cpp: an array body parsed while it arrives, one document per piece.
// Bodies land in a PaddedBuffer piece by piece as a client lands them (in its spare room), cut at every
// byte and byte by byte; what is parsed must equal the whole-body parse, every byte lent to simdjson
// must be back after each call, and bad bodies must fail naming the record, however they were cut.
#include "ringlab/json/deserialize.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/json/checksum.hpp"
#include "ringlab/json/profiles.hpp"
#include "ringlab/json/serialize.hpp"
#include "../support/piece_ends.hpp"

namespace json = ringlab::json;
using ringlab::base::PaddedBuffer;
using ringlab::testing::byte_by_byte;
using ringlab::testing::cut_at;

namespace {

// The arriving parse of weather records, the payload most cases feed.
constexpr auto kWeatherArriving = &json::parse_arriving<json::WeatherForecast>;

// Records parsed after each piece, and how the body ended.
struct Fed {
  json::Status status;
  std::vector<std::size_t> records_after_piece;
};

// Lands `text` in `body` in pieces ending at `ends` (the last end is text.size()), calling the arriving
// parse after each piece and once complete at the end. The body's bytes must read as they arrived after
// every call: the lent brackets are back.
template <class Record, class Parse>
Fed feed(json::Parser& parser, PaddedBuffer& body, std::string_view text, const std::vector<std::size_t>& ends,
         std::pmr::vector<Record>& out, Parse parse) {
  Fed fed;
  body.clear();
  body.reserve(text.size());
  json::ArrivingArray progress;
  std::size_t at = 0;
  for (const std::size_t end : ends) {
    std::memcpy(body.spare().data(), text.data() + at, end - at);
    body.commit(end - at);
    at = end;
    fed.status = parse(parser, body, progress, out, json::Arrival::partial);
    REQUIRE_MESSAGE(fed.status, "a partial call is never an error");
    REQUIRE(body.view() == text.substr(0, end));
    fed.records_after_piece.push_back(progress.records);
  }
  fed.status = parse(parser, body, progress, out, json::Arrival::complete);
  CHECK(body.view() == text);
  if (fed.status) CHECK(progress.records == out.size());
  return fed;
}

std::string weather_body(std::size_t count) {
  std::string body;
  json::append_weather_json(body, count);
  return body;
}

// One weather record with `summary` as its raw JSON text (quotes included) and `extra` fields first.
std::string weather_record(std::string_view summary, std::string_view extra = {}) {
  return "{" + std::string(extra) + R"("date":"2024-01-01","temperatureC":5,"summary":)" + std::string(summary) +
         R"(,"temperatureF":41})";
}

// The checksum of a whole-body parse of `text` (which must succeed).
uint64_t whole_weather(std::string_view text) {
  json::Parser parser;
  const simdjson::padded_string padded(text);
  std::pmr::vector<json::WeatherForecast> out;
  const auto status = json::parse_array(parser, padded, out);
  REQUIRE_MESSAGE(status, (status ? "" : status.error().message));
  return json::checksum(std::span<const json::WeatherForecast>(out));
}

// Each payload's generated body, cut once at every byte and fed byte by byte: the generator's checksum.
template <class Record, class Parse>
void check_generated(std::string_view name, const std::string& text, std::size_t count, uint64_t truth, Parse parse) {
  INFO(name << " " << count);
  json::Parser parser;
  PaddedBuffer body;
  std::pmr::vector<Record> out;
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    INFO("cut at byte " << cut);
    const Fed fed = feed(parser, body, text, cut_at(cut, text.size()), out, parse);
    REQUIRE_MESSAGE(fed.status, (fed.status ? "" : fed.status.error().message));
    CHECK(out.size() == count);
    CHECK(json::checksum(std::span<const Record>(out)) == truth);
  }
  const Fed fed = feed(parser, body, text, byte_by_byte(text.size()), out, parse);
  REQUIRE(fed.status);
  CHECK(json::checksum(std::span<const Record>(out)) == truth);
}

TEST_CASE("arriving: every payload's body cut at every byte and fed byte by byte gives the generator's checksum") {
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
    check_generated<json::WeatherForecast>("weather", weather_body(count), count, json::checksum_weather(count),
                                           kWeatherArriving);
    std::string repos;
    json::append_repos_json(repos, count);
    check_generated<json::Repository>("repos", repos, count, json::checksum_repos(count),
                                      &json::parse_arriving<json::Repository>);
    std::string github;
    json::append_github_json(github, count);
    check_generated<json::GithubRepository>("github", github, count, json::checksum_github(count),
                                            &json::parse_arriving<json::GithubRepository>);
    std::string profiles;
    json::append_profiles_json(profiles, count);
    check_generated<json::ProfileStars>("profiles", profiles, count, json::checksum_profiles(count),
                                        &json::parse_arriving<json::ProfileStars>);
  }
}

TEST_CASE("arriving: fed byte by byte, a record is parsed once the '{' after it is in, the last at the end") {
  const std::string text = weather_body(4);
  json::Parser parser;
  PaddedBuffer body;
  std::pmr::vector<json::WeatherForecast> out;
  const Fed fed = feed(parser, body, text, byte_by_byte(text.size()), out, kWeatherArriving);
  REQUIRE(fed.status);
  CHECK(out.size() == 4);
  // Record k (k < 3) is parsed by the piece that brings record k + 1's '{'.
  std::size_t expected = 0;
  for (std::size_t end = 1; end <= text.size(); ++end) {
    INFO("after byte " << end);
    if (end >= 2 && text[end - 1] == '{' && text[end - 2] == ',') ++expected;
    CHECK(fed.records_after_piece[end - 1] == expected);
  }
  CHECK(expected == 3);
}

// The ',' after record k of a generated body.
std::size_t comma_after(const std::string& text, std::size_t k) {
  std::size_t at = text.find("},{") + 1;
  for (std::size_t i = 0; i < k; ++i) at = text.find("},{", at) + 1;
  return at;
}

TEST_CASE("arriving: several records in one piece are parsed by one call, a record split across pieces later") {
  const std::string text = weather_body(50);
  json::Parser parser;
  PaddedBuffer body;
  std::pmr::vector<json::WeatherForecast> out;
  // The first piece ends 10 bytes into record 20, the second 3 bytes before the end, inside record 49.
  const std::size_t in_20 = comma_after(text, 19) + 10;
  const Fed fed = feed(parser, body, text, {in_20, text.size() - 3, text.size()}, out, kWeatherArriving);
  REQUIRE(fed.status);
  CHECK(fed.records_after_piece[0] == 20);
  CHECK(fed.records_after_piece[1] == 49);
  CHECK(out.size() == 50);
  CHECK(json::checksum(std::span<const json::WeatherForecast>(out)) == json::checksum_weather(50));
}

TEST_CASE("arriving: bytes that only look like a boundary give the whole-body parse's records, at every cut") {
  // Each body is valid; each holds '},{' (or '}, {') where no record ends: inside a string, after an
  // escaped quote, inside a record's own array of objects; and whitespace around the real boundaries.
  const std::string records[] = {
      weather_record(R"("a},{b")"),
      weather_record(R"("q\"},{\"x")"),
      weather_record(R"("Mild")", R"("x":[{"a":1},{"b":[{},{}]}],)"),
      weather_record(R"("} , {")", R"("y":{"z":[{"a":"},{"}]},)"),
      weather_record(R"("Cold")"),
  };
  std::string text = "[";
  for (const std::string& record : records) {
    if (text.size() > 1) text += " ,\n ";
    text += record;
  }
  text += " ]";
  const uint64_t truth = whole_weather(text);
  json::Parser parser;
  PaddedBuffer body;
  std::pmr::vector<json::WeatherForecast> out;
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    INFO("cut at byte " << cut);
    const Fed fed = feed(parser, body, text, cut_at(cut, text.size()), out, kWeatherArriving);
    REQUIRE_MESSAGE(fed.status, (fed.status ? "" : fed.status.error().message));
    CHECK(out.size() == 5);
    CHECK(json::checksum(std::span<const json::WeatherForecast>(out)) == truth);
  }
  const Fed fed = feed(parser, body, text, byte_by_byte(text.size()), out, kWeatherArriving);
  REQUIRE(fed.status);
  CHECK(json::checksum(std::span<const json::WeatherForecast>(out)) == truth);
}

TEST_CASE("arriving: a shorter body after a longer one leaves no stale records, and its stale bytes are not read") {
  json::Parser parser;
  PaddedBuffer body;
  std::pmr::vector<json::WeatherForecast> out;
  for (const std::size_t count : {std::size_t{6}, std::size_t{2}, std::size_t{0}, std::size_t{3}}) {
    INFO(count);
    const std::string text = weather_body(count);
    const Fed fed = feed(parser, body, text, cut_at(text.size() / 2, text.size()), out, kWeatherArriving);
    REQUIRE(fed.status);
    CHECK(out.size() == count);
    CHECK(json::checksum(std::span<const json::WeatherForecast>(out)) == json::checksum_weather(count));
  }
  // A body that does not close its last record, over the bytes of a longer one: the error, not a
  // record read on into the old bytes.
  const std::string longer = weather_body(6);
  REQUIRE(feed(parser, body, longer, {longer.size()}, out, kWeatherArriving).status);
  const std::string cut = longer.substr(0, longer.find("},{") + 1) + R"(,{"date":"2024-01-01","x":[1})";
  const Fed fed = feed(parser, body, cut, {cut.size()}, out, kWeatherArriving);
  REQUIRE_FALSE(fed.status);
  CHECK(fed.status.error().record == 1);
}

struct Bad {
  const char* name;
  std::string text;
  std::size_t record;  // the record the error names (json::kNoRecord: the document)
  const char* says;    // a piece of its message
};

TEST_CASE("arriving: bad bodies fail at the end naming the record, at every cut and byte by byte") {
  const std::string good = weather_body(5);
  const std::size_t after_1 = comma_after(good, 1);
  const std::size_t in_3 = comma_after(good, 2) + 10;  // inside record 3's date string
  std::string bad_value = good;
  bad_value.replace(good.find("\"temperatureC\":", in_3) + 15, 1, "x");  // record 3's temperatureC
  const Bad bads[] = {
      {"garbage between records", good.substr(0, after_1) + " x" + good.substr(after_1), 2, "TAPE_ERROR"},
      {"truncated last record", good.substr(0, good.size() - 8), 4, "the body ends inside the record"},
      {"truncated inside a string of the last record", good.substr(0, in_3 + 3), 3, "UNCLOSED_STRING"},
      {"a bad value after records parsed early", bad_value, 3, "field temperatureC"},
      {"array never closed", good.substr(0, good.size() - 1), 4, "the body ends before the array is closed"},
      {"a record that is not an object", good.substr(0, after_1) + ",7" + good.substr(after_1), 2, "INCORRECT_TYPE"},
      {"a comma before the closing bracket", good.substr(0, good.size() - 1) + ",]", 5, "INCORRECT_TYPE"},
      {"bytes after the array", good + " x", json::kNoRecord, "after the array"},
      {"not an array", weather_record(R"("Mild")"), json::kNoRecord, "not an array"},
      {"empty body", "", json::kNoRecord, "empty"},
  };
  json::Parser parser;
  PaddedBuffer body;
  std::pmr::vector<json::WeatherForecast> out;
  for (const Bad& bad : bads) {
    INFO(std::string_view(bad.name));
    for (std::size_t cut = 0; cut <= bad.text.size() + 1; ++cut) {
      const std::vector<std::size_t> ends =
          cut <= bad.text.size() ? cut_at(cut, bad.text.size()) : byte_by_byte(bad.text.size());
      INFO((cut <= bad.text.size() ? "cut at byte " + std::to_string(cut) : std::string("byte by byte")));
      const Fed fed = feed(parser, body, bad.text, ends, out, kWeatherArriving);
      REQUIRE_FALSE(fed.status);
      INFO(fed.status.error().message);
      CHECK(fed.status.error().record == bad.record);
      CHECK(fed.status.error().message.find(bad.says) != std::string::npos);
    }
  }
}

TEST_CASE("arriving: an error inside a string names the records after the last early window, or the document") {
  const std::string good = weather_body(5);
  std::string bad = good;
  bad[good.find("\"summary\":\"", comma_after(good, 3)) + 11] = '\x01';  // a raw control byte in record 4
  json::Parser parser;
  PaddedBuffer body;
  std::pmr::vector<json::WeatherForecast> out;
  // Records 0 to 3 parsed early: the error is in record 4 or after it, from the ',' before it.
  const Fed early = feed(parser, body, bad, {comma_after(good, 3) + 2, bad.size()}, out, kWeatherArriving);
  CHECK(early.records_after_piece[0] == 4);
  REQUIRE_FALSE(early.status);
  INFO(early.status.error().message);
  CHECK(early.status.error().record == 4);
  CHECK(early.status.error().offset == comma_after(good, 3));
  CHECK(early.status.error().message.find("UNESCAPED_CHARS") != std::string::npos);
  // In record 0 no early window parses: the whole-body parse's error, about the document.
  std::string bad_first = good;
  bad_first[good.find("\"summary\":\"") + 11] = '\x01';
  const Fed whole = feed(parser, body, bad_first, {bad_first.size()}, out, kWeatherArriving);
  CHECK(whole.records_after_piece[0] == 0);
  REQUIRE_FALSE(whole.status);
  CHECK(whole.status.error().record == json::kNoRecord);
  CHECK(whole.status.error().message.find("UNESCAPED_CHARS") != std::string::npos);
}

}  // namespace
