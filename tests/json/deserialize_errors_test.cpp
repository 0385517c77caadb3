// tests json/src/deserialize.cpp: bad bodies and the errors that name the record, field and byte; bodies
// cut at every byte; NDJSON and record-span errors
#include "ringlab/json/deserialize.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory_resource>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deserialize_fixtures.hpp"

namespace json = ringlab::json;
using ringlab::base::PaddedBuffer;
using namespace ringlab::json::testing;

TEST_CASE("bad bodies: the error names the record, the field and the byte") {
  struct Row {
    std::string_view name;  // doctest 2.4.9 prints a const char* in INFO as a pointer
    Payload payload;
    std::string body;
    std::string_view message_start;  // the message begins with this
    std::size_t record;
    std::string_view field;
  };
  const std::string good = R"({"date":"2024-01-01","temperatureC":-6,"summary":"Freezing","temperatureF":22})";
  // A record's JSON with the first `from` in it replaced by `to`.
  const auto replacing = [](std::string record) {
    return [record = std::move(record)](std::string_view from, std::string_view to) {
      std::string text = record;
      const auto at = text.find(from);
      REQUIRE_MESSAGE(at != std::string::npos, from);
      text.replace(at, from.size(), to);
      return text;
    };
  };
  std::string repo;
  json::append_json(repo, json::make_repository(0));
  const auto with = replacing(repo);
  std::string github;
  json::append_json(github, json::make_github(0));
  const auto with_github = replacing(github);
  // std::string("[") + ..., not "[" + ...: GCC 12 at -O3 warns (-Wrestrict) on operator+(const char*, string).
  const Row rows[] = {
      {"string for an integer", Payload::weather,
       std::string("[") + good + R"(,{"date":"2024-01-02","temperatureC":"12","summary":"Cool","temperatureF":53}])",
       "record 1 field temperatureC: INCORRECT_TYPE", 1, "temperatureC"},
      {"fraction for an integer", Payload::weather,
       R"([{"date":"2024-01-01","temperatureC":1.5,"summary":"Cool","temperatureF":53}])",
       "record 0 field temperatureC: ", 0, "temperatureC"},
      {"integer beyond int32", Payload::weather,
       R"([{"date":"2024-01-01","temperatureC":3000000000,"summary":"Cool","temperatureF":53}])",
       "record 0 field temperatureC: NUMBER_OUT_OF_RANGE", 0, "temperatureC"},
      {"null for a string", Payload::weather,
       R"([{"date":null,"temperatureC":1,"summary":"Cool","temperatureF":53}])", "record 0 field date: INCORRECT_TYPE",
       0, "date"},
      {"number for a string", Payload::weather,
       std::string("[") + good + "," + good + R"(,{"date":"2024-01-02","temperatureC":1,"summary":7,"temperatureF":53}])",
       "record 2 field summary: INCORRECT_TYPE", 2, "summary"},
      {"missing field", Payload::weather, R"([{"date":"2024-01-01","temperatureC":1,"temperatureF":53}])",
       "record 0 field summary: NO_SUCH_FIELD", 0, "summary"},
      {"invalid escape", Payload::weather,
       R"([{"date":"2024-01-01","temperatureC":1,"summary":"bad \q","temperatureF":53}])",
       "record 0 field summary: STRING_ERROR", 0, "summary"},
      {"lone surrogate", Payload::weather,
       R"([{"date":"2024-01-01","temperatureC":1,"summary":"\udc00","temperatureF":53}])",
       "record 0 field summary: STRING_ERROR", 0, "summary"},
      {"record not an object", Payload::weather, std::string("[") + good + ",5]", "record 1: INCORRECT_TYPE", 1, ""},
      {"not an array", Payload::weather, good, "document: INCORRECT_TYPE", json::kNoRecord, ""},
      {"truncated inside a record", Payload::weather, std::string("[") + good + R"(,{"date":"2024-01-02","temperatureC":1)",
       "record 1: INCOMPLETE_ARRAY_OR_OBJECT", 1, ""},
      {"truncated after a record", Payload::weather, std::string("[") + good + ",", "record 1: INCOMPLETE_ARRAY_OR_OBJECT", 1, ""},
      {"garbage after the array", Payload::weather, std::string("[") + good + "] x", "document: ", json::kNoRecord, ""},
      {"a second document after the array", Payload::weather, std::string("[") + good + "] [1]",
       "document: TRAILING_CONTENT", json::kNoRecord, ""},
      {"empty body", Payload::weather, "", "document: EMPTY", json::kNoRecord, ""},
      {"unclosed string", Payload::weather, R"([{"date":"2024-01-01)", "record 0: UNCLOSED_STRING", 0, ""},
      {"nested field of the wrong type", Payload::repos, std::string("[") + with(R"("login":")", R"("login":1,"x":")") + "]",
       "record 0 field owner.login: INCORRECT_TYPE", 0, "owner.login"},
      {"owner not an object", Payload::repos, std::string("[") + repo + "," + with(R"("owner":{)", R"("owner":[],"x":{)") + "]",
       "record 1 field owner: INCORRECT_TYPE", 1, "owner"},
      {"topic not a string", Payload::repos, std::string("[") + with(R"("topics":[)", R"("topics":["a",2,)") + "]",
       "record 0 field topics[1]: INCORRECT_TYPE", 0, "topics[1]"},
      {"license field missing", Payload::repos,
       std::string("[") + with(R"("license":{)", R"("license":{"key":"k","name":"n"},"x":{)") + "]",
       "record 0 field license.spdx_id: NO_SUCH_FIELD", 0, "license.spdx_id"},
      {"number for a nullable string", Payload::repos, std::string("[") + with(R"("homepage":)", R"("homepage":5,"x":)") + "]",
       "record 0 field homepage: INCORRECT_TYPE", 0, "homepage"},
      {"missing top-level field", Payload::repos, std::string("[") + with(R"("score":)", R"("x":)") + "]",
       "record 0 field score: NO_SUCH_FIELD", 0, "score"},
      {"github: string for an integer", Payload::github,
       std::string("[") + github + "," + with_github(R"("stargazers_count":)", R"("stargazers_count":"7","x":)") + "]",
       "record 1 field stargazers_count: INCORRECT_TYPE", 1, "stargazers_count"},
      {"github: number for a nullable string", Payload::github,
       std::string("[") + with_github(R"("description":)", R"("description":5,"x":)") + "]",
       "record 0 field description: INCORRECT_TYPE", 0, "description"},
      {"github: string for a bool", Payload::github,
       std::string("[") + github + "," + github + "," + with_github(R"("archived":)", R"("archived":"no","x":)") + "]",
       "record 2 field archived: INCORRECT_TYPE", 2, "archived"},
      {"github: missing field", Payload::github, std::string("[") + with_github(R"("visibility":)", R"("x":)") + "]",
       "record 0 field visibility: NO_SUCH_FIELD", 0, "visibility"},
  };
  json::Parser parser;
  for (const Row& row : rows) {
    INFO(row.name << "\nbody: " << row.body);
    const simdjson::padded_string body(row.body);
    const Parsed results[] = {owning_array(parser, row.payload, body), views_array(parser, row.payload, body)};
    for (const Parsed& parsed : results) {
      REQUIRE_FALSE(parsed.status.has_value());
      const json::Error& error = parsed.status.error();
      INFO("message: " << error.message);
      CHECK(error.message.starts_with(row.message_start));
      CHECK(error.record == row.record);
      CHECK(error.field == row.field);
      CHECK(error.offset <= body.size());
    }
  }
}

