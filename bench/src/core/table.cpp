#include "ringlab/bench/core/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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

std::string format_number(double value, int decimals) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "∞" : "-∞";
  std::string digits = fmt::format("{:.{}f}", std::fabs(value), std::max(0, decimals));
  const std::size_t point = digits.find('.');
  const std::size_t int_end = point == std::string::npos ? digits.size() : point;
  std::string out;
  out.reserve(digits.size() + digits.size() / 3 + 1);
  // A value that rounds to zero has no sign.
  const bool negative = value < 0 && digits.find_first_not_of("0.") != std::string::npos;
  if (negative) out += '-';
  for (std::size_t i = 0; i < int_end; ++i) {
    if (i > 0 && (int_end - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  out.append(digits, int_end, std::string::npos);
  return out;
}

}  // namespace ringlab::bench
