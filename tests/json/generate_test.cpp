// tests json/src/generate.cpp
#include "ringlab/json/generate.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

namespace json = ringlab::json;

namespace {

std::string base64_decode(std::string_view text) {
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (const char c : text) {
    if (c == '=') break;
    bits = (bits << 6) | static_cast<uint32_t>(kAlphabet.find(c));
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  return out;
}

bool is_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

TEST_CASE("splitmix64 gives the reference sequence") {
  // First outputs for seed 0 (the reference implementation's published values).
  json::SplitMix64 rng(0);
  CHECK(rng.next() == 0xE220A8397B1DCDAFULL);
  CHECK(rng.next() == 0x6E789E6AA1B965F4ULL);
  CHECK(rng.next() == 0x06C45D188009454FULL);
}

TEST_CASE("below() stays below its bound and reaches both ends") {
  json::SplitMix64 rng(1);
  bool saw_zero = false;
  bool saw_top = false;
  for (int i = 0; i < 10'000; ++i) {
    const uint64_t v = rng.below(10);
    REQUIRE(v < 10);
    saw_zero |= v == 0;
    saw_top |= v == 9;
  }
  CHECK(saw_zero);
  CHECK(saw_top);
}

TEST_CASE("a record depends only on its index, not on what was generated before") {
  json::WeatherForecast reused;
  json::Repository reused_repo;
  for (const std::size_t index : {std::size_t{5}, std::size_t{0}, std::size_t{999}, std::size_t{5}, std::size_t{123456}}) {
    INFO("index " << index);
    json::fill_weather(index, reused);
    CHECK(reused == json::make_weather(index));
    json::fill_repository(index, reused_repo);
    CHECK(reused_repo == json::make_repository(index));
  }
}

TEST_CASE("pinned first records: the generator is the same on every machine and build") {
  const json::WeatherForecast first = json::make_weather(0);
  CHECK(first.date == "2024-01-01");
  CHECK(first.temperature_c == -6);
  CHECK(first.summary == "Freezing");
  CHECK(first.temperature_f == 22);
  const json::Repository repo = json::make_repository(0);
  CHECK(repo.id == 100000963);
  CHECK(repo.full_name == "h2o206/async-index");
}

TEST_CASE("weather records follow the .NET sample") {
  std::set<std::string> summaries;
  for (std::size_t i = 0; i < 2000; ++i) {
    const json::WeatherForecast r = json::make_weather(i);
    INFO("index " << i);
    REQUIRE(r.temperature_c >= -20);
    REQUIRE(r.temperature_c < 55);
    CHECK(r.temperature_f == 32 + static_cast<int>(r.temperature_c / 0.5556));
    summaries.insert(std::string(r.summary));
    CHECK(r.date.size() == 10);
  }
  CHECK(summaries.size() == json::kWeatherSummaries);
  CHECK(json::make_weather(30).date == "2024-01-31");
  CHECK(json::make_weather(31).date == "2024-02-01");
  CHECK(json::make_weather(59).date == "2024-02-29");  // 2024 is a leap year
  CHECK(json::make_weather(366).date == "2025-01-01");
}

TEST_CASE("fahrenheit_of truncates toward zero like the C# cast") {
  CHECK(json::fahrenheit_of(0) == 32);
  CHECK(json::fahrenheit_of(-20) == -3);  // -35.99... truncates to -35
  CHECK(json::fahrenheit_of(54) == 129);
  CHECK(json::fahrenheit_of(-1) == 31);
}

TEST_CASE("weather dates keep four-digit years at any index") {
  for (const std::size_t index : {std::size_t{2'899'999}, std::size_t{2'900'000}, std::size_t{10'000'000'000}}) {
    const json::WeatherForecast r = json::make_weather(index);
    INFO("index " << index << " date " << r.date);
    CHECK(r.date.size() == 10);
    CHECK(r.date[4] == '-');
  }
  CHECK(json::make_weather(2'900'000).date == "2024-01-01");
}

TEST_CASE("repository records are consistent with themselves") {
  std::size_t with_null_license = 0, with_null_homepage = 0, with_empty_homepage = 0, with_null_language = 0;
  std::size_t organizations = 0, non_ascii = 0;
  for (std::size_t i = 0; i < 500; ++i) {
    const json::Repository r = json::make_repository(i);
    INFO("index " << i);
    CHECK(r.full_name == r.owner.login + "/" + r.name);
    CHECK(r.html_url == "https://github.com/" + r.full_name);
    CHECK(r.url == "https://api.github.com/repos/" + r.full_name);
    CHECK(r.owner.html_url == "https://github.com/" + r.owner.login);
    CHECK(base64_decode(r.node_id) == "010:Repository" + std::to_string(r.id));
    const std::string owner_node = base64_decode(r.owner.node_id);
    CHECK((owner_node == "04:User" + std::to_string(r.owner.id) ||
           owner_node == "012:Organization" + std::to_string(r.owner.id)));
    CHECK(r.watchers_count == r.stargazers_count);
    CHECK(r.topics.size() <= 6);
    CHECK(std::set<std::pmr::string>(r.topics.begin(), r.topics.end()).size() == r.topics.size());
    CHECK(r.created_at <= r.pushed_at);
    CHECK(r.pushed_at <= r.updated_at);
    CHECK(r.created_at.size() == 20);
    CHECK(is_digits(std::string_view(r.created_at).substr(0, 4)));
    CHECK(r.score >= 0.0);
    CHECK(r.score < 100.0);
    with_null_license += !r.license;
    with_null_homepage += !r.homepage;
    with_empty_homepage += r.homepage && r.homepage->empty();
    with_null_language += !r.language;
    organizations += r.owner.type == "Organization";
    non_ascii += std::any_of(r.description.begin(), r.description.end(), [](char c) { return (c & 0x80) != 0; });
  }
  // Each variant shows up: the parsers must meet nulls, empty strings and non-ASCII text.
  CHECK(with_null_license > 0);
  CHECK(with_null_homepage > 0);
  CHECK(with_empty_homepage > 0);
  CHECK(with_null_language > 0);
  CHECK(organizations > 0);
  CHECK(non_ascii > 0);
}

TEST_CASE("records are built with the allocator of the record they are filled into") {
  std::pmr::monotonic_buffer_resource arena;
  json::Repository record{json::Repository::allocator_type(&arena)};
  json::fill_repository(3, record);
  CHECK(record.description.get_allocator().resource() == &arena);
  if (record.homepage) CHECK(record.homepage->get_allocator().resource() == &arena);
  if (record.license) CHECK(record.license->name.get_allocator().resource() == &arena);
  for (const auto& topic : record.topics) CHECK(topic.get_allocator().resource() == &arena);
  CHECK(record == json::make_repository(3));
}

TEST_CASE("github records: 22 flat fields consistent with themselves, from their own stream") {
  std::size_t null_descriptions = 0, null_homepages = 0, null_languages = 0, private_ones = 0, non_ascii = 0;
  for (std::size_t i = 0; i < 500; ++i) {
    const json::GithubRepository r = json::make_github(i);
    INFO("index " << i);
    const std::size_t slash = r.full_name.find('/');
    REQUIRE(slash != std::pmr::string::npos);
    CHECK(std::string_view(r.full_name).substr(slash + 1) == std::string_view(r.name));
    CHECK(r.html_url == "https://github.com/" + r.full_name);
    CHECK(r.url == "https://api.github.com/repos/" + r.full_name);
    CHECK(base64_decode(r.node_id) == "010:Repository" + std::to_string(r.id));
    CHECK(r.watchers_count == r.stargazers_count);
    CHECK(r.created_at <= r.pushed_at);
    CHECK(r.pushed_at <= r.updated_at);
    CHECK(r.visibility == (r.is_private ? "private" : "public"));
    null_descriptions += !r.description;
    null_homepages += !r.homepage;
    null_languages += !r.language;
    private_ones += r.is_private;
    if (r.description) {
      non_ascii += std::any_of(r.description->begin(), r.description->end(), [](char c) { return (c & 0x80) != 0; });
    }
  }
  CHECK(null_descriptions > 0);
  CHECK(null_homepages > 0);
  CHECK(null_languages > 0);
  CHECK(private_ones > 0);
  CHECK(non_ascii > 0);
  // Not the repository stream: the same index gives other records.
  CHECK(json::make_github(0).id != json::make_repository(0).id);
  CHECK(json::make_github(7).name.size() > 0);
}

TEST_CASE("github records reuse the record they are filled into and take its allocator") {
  std::pmr::monotonic_buffer_resource arena;
  json::GithubRepository record{json::GithubRepository::allocator_type(&arena)};
  for (const std::size_t index : {std::size_t{3}, std::size_t{4}, std::size_t{3}}) {
    json::fill_github(index, record);
    CHECK(record == json::make_github(index));
  }
  CHECK(record.name.get_allocator().resource() == &arena);
  if (record.description) CHECK(record.description->get_allocator().resource() == &arena);
  const json::GithubRepository copy(record, json::GithubRepository::allocator_type(&arena));
  CHECK(copy == record);
}
