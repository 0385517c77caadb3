// tests json/src/serialize.cpp
#include "ringlab/json/serialize.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ringlab/json/generate.hpp"

namespace json = ringlab::json;

namespace {

std::string weather_json(std::size_t count) {
  std::string out;
  json::append_weather_json(out, count);
  return out;
}
std::string repos_json(std::size_t count) {
  std::string out;
  json::append_repos_json(out, count);
  return out;
}

std::string escaped(std::string_view text) {
  std::string out;
  json::append_json_string(out, text);
  return out;
}

// What a standard JSON reader (simdjson) makes of a JSON string.
std::string read_back(const std::string& json_text) {
  const simdjson::padded_string padded(json_text);
  simdjson::ondemand::parser parser;
  std::string_view text;
  const auto error = parser.iterate(padded).get_string().get(text);
  REQUIRE_MESSAGE(error == simdjson::SUCCESS, json_text);
  return std::string(text);
}

}  // namespace

TEST_CASE("a weather record is written compact, camelCase, in the .NET sample's key order") {
  json::WeatherForecast record;
  record.date = "2024-01-01";
  record.temperature_c = -6;
  record.summary = "Freezing";
  record.temperature_f = 22;
  std::string out = "prefix:";
  json::append_json(out, record);
  CHECK(out == R"(prefix:{"date":"2024-01-01","temperatureC":-6,"summary":"Freezing","temperatureF":22})");
}

TEST_CASE("empty bodies: [] for JSON, nothing for NDJSON") {
  CHECK(weather_json(0) == "[]");
  CHECK(repos_json(0) == "[]");
  std::string lines;
  json::append_weather_ndjson(lines, 0);
  json::append_repos_ndjson(lines, 0);
  CHECK(lines.empty());
}

TEST_CASE("strings are escaped with the short forms, \\u00XX for controls and \\uXXXX for non-ASCII") {
  struct Row {
    std::string_view name;  // doctest 2.4.9 prints a const char* in INFO as a pointer
    std::string_view text;
    std::string_view expected;
  };
  const Row rows[] = {
      {"plain", "abc", R"("abc")"},
      {"empty", "", R"("")"},
      {"quote and backslash", "a\"b\\c", R"("a\"b\\c")"},
      {"short control escapes", "\b\f\n\r\t", R"("\b\f\n\r\t")"},
      {"other controls", std::string_view("\x01\x1f\0", 3), R"("\u0001\u001F\u0000")"},
      {"slash is left alone", "a/b", R"("a/b")"},
      {"two-byte UTF-8", "caf\xC3\xA9", R"("caf\u00E9")"},
      {"three-byte UTF-8", "\xE2\x82\xAC", R"("\u20AC")"},
      {"four-byte UTF-8 as a surrogate pair", "\xF0\x9F\x9A\x80", R"("\uD83D\uDE80")"},
      {"stray continuation byte", "a\x80z", R"("a\uFFFDz")"},
      {"overlong form", "\xC0\xAF", R"("\uFFFD\uFFFD")"},
      {"encoded surrogate", "\xED\xA0\x80", R"("\uFFFD\uFFFD\uFFFD")"},
      {"cut short at the end", "ab\xE2\x82", R"("ab\uFFFD\uFFFD")"},
      {"beyond U+10FFFF", "\xF4\x90\x80\x80", R"("\uFFFD\uFFFD\uFFFD\uFFFD")"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    CHECK(escaped(row.text) == row.expected);
  }
}

TEST_CASE("valid UTF-8 text reads back unchanged through a standard JSON reader") {
  json::SplitMix64 rng(7);
  const std::string_view alphabet[] = {"a", " ", "\"", "\\", "\n", "\t", "\x01", "/", "\xC3\xA9", "\xE2\x82\xAC",
                                       "\xF0\x9F\x9A\x80", "\x7f", "{", "]"};
  for (int round = 0; round < 500; ++round) {
    std::string text;
    const auto pieces = rng.below(20);
    for (uint64_t i = 0; i < pieces; ++i) text.append(alphabet[rng.below(std::size(alphabet))]);
    INFO("text: " << text);
    CHECK(read_back(escaped(text)) == text);
  }
}

TEST_CASE("the same count gives the same bytes, and count N is a prefix of count N+1") {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{100}}) {
    INFO("n = " << n);
    CHECK(weather_json(n) == weather_json(n));
    CHECK(repos_json(n) == repos_json(n));
    // Without its closing ']' the smaller array is where the bigger one starts.
    const std::string small = weather_json(n);
    CHECK(weather_json(n + 1).starts_with(small.substr(0, small.size() - 1)));
    const std::string small_repos = repos_json(n);
    CHECK(repos_json(n + 1).starts_with(small_repos.substr(0, small_repos.size() - 1)));
    std::string lines, more_lines;
    json::append_repos_ndjson(lines, n);
    json::append_repos_ndjson(more_lines, n + 1);
    CHECK(more_lines.starts_with(lines));
  }
}