TEST_CASE("the byte offset of a type error points at the value") {
  json::Parser parser;
  const std::string text = R"([{"date":"2024-01-01","temperatureC":"12","summary":"Cool","temperatureF":53}])";
  const simdjson::padded_string body(text);
  std::pmr::vector<json::WeatherView> views;
  const auto status = json::parse_array(parser, body, views);
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().offset == text.find("\"12\""));
  CHECK(status.error().message.ends_with(" at byte " + std::to_string(text.find("\"12\""))));
}

TEST_CASE("a missing field's offset is its record's start, in arrays, lines and record spans") {
  // The array loop does not keep each record's position; the error finds it again (parse_errors.hpp).
  json::Parser parser;
  const std::string good = R"({"date":"2024-01-01","temperatureC":1,"summary":"Cool","temperatureF":33})";
  const std::string bad = R"({"date":"2024-01-02","summary":"Cool","temperatureF":33})";
  const std::string text = " [ " + good + " ,\n" + good + ",  " + bad + " ] ";
  const std::size_t start = text.find(bad);
  const simdjson::padded_string body(text);
  std::pmr::vector<json::WeatherView> views;
  std::pmr::vector<json::WeatherForecast> owning;
  for (const auto& status : {json::parse_array(parser, body, views), json::parse_array(parser, body, owning)}) {
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().record == 2);
    CHECK(status.error().field == "temperatureC");
    CHECK(status.error().offset == start);
    CHECK(status.error().message.ends_with(" at byte " + std::to_string(start)));
  }
  const std::string lines = good + "\n" + bad + "\n";
  const simdjson::padded_string line_body(lines);
  const auto status = json::parse_ndjson(parser, line_body, views, 1 << 16);
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().offset == lines.find(bad));
}

