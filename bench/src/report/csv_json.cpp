// The CSV and JSON reports: exact values in base units, empty (CSV) or null (JSON) where n/a.
#include "ringlab/bench/report/reporters.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "columns.hpp"

namespace ringlab::bench {

namespace {

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
  return out;
}

std::string csv_number(double v) {
  if (!std::isfinite(v)) return {};
  return fmt::format("{}", v);  // shortest text that reads back to the same double
}

std::string csv_number(const std::optional<double>& v) { return v ? csv_number(*v) : std::string(); }

}  // namespace

std::string render_csv(const Report& report) {
  std::vector<std::string> counter_names;
  for (const CaseResult& c : report.cases) {
    for (const auto& [name, value] : c.counters) {
      if (std::find(counter_names.begin(), counter_names.end(), name) == counter_names.end()) {
        counter_names.push_back(name);
      }
    }
  }
  std::vector<std::string> header;
  for (const columns::Column& column : columns::all()) {
    if (column.views & columns::kCsv) header.emplace_back(column.key);
  }
  for (const std::string& name : counter_names) header.push_back("counter:" + name);
  std::string out;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(header[i]);
  }
  out += "\n";
  for (const CaseResult& c : report.cases) {
    std::vector<std::string> f;
    for (const columns::Column& column : columns::all()) {
      if (column.views & columns::kCsv) f.push_back(columns::csv_value(column, report, c));
    }
    for (const std::string& name : counter_names) {
      const auto it = c.counters.find(name);
      f.push_back(it == c.counters.end() ? std::string() : csv_number(it->second));
    }
    for (std::size_t i = 0; i < f.size(); ++i) {
      if (i > 0) out += ',';
      out += csv_field(f[i]);
    }
    out += "\n";
  }
  return out;
}

std::string render_json(const Report& report) { return to_json(report).dump(2) + "\n"; }

}  // namespace ringlab::bench
