#pragma once
// Where the pieces of a body end, for tests that feed a body as it would arrive: cut once at a byte, or
// one byte at a time. Each list ends at the body's size.
//
// Threads: any; nothing here is shared.
#include <cstddef>
#include <vector>

namespace ringlab::testing {

// The ends of the pieces of a body of `size` bytes cut at `cut`: one piece when the cut is at either end.
inline std::vector<std::size_t> cut_at(std::size_t cut, std::size_t size) {
  std::vector<std::size_t> ends;
  if (cut > 0 && cut < size) ends.push_back(cut);
  ends.push_back(size);
  return ends;
}

// The ends of one-byte pieces.
inline std::vector<std::size_t> byte_by_byte(std::size_t size) {
  std::vector<std::size_t> ends(size);
  for (std::size_t i = 0; i < ends.size(); ++i) ends[i] = i + 1;
  return ends;
}

}  // namespace ringlab::testing
