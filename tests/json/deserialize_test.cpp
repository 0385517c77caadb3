// tests json/src/deserialize.cpp
#include "ringlab/json/deserialize.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory_resource>
#include <string>
#include <vector>

#include "ringlab/json/checksum.hpp"
#include "ringlab/json/generate.hpp"
#include "ringlab/json/serialize.hpp"
#include "ringlab/json/unescape.hpp"
#include "../support/json_counting_resource.hpp"

namespace json = ringlab::json;
using ringlab::base::PaddedBuffer;

namespace {

enum class Payload { weather, repos, github };
std::string_view name_of(Payload p) {
  return p == Payload::weather ? "weather" : p == Payload::repos ? "repos" : "github";
}

std::string array_body(Payload p, std::size_t n) {
  std::string out;
  if (p == Payload::weather) json::append_weather_json(out, n);
  if (p == Payload::repos) json::append_repos_json(out, n);
  if (p == Payload::github) json::append_github_json(out, n);
  return out;
}
std::string ndjson_body(Payload p, std::size_t n) {
  std::string out;
  if (p == Payload::weather) json::append_weather_ndjson(out, n);
  if (p == Payload::repos) json::append_repos_ndjson(out, n);
  if (p == Payload::github) json::append_github_ndjson(out, n);
  return out;
}
uint64_t truth(Payload p, std::size_t n) {
  if (p == Payload::github) return json::checksum_github(n);
  return p == Payload::weather ? json::checksum_weather(n) : json::checksum_repos(n);
}

std::string describe(const json::Status& status) { return status ? std::string("ok") : status.error().message; }

// Every way of parsing a body, each returning the checksum of what it read (or the error).
struct Parsed {
  json::Status status;
  uint64_t checksum = 0;
};

// Parses into a fresh vector of the record type that `parse_weather` (or `parse_repos`, `parse_github`)
// fills.
template <class WeatherRecord, class RepoRecord, class GithubRecord>
Parsed parsed_into(Payload p, auto parse_weather, auto parse_repos, auto parse_github) {
  if (p == Payload::weather) {
    std::pmr::vector<WeatherRecord> out;
    auto s = parse_weather(out);
    return {s, json::checksum(out)};
  }
  if (p == Payload::github) {
    std::pmr::vector<GithubRecord> out;
    auto s = parse_github(out);
    return {s, json::checksum(out)};
  }
  std::pmr::vector<RepoRecord> out;
  auto s = parse_repos(out);
  return {s, json::checksum(out)};
}

Parsed owning_array(json::Parser& parser, Payload p, const simdjson::padded_string& body) {
  return parsed_into<json::WeatherForecast, json::Repository, json::GithubRepository>(
      p, [&](auto& out) { return json::parse_weather(parser, body, out); },
      [&](auto& out) { return json::parse_repos(parser, body, out); },
      [&](auto& out) { return json::parse_github(parser, body, out); });
}

Parsed views_array(json::Parser& parser, Payload p, const simdjson::padded_string& body) {
  return parsed_into<json::WeatherView, json::RepositoryView, json::GithubRepositoryView>(
      p, [&](auto& out) { return json::parse_weather_views(parser, body, out); },
      [&](auto& out) { return json::parse_repos_views(parser, body, out); },
      [&](auto& out) { return json::parse_github_views(parser, body, out); });
}

Parsed owning_ndjson(json::Parser& parser, Payload p, const simdjson::padded_string& body,
                     std::size_t window = json::kNdjsonWindowBytes) {
  return parsed_into<json::WeatherForecast, json::Repository, json::GithubRepository>(
      p, [&](auto& out) { return json::parse_weather_ndjson(parser, body, out, window); },
      [&](auto& out) { return json::parse_repos_ndjson(parser, body, out, window); },
      [&](auto& out) { return json::parse_github_ndjson(parser, body, out, window); });
}

Parsed views_ndjson(json::Parser& parser, Payload p, const simdjson::padded_string& body,
                    std::size_t window = json::kNdjsonWindowBytes) {
  return parsed_into<json::WeatherView, json::RepositoryView, json::GithubRepositoryView>(
      p, [&](auto& out) { return json::parse_weather_ndjson_views(parser, body, out, window); },
      [&](auto& out) { return json::parse_repos_ndjson_views(parser, body, out, window); },
      [&](auto& out) { return json::parse_github_ndjson_views(parser, body, out, window); });
}

// The streaming way: the splitter finds records, each is parsed on its own (owning or view).
Parsed by_record(json::Parser& parser, Payload p, const simdjson::padded_string& body, bool views) {
  json::RecordSplitter splitter;
  json::Checksum sum;
  json::WeatherForecast weather;
  json::WeatherView weather_view;
  json::Repository repo;
  json::RepositoryView repo_view;
  json::GithubRepository github;
  json::GithubRepositoryView github_view;
  while (true) {
    auto record = splitter.next(body);
    if (!record) return {std::unexpected(record.error())};
    if (!*record) break;
    json::Status s;
    if (p == Payload::weather && !views) {
      s = json::parse_weather_record(parser, body, **record, weather);
      if (s) sum.add(weather);
    } else if (p == Payload::weather) {
      s = json::parse_weather_record_view(parser, body, **record, weather_view);
      if (s) sum.add(weather_view);
    } else if (p == Payload::github && !views) {
      s = json::parse_github_record(parser, body, **record, github);
      if (s) sum.add(github);
    } else if (p == Payload::github) {
      s = json::parse_github_record_view(parser, body, **record, github_view);
      if (s) sum.add(github_view);
    } else if (!views) {
      s = json::parse_repository_record(parser, body, **record, repo);
      if (s) sum.add(repo);
    } else {
      s = json::parse_repository_record_view(parser, body, **record, repo_view);
      if (s) sum.add(repo_view);
    }
    if (!s) return {s};
  }
  return {splitter.finish(body), sum.value()};
}

// Rewrites a JSON value with every object's keys in another order and unknown keys of every kind
// added; arrays keep their order. Strings are written back by simdjson's own writer, which leaves
// non-ASCII as raw UTF-8: the parsers then meet both spellings of the same text.
std::string shuffled(simdjson::dom::element value, json::SplitMix64& rng) {
  if (value.type() == simdjson::dom::element_type::ARRAY) {
    std::string out = "[";
    bool first = true;
    for (simdjson::dom::element item : value.get_array()) {
      if (!first) out += ",";
      first = false;
      out += shuffled(item, rng);
    }
    return out + "]";
  }
  if (value.type() != simdjson::dom::element_type::OBJECT) return simdjson::minify(value);
  std::vector<std::string> members;
  for (simdjson::dom::key_value_pair member : value.get_object()) {
    std::string text;
    json::append_json_string(text, member.key);
    members.push_back(text + ":" + shuffled(member.value, rng));
  }
  static const char* const kUnknown[] = {
      R"("unknown_number":-12.5e3)",  R"("unknown_string":"a \"quoted\" \u00e9 }")",
      R"("unknown_object":{"date":"not this one","x":[1,{"y":null}]})",
      R"("unknown_array":[{"temperatureC":"no"},[],"]"])", R"("unknown_null":null)", R"("unknown_bool":true)",
      R"("d\u0061te":"an escaped key is another key")"};
  for (const char* unknown : kUnknown) {
    if (rng.chance(1, 2)) members.emplace_back(unknown);
  }
  for (std::size_t i = members.size(); i > 1; --i) std::swap(members[i - 1], members[rng.below(i)]);
  std::string out = "{";
  for (std::size_t i = 0; i < members.size(); ++i) out += (i ? ", " : " ") + members[i];
  return out + " }";
}

