// The profiles payload (json/profiles.hpp) through every reader a row of the jos suite uses, without a
// server: json/'s simdjson parse (owning and views), nlohmann, rapidjson and token_loop (jos's Version 8 loop). Each reads the
// generator's bodies into his 3-field DTO with the generator's three fields and checksum_profiles, skips the 18
// other keys (tags, floats, bools, escaped text), and turns a record missing one of the three or holding one
// of another type into an error value naming the record and the field. The rows run against the server in
// checksums_test.cpp; bodies cut at every byte in streaming_sink_test.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "json_libraries.hpp"
#include "ringlab/json/checksum.hpp"
#include "ringlab/json/deserialize.hpp"
#include "ringlab/json/profiles.hpp"
#include "../support/generated_bodies.hpp"

namespace ringlab::strategies::detail {
namespace {

using Dtos = std::pmr::vector<json::ProfileStars>;

base::PaddedBuffer padded(std::string_view text) {
  base::PaddedBuffer buffer;
  buffer.append(text);
  return buffer;
}

struct Reader {
  const char* name;
  std::function<json::Status(std::string_view, Dtos&)> parse;
};

// Every reader of the jos suite's rows, over text (the in-situ ones get a padded copy they may overwrite).
std::vector<Reader> readers() {
  return {
      {"json/ owning",
       [](std::string_view body, Dtos& out) {
         json::Parser parser;
         const base::PaddedBuffer buffer = padded(body);
         return json::parse_array(parser, json::padded_view(buffer), out);
       }},
      {"json/ views",
       [](std::string_view body, Dtos& out) -> json::Status {
         json::Parser parser;
         const base::PaddedBuffer buffer = padded(body);
         std::pmr::vector<json::ProfileStarsView> views;
         if (auto status = json::parse_array(parser, buffer, views); !status) return status;
         out.clear();
         for (const json::ProfileStarsView& view : views) {
           REQUIRE(view.name.plain().has_value());  // the generator's names and urls have no escapes
           REQUIRE(view.url.plain().has_value());
           json::ProfileStars& dto = out.emplace_back();
           dto.name.assign(*view.name.plain());
           dto.url.assign(*view.url.plain());
           dto.stars = view.stars;
         }
         return {};
       }},
      {"nlohmann", [](std::string_view body, Dtos& out) { return nlohmann_parse(body, out); }},
      {"rapidjson",
       [](std::string_view body, Dtos& out) {
         base::PaddedBuffer buffer = padded(body);
         return rapidjson_parse(buffer, out);
       }},
      {"token_loop",
       [](std::string_view body, Dtos& out) {
         base::PaddedBuffer buffer = padded(body);
         return token_loop_parse(buffer, out);
       }},
  };
}

uint64_t checksum_of(const Dtos& dtos) { return json::checksum(std::span<const json::ProfileStars>(dtos)); }

TEST_CASE("profile records: 21 keys in his order, a tags array of seven strings, two floats, escapes in about") {
  const json::ProfileRecord first = json::make_profile(0);
  CHECK(first == json::make_profile(0));  // the index alone decides
  CHECK_FALSE(first == json::make_profile(1));
  json::ProfileRecord reused = json::make_profile(5);
  json::fill_profile(0, reused);
  CHECK(reused == first);  // fill overwrites every field
  std::string text;
  json::append_json(text, first);
  std::size_t at = 0;
  for (const std::string_view key :
       {"stars", "name", "url", "_id", "index", "guid", "isActive", "balance", "picture", "age", "eyeColor", "gender",
        "company", "email", "phone", "address", "about", "registered", "latitude", "longitude", "tags"}) {
    INFO(key);
    const std::size_t found = text.find("\"" + std::string(key) + "\":", at);
    REQUIRE(found != std::string::npos);  // present, and after the key before it
    at = found;
  }
  CHECK(first.tags.size() == 7);
  CHECK(text.find("\\r\\n\"") != std::string::npos);  // "about" ends in an escaped CR LF, as in his files
  CHECK(first.id.size() == 24);
  // Coordinates with six decimals at most, written in their shortest form, so read back exactly.
  for (std::size_t i = 0; i < 50; ++i) {
    const json::ProfileRecord record = json::make_profile(i);
    CHECK(record.latitude >= -90.0);
    CHECK(record.latitude < 90.0);
    CHECK(record.longitude >= -180.0);
    CHECK(record.longitude < 180.0);
  }
  std::string body;
  json::append_profiles_json(body, 2);
  CHECK(body.front() == '[');
  CHECK(body.back() == ']');
  std::string lines;
  json::append_profiles_ndjson(lines, 2);
  CHECK(std::count(lines.begin(), lines.end(), '\n') == 2);
}

TEST_CASE("every profiles reader gives the generator's three fields and checksum_profiles, the other 18 keys skipped") {
  for (const Reader& reader : readers()) {
    for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{10}, std::size_t{300}}) {
      INFO(reader.name << ", " << count << " records");
      Dtos dtos;
      const auto status = reader.parse(ringlab::testing::generated_body(Payload::profiles, count), dtos);
      REQUIRE_MESSAGE(status, (status ? "" : status.error().message));
      REQUIRE(dtos.size() == count);
      for (std::size_t i = 0; i < count; ++i) {
        const json::ProfileRecord record = json::make_profile(i);
        CHECK(std::string_view(dtos[i].name) == record.name);
        CHECK(std::string_view(dtos[i].url) == record.url);
        CHECK(dtos[i].stars == record.stars);
      }
      CHECK(checksum_of(dtos) == json::checksum_profiles(count));
    }
  }
  CHECK(json::checksum_profiles(10) != json::checksum_profiles(9));
  CHECK(json::checksum_profiles(10) != json::checksum_github_three_fields(10));
}

