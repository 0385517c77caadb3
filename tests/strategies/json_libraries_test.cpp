// The nlohmann and rapidjson mappings (strategies/src/json_libraries.hpp), driven without a server: they
// must fill the owning records exactly as json/'s parser does (the generator's bodies of both payloads give
// the generator's checksum and records equal to json/'s), decode escapes, read null optionals, skip unknown
// keys however nested, and turn every bad body into an error that names the record and the field. rapidjson
// runs under both of its rows' flags: fast (no UTF-8 validation, normal-precision numbers) and strict.
#include <doctest/doctest.h>

#include <charconv>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "json_libraries.hpp"
#include "rapidjson_handler.hpp"
#include "ringlab/json/checksum.hpp"
#include "ringlab/json/deserialize.hpp"
#include "ringlab/json/generate.hpp"
#include "ringlab/json/serialize.hpp"
#include "../support/generated_bodies.hpp"

namespace ringlab::strategies::detail {
namespace {

// One library's mapping of both payloads, over text (rapidjson gets a padded buffer, which it overwrites).
struct Library {
  const char* name;
  bool validates_utf8;
  std::function<json::Status(std::string_view, std::pmr::vector<json::WeatherForecast>&)> weather;
  std::function<json::Status(std::string_view, std::pmr::vector<json::Repository>&)> repos;
  std::function<json::Status(std::string_view, std::pmr::vector<json::GithubRepository>&)> github;
};

base::PaddedBuffer padded(std::string_view text) {
  base::PaddedBuffer buffer;
  buffer.append(text);
  return buffer;
}

// rapidjson under `flags`, over a padded copy of the text.
Library rapidjson_library(const char* name, RapidjsonFlags flags) {
  const auto parse = [flags](std::string_view body, auto& out) {
    base::PaddedBuffer buffer = padded(body);
    return rapidjson_parse(buffer, out, flags);
  };
  return {name, flags == RapidjsonFlags::strict, parse, parse, parse};
}

std::vector<Library> libraries() {
  return {
      {"nlohmann", true, [](std::string_view body, auto& out) { return nlohmann_parse(body, out); },
       [](std::string_view body, auto& out) { return nlohmann_parse(body, out); },
       [](std::string_view body, auto& out) { return nlohmann_parse(body, out); }},
      rapidjson_library("rapidjson", RapidjsonFlags::fast),
      rapidjson_library("rapidjson_strict", RapidjsonFlags::strict),
  };
}

using ringlab::testing::generated_body;

// The generator's first repository with every optional field present (a homepage, a language, a license),
// so that a test can take any of them away.
json::Repository full_repository() {
  json::Repository record = json::make_repository(0);
  record.homepage.emplace("https://example.org/");
  record.language.emplace("C++");
  record.license.emplace();
  record.license->key = "bsd-3-clause";
  record.license->name = "BSD 3-Clause \"New\" or \"Revised\" License";
  record.license->spdx_id = "BSD-3-Clause";
  return record;
}

std::string array_of(const json::Repository& record) {
  std::string body = "[";
  json::append_json(body, record);
  body += "]";
  return body;
}

uint64_t checksum_of(const json::Repository& record) {
  return json::checksum(std::span<const json::Repository>(&record, 1));
}

// full_repository() as JSON, with the first `from` replaced by `to`.
std::string repo_json(std::string_view from = {}, std::string_view to = {}) {
  std::string body = array_of(full_repository());
  if (!from.empty()) {
    const std::size_t at = body.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, "no " << from << " in " << body);
    body.replace(at, from.size(), to);
  }
  return body;
}

constexpr std::string_view kWeather = R"([{"date":"2024-01-01","temperatureC":5,"summary":"Mild","temperatureF":40}])";

std::string weather_with(std::string_view from, std::string_view to) {
  std::string body(kWeather);
  const std::size_t at = body.find(from);
  REQUIRE(at != std::string::npos);
  body.replace(at, from.size(), to);
  return body;
}

// Parses `body` with `parse` (one of a Library's) into `records`, which must then hold exactly one record;
// a failed parse fails the test with the library's message.
template <class Record>
void parse_one(const std::function<json::Status(std::string_view, std::pmr::vector<Record>&)>& parse,
               std::string_view body, std::pmr::vector<Record>& records) {
  const auto status = parse(body, records);
  REQUIRE_MESSAGE(status, (status ? "" : status.error().message));
  REQUIRE(records.size() == 1);
}

TEST_CASE("the generator's bodies give the generator's records, equal to json/'s parse") {
  for (const Library& library : libraries()) {
    for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{10}, std::size_t{300}}) {
      INFO(std::string_view(library.name) << ", " << count << " records");
      json::Parser parser;
      std::pmr::vector<json::WeatherForecast> weather;
      REQUIRE(library.weather(generated_body(Payload::weather, count), weather));
      CHECK(json::checksum(std::span<const json::WeatherForecast>(weather)) == json::checksum_weather(count));
      const simdjson::padded_string weather_text(generated_body(Payload::weather, count));
      std::pmr::vector<json::WeatherForecast> weather_reference;
      REQUIRE(json::parse_array(parser, weather_text, weather_reference));
      CHECK(weather == weather_reference);

      std::pmr::vector<json::Repository> repos;
      const auto status = library.repos(generated_body(Payload::repos, count), repos);
      REQUIRE_MESSAGE(status, (status ? "" : status.error().message));
      CHECK(json::checksum(std::span<const json::Repository>(repos)) == json::checksum_repos(count));
      const simdjson::padded_string repos_text(generated_body(Payload::repos, count));
      std::pmr::vector<json::Repository> repos_reference;
      REQUIRE(json::parse_array(parser, repos_text, repos_reference));
      CHECK(repos == repos_reference);
    }
  }
}