std::string shuffled_body(Payload p, std::size_t n, uint64_t seed) {
  simdjson::dom::parser dom;
  const simdjson::padded_string canonical(array_body(p, n));
  json::SplitMix64 rng(seed);
  return shuffled(dom.parse(canonical).value(), rng);
}

const std::size_t kSizes[] = {0, 1, 10, 1000};
const Payload kPayloads[] = {Payload::weather, Payload::repos, Payload::github};

}  // namespace

TEST_CASE("generate, serialize, parse every way: the checksum equals the generator's") {
  json::Parser parser;
  for (const Payload p : kPayloads) {
    for (const std::size_t n : kSizes) {
      INFO(name_of(p) << " n = " << n);
      const simdjson::padded_string body(array_body(p, n));
      const simdjson::padded_string lines(ndjson_body(p, n));
      const uint64_t expected = truth(p, n);
      const Parsed results[] = {owning_array(parser, p, body),          views_array(parser, p, body),
                                owning_ndjson(parser, p, lines),        views_ndjson(parser, p, lines),
                                by_record(parser, p, body, false),      by_record(parser, p, body, true)};
      const std::string_view ways[] = {"owning", "views", "owning NDJSON", "views NDJSON", "owning by record",
                                  "views by record"};
      for (std::size_t w = 0; w < std::size(results); ++w) {
        INFO(ways[w] << ": " << describe(results[w].status));
        REQUIRE(results[w].status.has_value());
        CHECK(results[w].checksum == expected);
      }
    }
  }
}