TEST_CASE("a shorter profiles body after a longer one leaves no stale DTOs; keys in any order read the same") {
  const std::string reordered =
      R"([{"tags":["a",{"x":[1,2.5]}],"url":"https://github.com/u","latitude":-5.63,"stars":7,"name":"N","about":"\"q\"\r\n"}])";
  for (const Reader& reader : readers()) {
    INFO(reader.name);
    Dtos dtos;
    REQUIRE(reader.parse(ringlab::testing::generated_body(Payload::profiles, 20), dtos));
    const auto status = reader.parse(reordered, dtos);
    REQUIRE_MESSAGE(status, (status ? "" : status.error().message));
    REQUIRE(dtos.size() == 1);
    CHECK(std::string_view(dtos[0].name) == "N");
    CHECK(std::string_view(dtos[0].url) == "https://github.com/u");
    CHECK(dtos[0].stars == 7);
  }
}

TEST_CASE("bad profiles bodies are error values naming the record and the field, for every reader") {
  std::string record;
  json::append_json(record, json::make_profile(0));
  const auto with = [&record](std::string_view from, std::string_view to) {
    std::string changed = record;
    const std::size_t at = changed.find(from);
    REQUIRE(at != std::string::npos);
    changed.replace(at, from.size(), to);
    return "[" + record + "," + changed + "]";  // the second record is the bad one
  };
  struct Bad {
    const char* name;
    std::string body;
    std::string_view field;  // what the error must name
  };
  const Bad bads[] = {
      {"stars missing", with(R"("stars":)", R"("stairs":)"), "stars"},
      {"name missing", with(R"("name":)", R"("nom":)"), "name"},
      {"url missing", with(R"("url":)", R"("uri":)"), "url"},
      {"stars a string", with(R"("stars":)", R"("stars":"7","x":)"), "stars"},
      {"stars a float", with(R"("stars":)", R"("stars":7.5,"x":)"), "stars"},
      {"name a number", with(R"("name":)", R"("name":1,"x":)"), "name"},
      {"url null", with(R"("url":)", R"("url":null,"x":)"), "url"},
      {"url an array", with(R"("url":)", R"("url":["u"],"x":)"), "url"},
  };
  for (const Reader& reader : readers()) {
    for (const Bad& bad : bads) {
      INFO(reader.name << ": " << bad.name);
      Dtos dtos;
      const auto status = reader.parse(bad.body, dtos);
      REQUIRE_FALSE(status);
      INFO(status.error().message);
      CHECK(status.error().record == 1);
      CHECK(status.error().message.find(bad.field) != std::string::npos);
    }
    for (const std::string_view body : {std::string_view(R"({"name":"n"})"), std::string_view(R"(["n"])"),
                                        std::string_view("[{\"stars\":1,"), std::string_view("")}) {
      INFO(reader.name << ": " << body);
      Dtos dtos;
      CHECK_FALSE(reader.parse(body, dtos));
    }
  }
}

TEST_CASE("token_loop refuses a deeply nested value instead of recursing into it") {
  std::string body = R"([{"stars":1,"name":"n","url":"u","tags":)";
  body.append(100'000, '[');
  Dtos dtos;
  base::PaddedBuffer buffer = padded(body);
  const auto status = token_loop_parse(buffer, dtos);
  REQUIRE_FALSE(status);
  CHECK(status.error().message.find("DEPTH") != std::string::npos);
}

}  // namespace
}  // namespace ringlab::strategies::detail