TEST_CASE("github bodies give the generator's flat records, nulls included; a bad field names record and field") {
  for (const Library& library : libraries()) {
    for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{300}}) {
      INFO(std::string_view(library.name) << ", " << count << " github records");
      std::pmr::vector<json::GithubRepository> github;
      const auto status = library.github(generated_body(Payload::github, count), github);
      REQUIRE_MESSAGE(status, (status ? "" : status.error().message));
      CHECK(json::checksum(std::span<const json::GithubRepository>(github)) == json::checksum_github(count));
      for (std::size_t i = 0; i < github.size(); ++i) CHECK(github[i] == json::make_github(i));
    }
    std::string record;
    json::append_json(record, json::make_github(1));
    std::string bad = record;
    bad.replace(bad.find(R"("open_issues_count":)"), 20, R"("open_issues_count":"many","x":)");
    std::pmr::vector<json::GithubRepository> github;
    const auto status = library.github(std::string("[") + record + "," + bad + "]", github);
    REQUIRE_FALSE(status.has_value());
    INFO(status.error().message);
    CHECK(status.error().record == 1);
    CHECK(status.error().field == "open_issues_count");
    CHECK(status.error().message.starts_with("record 1 field open_issues_count: INCORRECT_TYPE"));
  }
}

TEST_CASE("records are overwritten in place and the ones left over erased") {
  for (const Library& library : libraries()) {
    INFO(std::string_view(library.name));
    std::pmr::vector<json::Repository> repos;
    REQUIRE(library.repos(generated_body(Payload::repos, 20), repos));
    REQUIRE(library.repos(generated_body(Payload::repos, 3), repos));
    CHECK(repos.size() == 3);
    CHECK(json::checksum(std::span<const json::Repository>(repos)) == json::checksum_repos(3));
    std::pmr::vector<json::WeatherForecast> weather;
    REQUIRE(library.weather(generated_body(Payload::weather, 5), weather));
    REQUIRE(library.weather("[]", weather));
    CHECK(weather.empty());
  }
}

TEST_CASE("escapes are decoded: quotes, backslashes, control characters, \\u escapes and surrogate pairs") {
  const std::string body = weather_with(R"("summary":"Mild")", R"("summary":"a \"b\" \\ \/ \n\t \u00e9 \ud83d\ude80")");
  for (const Library& library : libraries()) {
    INFO(std::string_view(library.name));
    std::pmr::vector<json::WeatherForecast> weather;
    parse_one(library.weather, body, weather);
    CHECK(weather[0].summary == "a \"b\" \\ / \n\t \xC3\xA9 \xF0\x9F\x9A\x80");
  }
}

TEST_CASE("null homepage, language and license are empty optionals, also over records that had them") {
  json::Repository without = full_repository();
  without.homepage.reset();
  without.language.reset();
  without.license.reset();
  const std::string body = array_of(without);
  REQUIRE(body.find("\"license\":null") != std::string::npos);
  for (const Library& library : libraries()) {
    INFO(std::string_view(library.name));
    std::pmr::vector<json::Repository> repos;
    parse_one(library.repos, repo_json(), repos);
    CHECK(repos[0] == full_repository());
    parse_one(library.repos, body, repos);  // over the record that had them
    CHECK_FALSE(repos[0].homepage.has_value());
    CHECK_FALSE(repos[0].language.has_value());
    CHECK_FALSE(repos[0].license.has_value());
    CHECK(repos[0] == without);
  }
}

