#pragma once
// Comma-separated lists as the command line takes them (--format, --columns, --sizes). Shared by the parts
// that parse them (core, run, report); not part of what bench offers outside itself.
#include <string_view>
#include <vector>

namespace ringlab::bench {

// "a, b,c" -> {"a", "b", "c"}, spaces around items trimmed; an empty list is one empty item.
inline std::vector<std::string_view> split_list(std::string_view list) {
  std::vector<std::string_view> items;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view item = list.substr(pos, comma - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    items.push_back(item);
    pos = comma + 1;
  }
  return items;
}

}  // namespace ringlab::bench
