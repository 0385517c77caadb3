// Report formats by name and the lists the command line takes.
#include "ringlab/bench/report/reporters.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ringlab/bench/core/list.hpp"

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

}  // namespace ringlab::bench