TEST_CASE("unknown keys are skipped with their values, however nested; keys in any order; the last of two counts") {
  const std::string weather = R"([{"extra":{"a":[1,{"b":[[]]}],"c":null},"temperatureF":40,"summary":"Mild",)"
                              R"("more":[{"date":"no"}],"temperatureC":1,"date":"2024-01-01","temperatureC":5,"x":7}])";
  const std::string repo = repo_json("\"owner\":{", R"("owner":{"extra":{"login":[1,2]},"followers":[{}],)");
  for (const Library& library : libraries()) {
    INFO(std::string_view(library.name));
    std::pmr::vector<json::WeatherForecast> records;
    parse_one(library.weather, weather, records);
    CHECK(records[0].date == "2024-01-01");
    CHECK(records[0].temperature_c == 5);
    CHECK(records[0].summary == "Mild");
    CHECK(records[0].temperature_f == 40);
    std::pmr::vector<json::Repository> repos;
    parse_one(library.repos, repo, repos);
    CHECK(checksum_of(repos[0]) == checksum_of(full_repository()));
  }
}

struct Bad {
  const char* name;
  std::string body;
  bool repos;
  const char* expected;  // in the message, with the record and the field
  bool utf8 = false;     // refused by the libraries that validate UTF-8 only
};

std::vector<Bad> bad_bodies() {
  return {
      {"a missing field", weather_with(R"("summary":"Mild",)", ""), false, "record 0 field summary: NO_SUCH_FIELD"},
      {"a missing nested field", repo_json("\"login\":", "\"nickname\":"), true,
       "record 0 field owner.login: NO_SUCH_FIELD"},
      {"a missing license field", repo_json("\"spdx_id\":", "\"spdx\":"), true,
       "record 0 field license.spdx_id: NO_SUCH_FIELD"},
      {"a string for an integer", weather_with(R"("temperatureC":5)", R"("temperatureC":"5")"), false,
       "record 0 field temperatureC: INCORRECT_TYPE"},
      {"a fraction for an integer", weather_with(R"("temperatureC":5)", R"("temperatureC":5.5)"), false,
       "record 0 field temperatureC: INCORRECT_TYPE"},
      {"null for a string", weather_with(R"("date":"2024-01-01")", R"("date":null)"), false,
       "record 0 field date: INCORRECT_TYPE"},
      {"an integer past int32", weather_with(R"("temperatureC":5)", R"("temperatureC":4294967296)"), false,
       "record 0 field temperatureC: NUMBER_OUT_OF_RANGE"},
      {"an integer past int64", repo_json("\"size\":", "\"size\":18446744073709551615,\"was\":"), true,
       "record 0 field size: NUMBER_OUT_OF_RANGE"},
      {"a number in topics", repo_json("\"topics\":[", "\"topics\":[1,"), true,
       "record 0 field topics[0]: INCORRECT_TYPE"},
      {"an array for the owner", repo_json("\"owner\":{", "\"owner\":[],\"was\":{"), true,
       "record 0 field owner: INCORRECT_TYPE"},
      {"a string for the license", repo_json("\"license\":", "\"license\":\"mit\",\"was\":"), true,
       "record 0 field license: INCORRECT_TYPE"},
      {"an object for a boolean", repo_json("\"fork\":", "\"fork\":{},\"was\":"), true,
       "record 0 field fork: INCORRECT_TYPE"},
      {"a record that is not an object", R"([1])", false, "record 0: INCORRECT_TYPE"},
      {"a body that is not an array", R"({"date":"2024-01-01"})", false, "document: INCORRECT_TYPE"},
      {"invalid JSON", R"([{"date":"2024-01-01","temperatureC":oops}])", false, ""},
      {"a body cut short", std::string(kWeather.substr(0, kWeather.size() / 2)), false, ""},
      {"trailing bytes", std::string(kWeather) + "]", false, ""},
      {"an empty body", "", false, ""},
      {"not JSON", "Hello, World!", false, ""},
      {"invalid UTF-8 in a string", weather_with("Mild", "M\xC3\x28ld"), false, "", true},
      {"a control character in a string", weather_with("Mild", "Mi\x01ld"), false, ""},
  };
}