TEST_CASE("records whose keys leave the usual order at any member read the same as in order") {
  // read_members reads keys in the table's order as constants, then falls back to the general match at
  // the first member off that order: every point of leaving it gives the same record.
  json::Parser parser;
  const std::string members[] = {R"("date":"2024-01-01")", R"("temperatureC":7)", R"("summary":"Mild")",
                                 R"("temperatureF":44)"};
  std::size_t order[] = {0, 1, 2, 3};
  std::size_t orders = 0;
  do {
    std::string record = "{";
    for (std::size_t i = 0; i < 4; ++i) record += (i ? "," : "") + members[order[i]];
    record += "}";
    // The same record after a temperatureC given first with another value (the last one counts) and
    // followed by an unknown key (skipped).
    const std::string text = std::string("[") + record + R"(,{"temperatureC":99,)" +
                             record.substr(1, record.size() - 2) + R"(,"extra":[1,{"a":2}]}])";
    const simdjson::padded_string body(text);
    std::pmr::vector<json::WeatherView> views;
    const auto status = json::parse_array(parser, body, views);
    REQUIRE_MESSAGE(status.has_value(), text);
    REQUIRE(views.size() == 2);
    for (const json::WeatherView& view : views) {
      CHECK(view.date.raw == "2024-01-01");
      CHECK(view.temperature_c == 7);
      CHECK(view.summary.raw == "Mild");
      CHECK(view.temperature_f == 44);
    }
    ++orders;
  } while (std::next_permutation(std::begin(order), std::end(order)));
  CHECK(orders == 24);
}

TEST_CASE("a body cut at any byte is an error, never a crash or a silent success") {
  json::Parser parser;
  for (const Payload p : kPayloads) {
    const std::string whole = array_body(p, p == Payload::repos ? 1 : 3);
    for (std::size_t cut = 0; cut < whole.size(); ++cut) {
      INFO(name_of(p) << " cut at " << cut);
      const simdjson::padded_string body(std::string_view(whole).substr(0, cut));
      CHECK_FALSE(owning_array(parser, p, body).status.has_value());
      CHECK_FALSE(views_array(parser, p, body).status.has_value());
    }
  }
}

TEST_CASE("NDJSON: a cut last line, a window too small and a non-object line are errors naming the record") {
  json::Parser parser;
  const std::string lines = ndjson_body(Payload::repos, 3);
  SUBCASE("the body ends inside the last record") {
    const simdjson::padded_string body(std::string_view(lines).substr(0, lines.size() - 20));
    for (const Parsed& parsed : {owning_ndjson(parser, Payload::repos, body), views_ndjson(parser, Payload::repos, body)}) {
      REQUIRE_FALSE(parsed.status.has_value());
      INFO(parsed.status.error().message);
      CHECK(parsed.status.error().record == 2);
      CHECK(parsed.status.error().message.starts_with("record 2: INCOMPLETE_ARRAY_OR_OBJECT"));
    }
  }
  SUBCASE("a record longer than the window") {
    const simdjson::padded_string body(lines);
    const Parsed parsed = owning_ndjson(parser, Payload::repos, body, 512);
    REQUIRE_FALSE(parsed.status.has_value());
    INFO(parsed.status.error().message);
    CHECK(parsed.status.error().message.find("CAPACITY") != std::string::npos);
    CHECK(parsed.status.error().record == 0);
  }
  SUBCASE("a line that is not an object") {
    const simdjson::padded_string body(lines + "[1,2]\n");
    const Parsed parsed = views_ndjson(parser, Payload::repos, body);
    REQUIRE_FALSE(parsed.status.has_value());
    CHECK(parsed.status.error().message.starts_with("record 3: INCORRECT_TYPE"));
  }
  SUBCASE("a wrong field names record and field") {
    std::string bad = ndjson_body(Payload::weather, 2);
    bad.replace(bad.rfind("\"summary\":"), 10, "\"summary\":1,\"x\":");
    const simdjson::padded_string body(bad);
    const Parsed parsed = owning_ndjson(parser, Payload::weather, body);
    REQUIRE_FALSE(parsed.status.has_value());
    CHECK(parsed.status.error().message.starts_with("record 1 field summary: INCORRECT_TYPE"));
  }
}

TEST_CASE("record parses check the span and what it holds") {
  json::Parser parser;
  const std::string text = array_body(Payload::weather, 3);
  const simdjson::padded_string body(text);
  json::WeatherForecast record;
  SUBCASE("a span beyond the body") {
    const auto status = json::parse_record(parser, body, json::RecordSpan{4, text.size() - 2, 10}, record);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().message.starts_with("record 4: OUT_OF_BOUNDS"));
  }
  SUBCASE("a span holding two records") {
    const std::size_t second_end = text.find("},{", text.find("},{") + 1) + 1;
    const auto status = json::parse_record(parser, body, json::RecordSpan{0, 1, second_end - 1}, record);
    REQUIRE_FALSE(status.has_value());
    INFO(status.error().message);
    CHECK(status.error().record == 0);
  }
  SUBCASE("error offsets count from the start of the body") {
    std::string bad = text;
    const std::size_t value = bad.rfind("\"summary\":") + 10;
    bad.replace(value, 1, "7,\"x\":\"");
    const simdjson::padded_string bad_body(bad);
    json::RecordSplitter splitter;
    std::optional<json::RecordSpan> last;
    while (auto span = splitter.next(bad)) {
      if (!*span) break;
      last = **span;
    }
    REQUIRE(last.has_value());
    json::WeatherView view;
    const auto status = json::parse_record(parser, bad_body, *last, view);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().record == 2);
    CHECK(status.error().field == "summary");
    CHECK(status.error().offset == value);
  }
}
