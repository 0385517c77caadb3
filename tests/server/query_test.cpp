#include "ringlab/server/query.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string_view>

using namespace ringlab::server;

TEST_CASE("split_target separates path and query for origin-form and absolute-form targets") {
  struct Row {
    std::string_view target;
    bool valid;
    std::string_view path;
    std::string_view query;
  };
  const Row rows[] = {
      {"/", true, "/", ""},
      {"/weather", true, "/weather", ""},
      {"/weather?", true, "/weather", ""},
      {"/weather?count=10", true, "/weather", "count=10"},
      {"/weather?count=10&format=ndjson", true, "/weather", "count=10&format=ndjson"},
      {"/weather?count=10#frag", true, "/weather", "count=10"},
      {"/a?b?c", true, "/a", "b?c"},
      {"http://127.0.0.1:8080/weather?count=3", true, "/weather", "count=3"},
      {"HTTP://host/x", true, "/x", ""},
      {"http://host", true, "/", ""},
      {"http://host?count=1", true, "/", "count=1"},
      {"http:///x", false, "", ""},
      {"https://host/x", false, "", ""},
      {"*", false, "", ""},
      {"weather", false, "", ""},
      {"", false, "", ""},
      {"#only", false, "", ""},
  };
  for (const Row& row : rows) {
    INFO("target: '", row.target, "'");
    auto split = split_target(row.target);
    REQUIRE(split.has_value() == row.valid);
    if (!row.valid) continue;
    CHECK(split->path == row.path);
    CHECK(split->query == row.query);
  }
}

TEST_CASE("find_param returns the last value of a key and ignores other keys") {
  struct Row {
    std::string_view query;
    std::string_view key;
    std::optional<std::string_view> value;
  };
  const Row rows[] = {
      {"count=10", "count", "10"},
      {"a=1&count=10&b=2", "count", "10"},
      {"count=1&count=2", "count", "2"},
      {"count", "count", ""},
      {"count=", "count", ""},
      {"counter=5", "count", std::nullopt},
      {"xcount=5", "count", std::nullopt},
      {"", "count", std::nullopt},
      {"&&count=7&&", "count", "7"},
      {"count=a=b", "count", "a=b"},
      {"=5", "", "5"},
  };
  for (const Row& row : rows) {
    INFO("query: '", row.query, "' key: '", row.key, "'");
    CHECK(find_param(row.query, row.key) == row.value);
  }
}

TEST_CASE("parse_decimal accepts plain decimals up to the maximum and nothing else") {
  struct Row {
    std::string_view text;
    uint64_t max;
    std::optional<uint64_t> value;
  };
  const Row rows[] = {
      {"0", 10, 0},
      {"10", 10, 10},
      {"11", 10, std::nullopt},
      {"007", 10, 7},
      {"1000000", 1'000'000, 1'000'000},
      {"1000001", 1'000'000, std::nullopt},
      {"", 10, std::nullopt},
      {"-1", 10, std::nullopt},
      {"+1", 10, std::nullopt},
      {" 1", 10, std::nullopt},
      {"1 ", 10, std::nullopt},
      {"1e3", 10'000, std::nullopt},
      {"0x10", 100, std::nullopt},
      {"1.0", 10, std::nullopt},
      {"%31", 100, std::nullopt},
      {"7", 5, std::nullopt},  // a single digit above max
      {"18446744073709551615", UINT64_MAX, UINT64_MAX},
      {"18446744073709551616", UINT64_MAX, std::nullopt},
      {"99999999999999999999999", UINT64_MAX, std::nullopt},
  };
  for (const Row& row : rows) {
    INFO("text: '", row.text, "' max: ", row.max);
    CHECK(parse_decimal(row.text, row.max) == row.value);
  }
}