TEST_CASE("JSON and NDJSON bodies hold the same record texts") {
  std::string array = repos_json(5);
  std::string lines;
  json::append_repos_ndjson(lines, 5);
  std::string joined = "[";
  std::size_t start = 0;
  for (std::size_t end = lines.find('\n'); end != std::string::npos; end = lines.find('\n', start)) {
    if (start > 0) joined += ',';
    joined += lines.substr(start, end - start);
    start = end + 1;
  }
  joined += ']';
  CHECK(start == lines.size());
  CHECK(joined == array);
}

TEST_CASE("repository records weigh 1-2 KB on average and exercise escapes") {
  const std::size_t n = 1000;
  const std::string body = repos_json(n);
  const double average = static_cast<double>(body.size()) / n;
  INFO("average record size: " << average);
  CHECK(average >= 1024.0);
  CHECK(average <= 2048.0);
  for (const std::string_view escape : {R"(\")", R"(\\)", R"(\n)", R"(\u00E9)", R"(\uD83D\uDE80)"}) {
    INFO("escape " << escape);
    CHECK(body.find(escape) != std::string::npos);
  }
  CHECK(body.find(R"("homepage":null)") != std::string::npos);
  CHECK(body.find(R"("homepage":"")") != std::string::npos);
  CHECK(body.find(R"("language":null)") != std::string::npos);
  CHECK(body.find(R"("license":null)") != std::string::npos);
  CHECK(body.find(R"("topics":[])") != std::string::npos);
}

TEST_CASE("the weather body is the size the design notes quote: 10,000 records in about 771 KB") {
  const std::string body = weather_json(10'000);
  CHECK(body.size() > 760'000);
  CHECK(body.size() < 780'000);
}

TEST_CASE("serializing into a reserved string does not reallocate it") {
  std::string out;
  out.reserve(1 << 20);
  const char* before = out.data();
  json::append_repos_json(out, 200);
  json::append_weather_ndjson(out, 500);
  CHECK(out.data() == before);
}

TEST_CASE("a github record is flat: 22 snake_case keys in field order, null for an absent optional") {
  json::GithubRepository record = json::make_github(0);
  record.description.reset();
  record.homepage.emplace("");
  record.language.emplace("C++");
  std::string out;
  json::append_json(out, record);
  CHECK(out.starts_with("{\"id\":" + std::to_string(record.id) + ",\"node_id\":\""));
  CHECK(out.find(",\"private\":") != std::string::npos);
  CHECK(out.find(",\"description\":null,\"fork\":") != std::string::npos);
  CHECK(out.find(",\"homepage\":\"\",\"size\":") != std::string::npos);
  CHECK(out.find(",\"language\":\"C++\",") != std::string::npos);
  CHECK(out.ends_with(",\"visibility\":\"" + std::string(record.visibility) + "\"}"));
  CHECK(std::count(out.begin(), out.end(), '{') == 1);  // nothing nested
  CHECK(out.find('[') == std::string::npos);

  std::string array, lines, more;
  json::append_github_json(array, 4);
  json::append_github_ndjson(lines, 4);
  json::append_github_ndjson(more, 5);
  CHECK(array.front() == '[');
  CHECK(std::count(lines.begin(), lines.end(), '\n') == 4);
  CHECK(more.starts_with(lines));
}
