#include "ringlab/server/body_cache.hpp"

#include <algorithm>
#include <utility>

#include "ringlab/json/jos.hpp"
#include "ringlab/json/serialize.hpp"

namespace ringlab::server {

Body generate_body(const BodyKey& key) {
  Body body;
  const bool ndjson = key.format == Format::ndjson;
  body.content_type = ndjson ? "application/x-ndjson" : "application/json";
  if (key.route == Route::jos) {
    if (ndjson) {
      json::append_jos_ndjson(body.bytes, key.count);
    } else {
      json::append_jos_json(body.bytes, key.count);
    }
  } else if (key.route == Route::github) {
    if (ndjson) {
      json::append_github_ndjson(body.bytes, key.count);
    } else {
      json::append_github_json(body.bytes, key.count);
    }
  } else if (key.route == Route::repos) {
    if (ndjson) {
      json::append_repos_ndjson(body.bytes, key.count);
    } else {
      json::append_repos_json(body.bytes, key.count);
    }
  } else {
    if (ndjson) {
      json::append_weather_ndjson(body.bytes, key.count);
    } else {
      json::append_weather_json(body.bytes, key.count);
    }
  }
  return body;
}

BodyCache::BodyCache(BodyCacheLimits limits, Generator generator) : limits_(limits), generator_(generator) {
  entries_.reserve(limits_.max_entries);
}

std::shared_ptr<const Body> BodyCache::find(const BodyKey& key) {
  ++clock_;
  for (Entry& entry : entries_) {
    if (entry.key == key) {
      entry.last_used = clock_;
      ++stats_.hits;
      return entry.body;
    }
  }
  return nullptr;
}

std::shared_ptr<const Body> BodyCache::get(const BodyKey& key) {
  if (auto cached = find(key)) return cached;
  ++stats_.misses;
  Body generated = generator_(key);
  const std::size_t size = generated.bytes.size();
  if (size > limits_.max_bytes || limits_.max_entries == 0) {
    ++stats_.uncached;
    return std::make_shared<const Body>(std::move(generated));
  }
  if (placer_) placer_(generated);
  auto body = std::make_shared<const Body>(std::move(generated));
  while (!entries_.empty() && (entries_.size() >= limits_.max_entries || bytes_ + size > limits_.max_bytes)) {
    evict_one();
  }
  entries_.push_back({key, body, clock_});
  bytes_ += size;
  return body;
}

std::shared_ptr<const Body> BodyCache::generate_uncached(const BodyKey& key) {
  ++stats_.uncached;
  return std::make_shared<const Body>(generator_(key));
}

void BodyCache::evict_one() {
  auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                 [](const Entry& a, const Entry& b) { return a.last_used < b.last_used; });
  bytes_ -= oldest->body->bytes.size();
  std::iter_swap(oldest, entries_.end() - 1);
  entries_.pop_back();
  ++stats_.evictions;
}

}  // namespace ringlab::server
