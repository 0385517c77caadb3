#include "ringlab/bench/table.hpp"

#include <algorithm>

namespace ringlab::bench {

std::size_t display_width(std::string_view text) noexcept {
  std::size_t width = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++width;  // count code points, not continuation bytes
  }
  return width;
}

std::string render_table_columns(const std::vector<TableColumn>& columns) {
  if (columns.empty()) return {};
  const std::size_t rows = columns.front().cells.size();
  std::vector<std::size_t> widths;
  for (const TableColumn& c : columns) {
    std::size_t w = display_width(c.header);
    for (const std::string& cell : c.cells) w = std::max(w, display_width(cell));
    widths.push_back(w);
  }
  // Appends " text |" padded to `width` (appending piecewise: GCC 12 at -O3 warns falsely
  // (-Wrestrict) on `"literal" + std::string&&`).
  const auto cell = [](std::string& out, std::string_view text, std::size_t width, bool right) {
    const std::size_t fill = width - display_width(text);
    out += ' ';
    if (right) out.append(fill, ' ');
    out += text;
    if (!right) out.append(fill, ' ');
    out += " |";
  };
  std::string out = "|";
  for (std::size_t i = 0; i < columns.size(); ++i) cell(out, columns[i].header, widths[i], columns[i].right);
  out += "\n|";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    out.append(columns[i].right ? widths[i] + 1 : widths[i] + 2, '-');
    out += columns[i].right ? ":|" : "|";
  }
  out += "\n";
  for (std::size_t r = 0; r < rows; ++r) {
    out += "|";
    for (std::size_t i = 0; i < columns.size(); ++i) cell(out, columns[i].cells[r], widths[i], columns[i].right);
    out += "\n";
  }
  return out;
}

}  // namespace ringlab::bench
