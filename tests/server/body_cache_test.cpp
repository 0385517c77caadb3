#include "ringlab/server/body_cache.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <cstdint>
#include <initializer_list>
#include <string>

using namespace ringlab::server;

namespace {

// A generator whose body size is the key's count, and which counts its calls.
int g_generated = 0;
Body sized_body(const BodyKey& key) {
  ++g_generated;
  Body body;
  body.bytes = std::string(key.count, 'x');
  body.content_type = "application/json";
  return body;
}

BodyKey weather(uint32_t count) { return BodyKey{Route::weather, Format::json, count}; }

// A cache of sized_body bodies within these limits, with g_generated counting from zero.
BodyCache sized_cache(std::size_t max_entries, std::size_t max_bytes) {
  g_generated = 0;
  return BodyCache(BodyCacheLimits{.max_entries = max_entries, .max_bytes = max_bytes}, &sized_body);
}

// Gets the weather body of each count in turn, for what that does to the cache: a use, a generation,
// an eviction.
void get_in_turn(BodyCache& cache, std::initializer_list<uint32_t> counts) {
  for (const uint32_t count : counts) (void)cache.get(weather(count));
}

std::size_t count_array(const std::string& json) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  auto doc = parser.iterate(padded);
  std::size_t n = 0;
  for (auto element : doc.get_array()) {
    REQUIRE(element.error() == simdjson::SUCCESS);
    simdjson::ondemand::object object = element.get_object();
    (void)object;
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("generate_uncached makes the body anew every time and leaves the cache as it was") {
  BodyCache cache = sized_cache(4, 1000);
  auto cached = cache.get(weather(10));
  auto first = cache.generate_uncached(weather(10));
  auto second = cache.generate_uncached(weather(10));
  CHECK(first.get() != second.get());
  CHECK(first.get() != cached.get());
  CHECK(first->bytes == cached->bytes);
  CHECK(g_generated == 3);
  CHECK(cache.stats().uncached == 2);
  CHECK(cache.stats().hits == 0);
  CHECK(cache.entries() == 1);
  CHECK(cache.get(weather(10)).get() == cached.get());
}

TEST_CASE("a body is generated once and then served from the cache") {
  BodyCache cache = sized_cache(4, 1000);
  auto first = cache.get(weather(10));
  auto again = cache.get(weather(10));
  CHECK(first.get() == again.get());
  CHECK(g_generated == 1);
  CHECK(cache.stats().hits == 1);
  CHECK(cache.stats().misses == 1);
  // Another format or route is another body.
  auto ndjson = cache.get(BodyKey{Route::weather, Format::ndjson, 10});
  auto repos = cache.get(BodyKey{Route::repos, Format::json, 10});
  CHECK(ndjson.get() != first.get());
  CHECK(repos.get() != first.get());
  CHECK(g_generated == 3);
  CHECK(cache.entries() == 3);
  CHECK(cache.bytes() == 30);
}

TEST_CASE("find() returns a cached body and never generates one") {
  BodyCache cache = sized_cache(4, 1000);
  CHECK(cache.find(weather(10)) == nullptr);
  CHECK(g_generated == 0);
  auto made = cache.get(weather(10));
  CHECK(cache.find(weather(10)).get() == made.get());
  CHECK(g_generated == 1);
}

TEST_CASE("the least recently used body is evicted when the entry limit is reached") {
  BodyCache cache = sized_cache(2, 1000);
  get_in_turn(cache, {1, 2, 1});  // 1 is now more recent than 2
  (void)cache.get(weather(3));  // evicts 2
  CHECK(cache.entries() == 2);
  CHECK(cache.stats().evictions == 1);
  const int before = g_generated;
  (void)cache.get(weather(1));
  CHECK(g_generated == before);  // still cached
  (void)cache.get(weather(2));
  CHECK(g_generated == before + 1);  // was evicted
}

TEST_CASE("the byte limit evicts as many old bodies as needed and bounds the total") {
  BodyCache cache = sized_cache(64, 100);
  get_in_turn(cache, {20, 30, 40});
  CHECK(cache.bytes() == 90);
  (void)cache.get(weather(50));  // 20 and 30 go; 40 + 50 fit
  CHECK(cache.bytes() == 90);
  CHECK(cache.entries() == 2);
  CHECK(cache.stats().evictions == 2);
  const int before = g_generated;
  get_in_turn(cache, {40, 50});
  CHECK(g_generated == before);
}

TEST_CASE("a body larger than the byte limit is served but not cached") {
  BodyCache cache = sized_cache(64, 100);
  (void)cache.get(weather(10));
  auto big = cache.get(weather(101));
  CHECK(big->bytes.size() == 101);
  CHECK(cache.entries() == 1);  // the small one was not evicted for it
  CHECK(cache.stats().uncached == 1);
  (void)cache.get(weather(101));
  CHECK(g_generated == 3);
}

TEST_CASE("a cache with no entries allowed generates every time") {
  BodyCache cache = sized_cache(0, 1000);
  get_in_turn(cache, {5, 5});
  CHECK(g_generated == 2);
  CHECK(cache.entries() == 0);
}

TEST_CASE("an evicted body stays valid while a response still holds it") {
  BodyCache cache = sized_cache(1, 1000);
  auto held = cache.get(weather(7));
  (void)cache.get(weather(8));  // evicts 7
  CHECK(cache.stats().evictions == 1);
  CHECK(held->bytes == std::string(7, 'x'));
}

TEST_CASE("generated weather and repos bodies have exactly N records, in JSON and NDJSON") {
  for (uint32_t count : {0u, 1u, 2u, 17u, 100u}) {
    INFO("count ", count);
    Body weather_json = generate_body(BodyKey{Route::weather, Format::json, count});
    CHECK(weather_json.content_type == "application/json");
    CHECK(count_array(weather_json.bytes) == count);

    Body repos_json = generate_body(BodyKey{Route::repos, Format::json, count});
    CHECK(count_array(repos_json.bytes) == count);

    for (Route route : {Route::weather, Route::repos}) {
      Body lines = generate_body(BodyKey{route, Format::ndjson, count});
      CHECK(lines.content_type == "application/x-ndjson");
      std::size_t newlines = 0;
      for (char c : lines.bytes) newlines += c == '\n' ? 1 : 0;
      CHECK(newlines == count);
    }
  }
}

TEST_CASE("weather records carry the four fields and repos records a nested owner and topics") {
  Body weather_json = generate_body(BodyKey{Route::weather, Format::json, 3});
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(weather_json.bytes);
  auto doc = parser.iterate(padded);
  for (auto element : doc.get_array()) {
    simdjson::ondemand::object record = element.get_object();
    std::string_view date;
    int64_t celsius = 0;
    CHECK(record["date"].get_string().get(date) == simdjson::SUCCESS);
    CHECK(record["temperatureC"].get_int64().get(celsius) == simdjson::SUCCESS);
    CHECK(record["summary"].error() == simdjson::SUCCESS);
    CHECK(record["temperatureF"].error() == simdjson::SUCCESS);
  }

  Body repos_json = generate_body(BodyKey{Route::repos, Format::json, 3});
  simdjson::padded_string padded_repos(repos_json.bytes);
  auto repos = parser.iterate(padded_repos);
  std::size_t n = 0;
  for (auto element : repos.get_array()) {
    simdjson::ondemand::object record = element.get_object();
    simdjson::ondemand::object owner;
    CHECK(record.find_field_unordered("owner").get_object().get(owner) == simdjson::SUCCESS);
    simdjson::ondemand::array topics;
    CHECK(record.find_field_unordered("topics").get_array().get(topics) == simdjson::SUCCESS);
    ++n;
  }
  CHECK(n == 3);
  // About 1-2 KB per record, as the route promises.
  Body hundred = generate_body(BodyKey{Route::repos, Format::json, 100});
  CHECK(hundred.bytes.size() > 100 * 500);
  CHECK(hundred.bytes.size() < 100 * 4000);
}

TEST_CASE("a page-aligned body is a copy of the body at a page boundary, cached as a body of its own") {
  const Body plain = generate_body(BodyKey{Route::weather, Format::json, 300});
  const Body paged = generate_body(BodyKey{Route::weather, Format::json, 300, true});
  REQUIRE_FALSE(paged.page_aligned.empty());
  CHECK(reinterpret_cast<std::uintptr_t>(paged.page_aligned.data()) % 4096 == 0);
  CHECK(paged.page_aligned == plain.bytes);
  CHECK(paged.bytes == plain.bytes);
  CHECK(plain.page_aligned.empty());
  CHECK(plain.page_keep == nullptr);

  BodyCache cache;
  auto first = cache.get(BodyKey{Route::weather, Format::json, 300});
  auto aligned = cache.get(BodyKey{Route::weather, Format::json, 300, true});
  CHECK(first.get() != aligned.get());
  CHECK(cache.bytes() == 3 * plain.bytes.size());  // the copy is counted against max_bytes
}

TEST_CASE("bodies are deterministic for a given key") {
  for (Route route : {Route::weather, Route::repos}) {
    for (Format format : {Format::json, Format::ndjson}) {
      INFO(route_name(route), " ", format_name(format));
      CHECK(generate_body(BodyKey{route, format, 50}).bytes == generate_body(BodyKey{route, format, 50}).bytes);
    }
  }
}
