#pragma once
// Reading /proc and /etc text files line by line, as views into the text (they live as long as it).
#include <string_view>

namespace ringlab::bench {

// Cuts the first line off `rest` into `line` (without its '\n'; a last line without one counts);
// false when nothing is left:  std::string_view line; while (next_line(text, line)) { ... }
inline bool next_line(std::string_view& rest, std::string_view& line) noexcept {
  if (rest.empty()) return false;
  const std::size_t end = rest.find('\n');
  line = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  return true;
}

}  // namespace ringlab::bench
