#pragma once
// BodyCache: the generated bodies of /weather, /repos, /github and /profiles, serialized once per (route, count,
// format) and then served from memory.
//
// Bounds (both have defaults, and flags in the server binary): at most max_entries bodies and
// max_bytes bytes in total; the least recently used body is evicted first. A body larger than
// max_bytes on its own is generated, served and not cached (a count=1000000 /repos body is about
// 1.5 GB: asking for it twice generates it twice, which is the honest cost of asking).
//
// Generation runs on the calling thread, so a miss for a large N stalls that server thread while it
// serializes; the bodies are deterministic for a given key (json/ uses a fixed seed).
//
// Threads: one cache per server thread, no locking. A body is shared (std::shared_ptr<const Body>)
// between the cache and the responses still sending it, so eviction never frees bytes that a send
// in flight refers to.
//
// Lookup is a linear scan: with at most a few dozen entries it costs less than hashing.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ringlab/server/routes.hpp"

namespace ringlab::json {
class BodyWriter;  // json/body_writer.hpp: json/ stays private to the server library
}  // namespace ringlab::json

namespace ringlab::server {

struct BodyKey {
  Route route = Route::weather;  // weather, repos, github or profiles
  Format format = Format::json;
  uint32_t count = 0;
  // pages=1 (routes.hpp): the body also gets a page-aligned copy (Body::page_aligned).
  bool page_aligned = false;
  friend bool operator==(const BodyKey&, const BodyKey&) = default;
};

// Where the server's body strategy put a cached body besides its bytes (server.hpp): a copy in the
// worker's registered memory (fixed) or a file (sendfile). Filled by the cache's placer before the
// body is shared; `keep` gives them back when the last reference to the body goes.
struct BodyPlacement {
  const char* fixed = nullptr;  // the copy of bytes.data() in registered memory; null: none
  uint16_t buf_index = 0;
  int file_fd = -1;             // the bytes from offset 0; -1: none
  std::shared_ptr<const void> keep;
};

struct Body {
  std::string bytes;
  std::string_view content_type;  // a string literal
  BodyPlacement placement;
  // BodyKey::page_aligned: `bytes` copied to the start of an anonymous mapping of their own, which the
  // answer sends instead of `bytes`; `page_keep` unmaps it with the last reference. Empty otherwise.
  std::string_view page_aligned;
  std::shared_ptr<const void> page_keep;
};

// Serializes the body for `key` with json/ (weather, repos, github or profiles records, JSON array or NDJSON),
// and makes its page-aligned copy when the key asks for one (std::bad_alloc when that cannot be mapped).
[[nodiscard]] Body generate_body(const BodyKey& key);
// What json::BodyWriter is started with for `key` (generate_body does it; so does a body serialized as
// it is sent, server.hpp's serializer_buffer_bytes).
void start_body(json::BodyWriter& writer, const BodyKey& key) noexcept;
// "application/json" or "application/x-ndjson": the Content-Type of a body of `format`.
[[nodiscard]] std::string_view body_content_type(Format format) noexcept;

struct BodyCacheLimits {
  std::size_t max_entries = 64;
  std::size_t max_bytes = 256u << 20;
};

struct BodyCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;     // generated
  uint64_t evictions = 0;
  uint64_t uncached = 0;   // generated and not kept: larger than max_bytes, or asked for with cache=0
};

class BodyCache {
 public:
  using Generator = Body (*)(const BodyKey&);
  // Runs on each body about to enter the cache (not on uncached ones), before it is shared.
  using Placer = std::function<void(Body&)>;

  explicit BodyCache(BodyCacheLimits limits = {}, Generator generator = &generate_body);
  void set_placer(Placer placer) { placer_ = std::move(placer); }

  // The body for `key`, generated on a miss.
  [[nodiscard]] std::shared_ptr<const Body> get(const BodyKey& key);
  // A body for `key` generated now and not kept (cache=0: the cost of serializing per request);
  // counted as uncached. The cache's entries are neither used nor changed.
  [[nodiscard]] std::shared_ptr<const Body> generate_uncached(const BodyKey& key);
  // The body for `key` if it is cached (counted as a hit, and marked used), else null; never
  // generates. HEAD uses it: the head of an answer should not cost the answer's generation.
  [[nodiscard]] std::shared_ptr<const Body> find(const BodyKey& key);

  [[nodiscard]] std::size_t entries() const noexcept { return entries_.size(); }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] const BodyCacheStats& stats() const noexcept { return stats_; }
  [[nodiscard]] const BodyCacheLimits& limits() const noexcept { return limits_; }

 private:
  struct Entry {
    BodyKey key;
    std::shared_ptr<const Body> body;
    uint64_t last_used = 0;
  };
  void evict_one();

  BodyCacheLimits limits_;
  Generator generator_;
  Placer placer_;
  std::vector<Entry> entries_;
  std::size_t bytes_ = 0;
  uint64_t clock_ = 0;
  BodyCacheStats stats_;
};

}  // namespace ringlab::server