TEST_CASE("owning records read back equal to the generated ones") {
  json::Parser parser;
  const simdjson::padded_string weather_text(array_body(Payload::weather, 50));
  const simdjson::padded_string repos_text(array_body(Payload::repos, 50));
  std::pmr::vector<json::WeatherForecast> weather;
  std::pmr::vector<json::Repository> repos;
  REQUIRE(json::parse_weather(parser, weather_text, weather).has_value());
  REQUIRE(json::parse_repos(parser, repos_text, repos).has_value());
  REQUIRE(weather.size() == 50);
  REQUIRE(repos.size() == 50);
  for (std::size_t i = 0; i < 50; ++i) {
    INFO("record " << i);
    CHECK(weather[i] == json::make_weather(i));
    CHECK(repos[i] == json::make_repository(i));
  }
}

TEST_CASE("github records read back equal to the generated ones, nulls and escapes included") {
  json::Parser parser;
  const simdjson::padded_string body(array_body(Payload::github, 200));
  std::pmr::vector<json::GithubRepository> owning;
  std::pmr::vector<json::GithubRepositoryView> views;
  REQUIRE(json::parse_github(parser, body, owning).has_value());
  REQUIRE(json::parse_github_views(parser, body, views).has_value());
  REQUIRE(owning.size() == 200);
  REQUIRE(views.size() == 200);
  std::size_t null_descriptions = 0;
  std::size_t escaped = 0;
  std::string text;
  for (std::size_t i = 0; i < owning.size(); ++i) {
    INFO("record " << i);
    const json::GithubRepository expected = json::make_github(i);
    CHECK(owning[i] == expected);
    CHECK(views[i].stargazers_count == expected.stargazers_count);
    CHECK(views[i].name.raw == std::string_view(expected.name));
    CHECK(views[i].visibility.raw == std::string_view(expected.visibility));
    REQUIRE(views[i].description.has_value() == expected.description.has_value());
    if (!expected.description) {
      ++null_descriptions;
      continue;
    }
    REQUIRE(json::unescape(*views[i].description, text));
    CHECK(text == std::string_view(*expected.description));
    escaped += views[i].description->has_escapes;
  }
  CHECK(null_descriptions > 0);
  CHECK(escaped > 0);
}

