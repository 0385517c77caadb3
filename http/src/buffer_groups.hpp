#pragma once
// Private to http/: provided-buffer group ids. A group id is per ring, and several clients (a Client,
// an InflightClient) may share one ring, so each takes its own id from this one counter. Ids start
// high, clear of group 0, which the server and the load generator use on rings of their own.
//
// Threads: any (an atomic counter); an id is never handed out twice before the counter wraps.
#include <atomic>
#include <cstdint>

namespace ringlab::http {

[[nodiscard]] inline uint16_t next_buffer_group() noexcept {
  static std::atomic<uint16_t> next{0x4000};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace ringlab::http