TEST_CASE("bad bodies are errors that name the record and the field, never exceptions") {
  for (const Bad& bad : bad_bodies()) {
    for (const Library& library : libraries()) {
      if (bad.utf8 && !library.validates_utf8) continue;
      INFO(std::string_view(library.name) << ": " << std::string_view(bad.name));
      json::Status status;
      if (bad.repos) {
        std::pmr::vector<json::Repository> records;
        CHECK_NOTHROW(status = library.repos(bad.body, records));
      } else {
        std::pmr::vector<json::WeatherForecast> records;
        CHECK_NOTHROW(status = library.weather(bad.body, records));
      }
      REQUIRE_FALSE(status);
      INFO(status.error().message);
      CHECK(status.error().message.size() > 10);
      CHECK(status.error().message.find(bad.expected) != std::string::npos);
    }
  }
}

TEST_CASE("rapidjson refuses a deeply nested body instead of recursing into it, and a NUL inside the body") {
  std::pmr::vector<json::WeatherForecast> records;
  // Under an unknown key, where any nesting is allowed.
  base::PaddedBuffer deep = padded(R"([{"extra":)" + std::string(100'000, '['));
  auto status = rapidjson_parse(deep, records);
  REQUIRE_FALSE(status);
  CHECK(status.error().message.find("DEPTH_ERROR") != std::string::npos);

  std::string with_nul(kWeather);
  with_nul += '\0';
  with_nul += "garbage";
  base::PaddedBuffer nul = padded(with_nul);
  status = rapidjson_parse(nul, records);
  REQUIRE_FALSE(status);
  CHECK(status.error().message.find("NUL") != std::string::npos);
}

TEST_CASE("rapidjson's fast flags take a string that is not UTF-8 as it is; its strict flags refuse it") {
  const std::string body = weather_with("Mild", "M\xC3\x28ld");
  std::pmr::vector<json::WeatherForecast> records;
  base::PaddedBuffer fast = padded(body);
  const auto taken = rapidjson_parse(fast, records, RapidjsonFlags::fast);
  REQUIRE_MESSAGE(taken, (taken ? "" : taken.error().message));
  REQUIRE(records.size() == 1);
  CHECK(records[0].summary == "M\xC3\x28ld");
  base::PaddedBuffer strict = padded(body);
  const auto refused = rapidjson_parse(strict, records, RapidjsonFlags::strict);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("rapidjson: Invalid encoding in string.") != std::string::npos);
}

// The numbers of one array, as the Reader hands them over (parse_insitu's handler).
class Numbers : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Numbers> {
 public:
  bool Int(int i) { return add(i); }
  bool Uint(unsigned u) { return add(u); }
  bool Int64(int64_t i) { return add(static_cast<double>(i)); }
  bool Uint64(uint64_t u) { return add(static_cast<double>(u)); }
  bool Double(double d) { return add(d); }
  [[nodiscard]] bool failed() const noexcept { return false; }
  [[nodiscard]] json::Error& error() noexcept { return error_; }
  [[nodiscard]] std::size_t record() const noexcept { return json::kNoRecord; }
  std::vector<double>* values = nullptr;

 private:
  bool add(double value) {
    values->push_back(value);
    return true;
  }
  json::Error error_;
};

// The only fractions the server writes are repositories' scores, k / 1000 for an integer k below 100,000
// (json/generate.cpp), each in its shortest form (json/serialize.cpp's std::to_chars). Under the fast flags
// rapidjson reads numbers at normal precision: it must still read every one of them as the same double, so
// that the rapidjson rows' checksums stay the generator's.
TEST_CASE("rapidjson's normal precision reads every score the server can write exactly") {
  constexpr int kScores = 100'000;
  std::string body = "[";
  for (int k = 0; k < kScores; ++k) {
    char digits[32];
    const auto written = std::to_chars(digits, digits + sizeof digits, static_cast<double>(k) / 1000.0);
    if (k > 0) body += ',';
    body.append(digits, written.ptr);
  }
  body += ']';
  std::vector<double> values;
  base::PaddedBuffer buffer = padded(body);
  rapidjson::Reader reader;
  const auto status = rapidjson_sax::parse_insitu<rapidjson_sax::kFastFlags>(
      reader, buffer, [&values](rapidjson::InsituStringStream&) {
        Numbers numbers;
        numbers.values = &values;
        return numbers;
      });
  REQUIRE_MESSAGE(status, (status ? "" : status.error().message));
  REQUIRE(values.size() == kScores);
  int different = 0;
  for (int k = 0; k < kScores; ++k) {
    if (values[static_cast<std::size_t>(k)] != static_cast<double>(k) / 1000.0) ++different;
  }
  CHECK(different == 0);
}

}  // namespace
}  // namespace ringlab::strategies::detail