TEST_CASE("three fields: only stargazers_count, name and url are read, the 19 other keys skipped") {
  json::Parser parser;
  for (const std::size_t n : kSizes) {
    INFO("n = " << n);
    const simdjson::padded_string body(array_body(Payload::github, n));
    std::pmr::vector<json::GithubStars> owning;
    std::pmr::vector<json::GithubStarsView> views;
    REQUIRE(json::parse_github_three_fields(parser, body, owning).has_value());
    REQUIRE(json::parse_github_three_fields_views(parser, body, views).has_value());
    REQUIRE(owning.size() == n);
    CHECK(json::checksum(owning) == json::checksum_github_three_fields(n));
    CHECK(json::checksum(views) == json::checksum_github_three_fields(n));
    for (std::size_t i = 0; i < std::min<std::size_t>(n, 50); ++i) {
      const json::GithubRepository expected = json::make_github(i);
      CHECK(owning[i].stars == expected.stargazers_count);
      CHECK(owning[i].name == expected.name);
      CHECK(owning[i].url == expected.url);
    }
  }
  // The full checksum covers more than the three fields: the two must differ.
  CHECK(json::checksum_github_three_fields(10) != json::checksum_github(10));
  SUBCASE("keys in any order, unknown keys of any kind") {
    const simdjson::padded_string body(shuffled_body(Payload::github, 30, 7));
    std::pmr::vector<json::GithubStars> owning;
    REQUIRE(json::parse_github_three_fields(parser, body, owning).has_value());
    CHECK(json::checksum(owning) == json::checksum_github_three_fields(30));
  }
  SUBCASE("a skipped field of any type is not an error; a missing or wrong one of the three is") {
    std::string record;
    json::append_json(record, json::make_github(0));
    std::string other_types = record;
    other_types.replace(other_types.find(R"("size":)"), 7, R"("size":"not a number","x":)");
    const simdjson::padded_string skipped(std::string("[") + other_types + "]");
    std::pmr::vector<json::GithubStars> owning;
    CHECK(json::parse_github_three_fields(parser, skipped, owning).has_value());
    std::pmr::vector<json::GithubRepository> full;
    CHECK_FALSE(json::parse_github(parser, skipped, full).has_value());

    std::string no_url = record;
    no_url.replace(no_url.find(R"("url":)"), 6, R"("x":)");
    const simdjson::padded_string missing(std::string("[") + record + "," + no_url + "]");
    const auto status = json::parse_github_three_fields(parser, missing, owning);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().record == 1);
    CHECK(status.error().field == "url");
    CHECK(status.error().message.starts_with("record 1 field url: NO_SUCH_FIELD"));

    std::string bad_stars = record;
    bad_stars.replace(bad_stars.find(R"("stargazers_count":)"), 19, R"("stargazers_count":true,"x":)");
    const simdjson::padded_string wrong(std::string("[") + bad_stars + "]");
    std::pmr::vector<json::GithubStarsView> views;
    const auto view_status = json::parse_github_three_fields_views(parser, wrong, views);
    REQUIRE_FALSE(view_status.has_value());
    CHECK(view_status.error().field == "stargazers_count");
    CHECK(view_status.error().message.starts_with("record 0 field stargazers_count: INCORRECT_TYPE"));
  }
}

TEST_CASE("views decode to the owning text, and escaped ones say so") {
  json::Parser parser;
  const simdjson::padded_string body(array_body(Payload::repos, 200));
  std::pmr::vector<json::RepositoryView> views;
  REQUIRE(json::parse_repos_views(parser, body, views).has_value());
  std::size_t escaped = 0;
  std::string text;
  for (std::size_t i = 0; i < views.size(); ++i) {
    const json::Repository expected = json::make_repository(i);
    INFO("record " << i);
    REQUIRE(json::unescape(views[i].description, text));
    CHECK(text == std::string_view(expected.description));
    escaped += views[i].description.has_escapes;
    // Views point into the body, not into the parser.
    CHECK(views[i].description.raw.data() >= body.data());
    CHECK(views[i].description.raw.data() < body.data() + body.size());
    std::vector<std::string> topics;
    for (const json::JsonStringView& topic : views[i].topics) topics.emplace_back(topic.raw);
    CHECK(topics == std::vector<std::string>(expected.topics.begin(), expected.topics.end()));
    CHECK(views[i].license.has_value() == expected.license.has_value());
    if (expected.license) {
      REQUIRE(json::unescape(views[i].license->name, text));
      CHECK(text == std::string_view(expected.license->name));
    }
  }
  CHECK(escaped > 0);
}

