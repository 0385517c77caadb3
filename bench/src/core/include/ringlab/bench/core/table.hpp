#pragma once
// A markdown table built column by column: the one renderer behind every table bench prints (the
// main and phase tables, the counters, `bench compare`).
//
// Cells are finished text (units and rounding are the caller's); every column must have the same
// number of cells. Widths count code points, not bytes, so "μs" pads like "ns". Pure functions.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ringlab::bench {

struct TableColumn {
  std::string header;
  bool right = true;  // numbers are right-aligned
  std::vector<std::string> cells;
};

// Code points of UTF-8 text: the width a terminal gives it.
[[nodiscard]] std::size_t display_width(std::string_view text) noexcept;

// "7,793.5": fixed decimals with thousands separators, as every table and console line prints a number.
[[nodiscard]] std::string format_number(double value, int decimals);

// "| a | b |" rows under a header and a rule ("---:" for right-aligned columns); empty for no columns.
[[nodiscard]] std::string render_table_columns(const std::vector<TableColumn>& columns);

}  // namespace ringlab::bench
