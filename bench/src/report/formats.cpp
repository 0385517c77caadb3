// Report formats by name, the lists the command line takes, and numbers as the tables print them.
#include "ringlab/bench/reporters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "../core/list.hpp"

namespace ringlab::bench {

std::string_view format_name(Format format) noexcept {
  switch (format) {
    case Format::md: return "md";
    case Format::csv: return "csv";
    case Format::json: return "json";
    case Format::gbench: return "gbench";
    case Format::html: return "html";
  }
  return "?";
}

std::string format_file_name(Format format) {
  // gbench is JSON too: report.gbench.json, so that tools that go by the extension open it as JSON.
  return format == Format::gbench ? "report.gbench.json" : fmt::format("report.{}", format_name(format));
}


Result<std::vector<Format>> parse_formats(std::string_view list) {
  std::vector<Format> out;
  for (std::string_view item : split_list(list)) {
    Format f{};
    if (item == "md") {
      f = Format::md;
    } else if (item == "csv") {
      f = Format::csv;
    } else if (item == "json") {
      f = Format::json;
    } else if (item == "gbench") {
      f = Format::gbench;
    } else if (item == "html") {
      f = Format::html;
    } else {
      return fail(fmt::format("unknown report format '{}' (md, csv, json, gbench, html)", item));
    }
    if (std::find(out.begin(), out.end(), f) != out.end()) {
      return fail(fmt::format("report format '{}' given twice", item));
    }
    out.push_back(f);
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