TEST_CASE("views stay valid when the parser goes on to another body") {
  json::Parser parser;
  const simdjson::padded_string first(array_body(Payload::repos, 20));
  const simdjson::padded_string second(array_body(Payload::weather, 500));
  std::pmr::vector<json::RepositoryView> views;
  std::pmr::vector<json::WeatherView> others;
  REQUIRE(json::parse_repos_views(parser, first, views).has_value());
  REQUIRE(json::parse_weather_views(parser, second, others).has_value());
  CHECK(json::checksum(views) == json::checksum_repos(20));
}

TEST_CASE("keys in any order and unknown keys of any kind read the same records") {
  json::Parser parser;
  for (const Payload p : kPayloads) {
    for (const uint64_t seed : {1u, 2u, 3u}) {
      INFO(name_of(p) << " seed " << seed);
      const simdjson::padded_string body(shuffled_body(p, 30, seed));
      const Parsed owning = owning_array(parser, p, body);
      const Parsed views = views_array(parser, p, body);
      const Parsed records = by_record(parser, p, body, true);
      INFO("owning: " << describe(owning.status) << " views: " << describe(views.status)
                      << " by record: " << describe(records.status));
      REQUIRE(owning.status.has_value());
      REQUIRE(views.status.has_value());
      REQUIRE(records.status.has_value());
      CHECK(owning.checksum == truth(p, 30));
      CHECK(views.checksum == truth(p, 30));
      CHECK(records.checksum == truth(p, 30));
    }
  }
}

TEST_CASE("escapes and \\u sequences are decoded in owning records and validated in views") {
  json::Parser parser;
  const simdjson::padded_string body(std::string(
      R"([{"date":"2024\u002d01-01","temperatureC":-6,"summary":"Fr\u0065ez\"ing\\ \ud83d\ude80 caf\u00E9","temperatureF":22},)"
      R"({"date":"2024-01-02","temperatureC":43,"summary":"tab\tnew\nline\/","temperatureF":109}])"));
  std::pmr::vector<json::WeatherForecast> owning;
  std::pmr::vector<json::WeatherView> views;
  REQUIRE(json::parse_weather(parser, body, owning).has_value());
  REQUIRE(json::parse_weather_views(parser, body, views).has_value());
  REQUIRE(owning.size() == 2);
  CHECK(owning[0].date == "2024-01-01");
  CHECK(owning[0].summary == "Freez\"ing\\ \xF0\x9F\x9A\x80 caf\xC3\xA9");
  CHECK(owning[1].summary == "tab\tnew\nline/");
  CHECK(views[0].date.has_escapes);
  CHECK(views[0].date.raw == R"(2024\u002d01-01)");
  std::string text;
  REQUIRE(json::unescape(views[0].summary, text));
  CHECK(text == std::string_view(owning[0].summary));
  CHECK(json::checksum(views) == json::checksum(owning));
}

