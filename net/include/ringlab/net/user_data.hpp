#pragma once
// The one place where an SQE's user_data is encoded and decoded.
//
// user_data is the address of the CompletionHandler (8-byte aligned, so the low 3 bits are free),
// or kIgnored for SQEs whose completion is dropped (linked timeouts, fire-and-forget closes).
#include <cstdint>

namespace ringlab::net {

class CompletionHandler;

inline constexpr uint64_t kIgnoredUserData = 1;

[[nodiscard]] inline uint64_t encode_user_data(const CompletionHandler* handler) noexcept {
  return handler == nullptr ? kIgnoredUserData : reinterpret_cast<uint64_t>(handler);
}

// Null for ignored completions.
[[nodiscard]] inline CompletionHandler* decode_user_data(uint64_t user_data) noexcept {
  return user_data == kIgnoredUserData ? nullptr : reinterpret_cast<CompletionHandler*>(user_data);
}

}  // namespace ringlab::net
