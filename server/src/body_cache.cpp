#include "ringlab/server/body_cache.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

#include "ringlab/json/body_writer.hpp"

namespace ringlab::server {

void start_body(json::BodyWriter& writer, const BodyKey& key) noexcept {
  json::RecordKind kind = json::RecordKind::weather;
  switch (key.route) {
    case Route::repos: kind = json::RecordKind::repos; break;
    case Route::github: kind = json::RecordKind::github; break;
    case Route::profiles: kind = json::RecordKind::profiles; break;
    default: break;  // weather (and /proxy, whose upstream answers /weather)
  }
  writer.start(kind, key.format == Format::ndjson ? json::BodyLayout::lines : json::BodyLayout::array, key.count);
}

std::string_view body_content_type(Format format) noexcept {
  return format == Format::ndjson ? "application/x-ndjson" : "application/json";
}

namespace {

// A copy of `bytes` at the start of an anonymous mapping (so at a page boundary), unmapped with the
// last reference to what `keep` holds.
void copy_to_pages(Body& body) {
  const std::size_t length = std::max<std::size_t>(body.bytes.size(), 1);
  void* pages = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) throw std::bad_alloc();
  std::memcpy(pages, body.bytes.data(), body.bytes.size());
  body.page_aligned = {static_cast<const char*>(pages), body.bytes.size()};
  body.page_keep = std::shared_ptr<const void>(pages, [length](const void* at) {
    ::munmap(const_cast<void*>(at), length);
  });
}

}  // namespace

Body generate_body(const BodyKey& key) {
  Body body;
  body.content_type = body_content_type(key.format);
  json::BodyWriter writer;
  start_body(writer, key);
  writer.write(body.bytes, SIZE_MAX);
  if (key.page_aligned) copy_to_pages(body);
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
  const std::size_t size = generated.bytes.size() + generated.page_aligned.size();
  if (size > limits_.max_bytes || limits_.max_entries == 0) {
    ++stats_.uncached;
    return std::make_shared<const Body>(std::move(generated));
  }
  if (placer_ && generated.page_aligned.empty()) placer_(generated);  // a page-aligned body is sent from its copy
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
  bytes_ -= oldest->body->bytes.size() + oldest->body->page_aligned.size();
  std::iter_swap(oldest, entries_.end() - 1);
  entries_.pop_back();
  ++stats_.evictions;
}

}  // namespace ringlab::server
