// tests json/src/models.cpp
#include "ringlab/json/models.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <memory_resource>
#include <string>
#include <vector>

#include "ringlab/json/generate.hpp"
#include "../support/json_counting_resource.hpp"

namespace json = ringlab::json;

namespace {

using ringlab::testing::CountingResource;

std::vector<std::string> elements(const json::JsonStringArrayView& array) {
  std::vector<std::string> out;
  for (const json::JsonStringView& text : array) out.push_back(std::string(text.raw) + (text.has_escapes ? "*" : ""));
  return out;
}

}  // namespace

TEST_CASE("the ten .NET summaries, in order") {
  CHECK(json::weather_summary(0) == "Freezing");
  CHECK(json::weather_summary(9) == "Scorching");
  CHECK(json::weather_summary(10).empty());
}

TEST_CASE("a pmr vector of records gives its resource to every string of every record") {
  CountingResource arena;
  std::pmr::vector<json::Repository> records(&arena);
  records.emplace_back();
  json::fill_repository(1, records.back());
  records.push_back(json::make_repository(2));  // copied in: the copy takes the vector's resource
  const std::size_t before = arena.allocations;
  CHECK(before > 0);
  for (const json::Repository& r : records) {
    CHECK(r.get_allocator().resource() == &arena);
    CHECK(r.description.get_allocator().resource() == &arena);
    CHECK(r.owner.avatar_url.get_allocator().resource() == &arena);
    CHECK(r.topics.get_allocator().resource() == &arena);
    if (r.license) CHECK(r.license->name.get_allocator().resource() == &arena);
    if (r.homepage) CHECK(r.homepage->get_allocator().resource() == &arena);
  }
  CHECK(records[1] == json::make_repository(2));
}

TEST_CASE("allocator-extended copies and moves keep the values and take the new resource") {
  std::pmr::monotonic_buffer_resource arena;
  const json::Repository original = json::make_repository(4);
  json::Repository copy(original, json::Repository::allocator_type(&arena));
  CHECK(copy == original);
  CHECK(copy.node_id.get_allocator().resource() == &arena);
  json::Repository moved{json::Repository(original), json::Repository::allocator_type(&arena)};
  CHECK(moved == original);
  CHECK(moved.owner.login.get_allocator().resource() == &arena);

  const json::WeatherForecast weather = json::make_weather(4);
  json::WeatherForecast weather_copy(weather, json::WeatherForecast::allocator_type(&arena));
  CHECK(weather_copy == weather);
  CHECK(weather_copy.get_allocator().resource() == &arena);
  json::License license;
  license.key = "mit";
  json::License license_copy(license, json::License::allocator_type(&arena));
  CHECK(license_copy == license);
  CHECK(license_copy.key.get_allocator().resource() == &arena);
}

TEST_CASE("JsonStringArrayView yields each raw element and flags those with escapes") {
  struct Row {
    std::string_view name;  // doctest 2.4.9 prints a const char* in INFO as a pointer
    std::string_view raw;
    std::vector<std::string> expected;  // "*" marks has_escapes
  };
  const Row rows[] = {
      {"default-constructed", "", {}},
      {"empty array", "[]", {}},
      {"empty array with spaces", "[ \n\t]", {}},
      {"one element", R"(["json"])", {"json"}},
      {"spaces everywhere", "[ \"a\" ,\n \"b\"\t]", {"a", "b"}},
      {"empty string element", R"(["", "x"])", {"", "x"}},
      {"escaped quote inside", R"(["a\"b", "c"])", {R"(a\"b*)", "c"}},
      {"escaped backslash before the closing quote", R"(["a\\", "b"])", {R"(a\\*)", "b"}},
      {"brackets and commas inside strings", R"(["],[", ","])", {"],[", ","}},
      {"unicode escape", R"(["caf\u00e9"])", {R"(caf\u00e9*)"}},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    const json::JsonStringArrayView array(row.raw, row.expected.size());
    CHECK(elements(array) == row.expected);
    CHECK(array.size() == row.expected.size());
  }
}

TEST_CASE("JsonStringArrayView never reads outside its text, even when the text is not an array of strings") {
  // Bodies are validated before a view is made; these are the hand-made cases.
  for (const std::string_view raw : {std::string_view("[\"unterminated"), std::string_view("[1, 2]"),
                                     std::string_view("[\"a\\\"]"), std::string_view("["), std::string_view("x")}) {
    INFO(raw);
    // A heap block of exactly the text's size: an over-read shows under the address sanitizer.
    const std::unique_ptr<char[]> bytes(new char[raw.size()]);
    std::memcpy(bytes.get(), raw.data(), raw.size());
    const std::string_view copy(bytes.get(), raw.size());
    const json::JsonStringArrayView array(copy, 0);
    std::size_t n = 0;
    for (const auto& text : array) {
      CHECK(text.raw.data() >= copy.data());
      CHECK(text.raw.data() + text.raw.size() <= copy.data() + copy.size());
      ++n;
    }
    CHECK(n <= 1);
  }
}

TEST_CASE("JsonStringArrayView iterators are forward iterators") {
  const json::JsonStringArrayView array(R"(["a","b","c"])", 3);
  auto it = array.begin();
  auto copy = it++;
  CHECK(copy->raw == "a");
  CHECK(it->raw == "b");
  CHECK(std::distance(array.begin(), array.end()) == 3);
}
