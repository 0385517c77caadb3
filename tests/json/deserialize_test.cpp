// tests json/src/deserialize.cpp: records read back every way, views, key order and escapes, buffers
// (bad and cut bodies and the errors' positions: deserialize_errors_test.cpp)
#include "ringlab/json/deserialize.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory_resource>
#include <string>
#include <vector>

#include "deserialize_fixtures.hpp"

namespace json = ringlab::json;
using ringlab::base::PaddedBuffer;
using namespace ringlab::json::testing;

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
  REQUIRE(json::parse_array(parser, weather_text, weather).has_value());
  REQUIRE(json::parse_array(parser, repos_text, repos).has_value());
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
  REQUIRE(json::parse_array(parser, body, owning).has_value());
  REQUIRE(json::parse_array(parser, body, views).has_value());
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
    REQUIRE(json::parse_array(parser, body, owning).has_value());
    REQUIRE(json::parse_array(parser, body, views).has_value());
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
    REQUIRE(json::parse_array(parser, body, owning).has_value());
    CHECK(json::checksum(owning) == json::checksum_github_three_fields(30));
  }
  SUBCASE("a skipped field of any type is not an error; a missing or wrong one of the three is") {
    std::string record;
    json::append_json(record, json::make_github(0));
    std::string other_types = record;
    other_types.replace(other_types.find(R"("size":)"), 7, R"("size":"not a number","x":)");
    const simdjson::padded_string skipped(std::string("[") + other_types + "]");
    std::pmr::vector<json::GithubStars> owning;
    CHECK(json::parse_array(parser, skipped, owning).has_value());
    std::pmr::vector<json::GithubRepository> full;
    CHECK_FALSE(json::parse_array(parser, skipped, full).has_value());

    std::string no_url = record;
    no_url.replace(no_url.find(R"("url":)"), 6, R"("x":)");
    const simdjson::padded_string missing(std::string("[") + record + "," + no_url + "]");
    const auto status = json::parse_array(parser, missing, owning);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().record == 1);
    CHECK(status.error().field == "url");
    CHECK(status.error().message.starts_with("record 1 field url: NO_SUCH_FIELD"));

    std::string bad_stars = record;
    bad_stars.replace(bad_stars.find(R"("stargazers_count":)"), 19, R"("stargazers_count":true,"x":)");
    const simdjson::padded_string wrong(std::string("[") + bad_stars + "]");
    std::pmr::vector<json::GithubStarsView> views;
    const auto view_status = json::parse_array(parser, wrong, views);
    REQUIRE_FALSE(view_status.has_value());
    CHECK(view_status.error().field == "stargazers_count");
    CHECK(view_status.error().message.starts_with("record 0 field stargazers_count: INCORRECT_TYPE"));
  }
}

TEST_CASE("views decode to the owning text, and escaped ones say so") {
  json::Parser parser;
  const simdjson::padded_string body(array_body(Payload::repos, 200));
  std::pmr::vector<json::RepositoryView> views;
  REQUIRE(json::parse_array(parser, body, views).has_value());
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
  REQUIRE(json::parse_array(parser, first, views).has_value());
  REQUIRE(json::parse_array(parser, second, others).has_value());
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
  REQUIRE(json::parse_array(parser, body, owning).has_value());
  REQUIRE(json::parse_array(parser, body, views).has_value());
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
  REQUIRE(json::parse_array(parser, body, owning).has_value());
  REQUIRE(json::parse_array(parser, body, views).has_value());
  CHECK(owning[0] == json::make_weather(0));
  CHECK(json::checksum(views) == json::checksum_weather(1));
}

TEST_CASE("a body without simdjson's padding is refused, not over-read") {
  json::Parser parser;
  const std::string text = array_body(Payload::weather, 2);
  std::pmr::vector<json::WeatherForecast> out;
  const auto status =
      json::parse_array(parser, simdjson::padded_string_view(text.data(), text.size(), text.size()), out);
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().message.find("INSUFFICIENT_PADDING") != std::string::npos);
}

TEST_CASE("bodies received into a PaddedBuffer parse in place") {
  json::Parser parser;
  PaddedBuffer buffer;
  buffer.append(array_body(Payload::repos, 25));
  std::pmr::vector<json::RepositoryView> views;
  std::pmr::vector<json::Repository> owning;
  REQUIRE(json::parse_array(parser, buffer, views).has_value());
  REQUIRE(json::parse_array(parser, json::padded_view(buffer), owning).has_value());
  CHECK(json::checksum(views) == json::checksum_repos(25));
  CHECK(json::checksum(owning) == json::checksum_repos(25));
  CHECK(views.front().name.raw.data() >= buffer.data());
  CHECK(views.back().name.raw.data() < buffer.data() + buffer.size());

  PaddedBuffer empty;
  std::pmr::vector<json::WeatherView> nothing;
  const auto status = json::parse_array(parser, empty, nothing);
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().message.starts_with("document: EMPTY"));
}

TEST_CASE("parsing again overwrites the records in place and drops the extra ones") {
  json::Parser parser;
  std::pmr::vector<json::Repository> out;
  const simdjson::padded_string ten(array_body(Payload::repos, 10));
  const simdjson::padded_string three(array_body(Payload::repos, 3));
  REQUIRE(json::parse_array(parser, ten, out).has_value());
  const json::Repository* storage = out.data();
  REQUIRE(json::parse_array(parser, three, out).has_value());
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
  REQUIRE(json::parse_array(parser, body, out).has_value());
  CHECK(counting.allocations > 100);
  for (const json::Repository& r : out) CHECK(r.description.get_allocator().resource() == &counting);
  const std::size_t first = counting.allocations;
  REQUIRE(json::parse_array(parser, body, out).has_value());
  CHECK(counting.allocations == first);
}