TEST_CASE("a key given twice counts with its last value") {
  json::Parser parser;
  const simdjson::padded_string body(std::string(
      R"([{"date":"x","temperatureC":1,"summary":"Mild","temperatureF":33,"date":"2024-01-01","temperatureC":-6,)"
      R"("summary":"Freezing","temperatureF":22}])"));
  std::pmr::vector<json::WeatherForecast> owning;
  std::pmr::vector<json::WeatherView> views;
  REQUIRE(json::parse_weather(parser, body, owning).has_value());
  REQUIRE(json::parse_weather_views(parser, body, views).has_value());
  CHECK(owning[0] == json::make_weather(0));
  CHECK(json::checksum(views) == json::checksum_weather(1));
}

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
  std::string repo;
  json::append_json(repo, json::make_repository(0));
  auto with = [&](std::string_view from, std::string_view to) {
    std::string text = repo;
    const auto at = text.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
    return text;
  };
  std::string github;
  json::append_json(github, json::make_github(0));
  auto with_github = [&](std::string_view from, std::string_view to) {
    std::string text = github;
    const auto at = text.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
    return text;
  };
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
  const auto status = json::parse_weather_views(parser, body, views);
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
  for (const auto& status : {json::parse_weather_views(parser, body, views), json::parse_weather(parser, body, owning)}) {
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().record == 2);
    CHECK(status.error().field == "temperatureC");
    CHECK(status.error().offset == start);
    CHECK(status.error().message.ends_with(" at byte " + std::to_string(start)));
  }
  const std::string lines = good + "\n" + bad + "\n";
  const simdjson::padded_string line_body(lines);
  const auto status = json::parse_weather_ndjson_views(parser, line_body, views, 1 << 16);
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
    const auto status = json::parse_weather_views(parser, body, views);
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
    const auto status = json::parse_weather_record(parser, body, json::RecordSpan{4, text.size() - 2, 10}, record);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().message.starts_with("record 4: OUT_OF_BOUNDS"));
  }
  SUBCASE("a span holding two records") {
    const std::size_t second_end = text.find("},{", text.find("},{") + 1) + 1;
    const auto status = json::parse_weather_record(parser, body, json::RecordSpan{0, 1, second_end - 1}, record);
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
    const auto status = json::parse_weather_record_view(parser, bad_body, *last, view);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().record == 2);
    CHECK(status.error().field == "summary");
    CHECK(status.error().offset == value);
  }
}

TEST_CASE("a body without simdjson's padding is refused, not over-read") {
  json::Parser parser;
  const std::string text = array_body(Payload::weather, 2);
  std::pmr::vector<json::WeatherForecast> out;
  const auto status = json::parse_weather(parser, simdjson::padded_string_view(text.data(), text.size(), text.size()), out);
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().message.find("INSUFFICIENT_PADDING") != std::string::npos);
}

TEST_CASE("bodies received into a PaddedBuffer parse in place") {
  json::Parser parser;
  PaddedBuffer buffer;
  buffer.append(array_body(Payload::repos, 25));
  std::pmr::vector<json::RepositoryView> views;
  std::pmr::vector<json::Repository> owning;
  REQUIRE(json::parse_repos_views(parser, buffer, views).has_value());
  REQUIRE(json::parse_repos(parser, json::padded_view(buffer), owning).has_value());
  CHECK(json::checksum(views) == json::checksum_repos(25));
  CHECK(json::checksum(owning) == json::checksum_repos(25));
  CHECK(views.front().name.raw.data() >= buffer.data());
  CHECK(views.back().name.raw.data() < buffer.data() + buffer.size());

  PaddedBuffer empty;
  std::pmr::vector<json::WeatherView> nothing;
  const auto status = json::parse_weather_views(parser, empty, nothing);
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().message.starts_with("document: EMPTY"));
}

TEST_CASE("parsing again overwrites the records in place and drops the extra ones") {
  json::Parser parser;
  std::pmr::vector<json::Repository> out;
  const simdjson::padded_string ten(array_body(Payload::repos, 10));
  const simdjson::padded_string three(array_body(Payload::repos, 3));
  REQUIRE(json::parse_repos(parser, ten, out).has_value());
  const json::Repository* storage = out.data();
  REQUIRE(json::parse_repos(parser, three, out).has_value());
  CHECK(out.size() == 3);
  CHECK(out.data() == storage);
  CHECK(json::checksum(out) == json::checksum_repos(3));
}

TEST_CASE("owning records take their memory from the output vector's resource") {
  // A second parse of the same body into the same records needs no memory at all: every string
  // already has the capacity it needs.
  ringlab::testing::CountingResource counting;
  json::Parser parser;
  const simdjson::padded_string body(array_body(Payload::repos, 100));
  std::pmr::vector<json::Repository> out(&counting);
  REQUIRE(json::parse_repos(parser, body, out).has_value());
  CHECK(counting.allocations > 100);
  for (const json::Repository& r : out) CHECK(r.description.get_allocator().resource() == &counting);
  const std::size_t first = counting.allocations;
  REQUIRE(json::parse_repos(parser, body, out).has_value());
  CHECK(counting.allocations == first);
}
