#pragma once
// Where a fuzz target cuts its input: 1 to 8 increasing cut points drawn from a hash of the input, so
// that a mutation of the bytes also moves the cuts, and a finding replays with the same cuts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace ringlab::fuzz {

inline uint64_t hash_of(std::string_view input) noexcept {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : input) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// 1 to 8 increasing cut points in [0, size], from the input's hash.
inline std::vector<std::size_t> cut_points(std::string_view input) {
  uint64_t state = hash_of(input) | 1;
  auto next = [&state] {  // xorshift64
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  std::vector<std::size_t> cuts;
  const std::size_t count = 1 + next() % 8;
  for (std::size_t i = 0; i < count; ++i) cuts.push_back(input.empty() ? 0 : next() % (input.size() + 1));
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

}  // namespace ringlab::fuzz
