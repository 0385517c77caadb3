#pragma once
// The column table: every per-case value a report shows, once. Each row says what the value is, how
// the tables format it, which reports carry it (the console's compact table, the full table of
// report.md / the HTML page / results pages, the CSV, google-benchmark's user counters) and what
// the legend says of it. The markdown and HTML tables, the CSV, the gbench counters and the legend are
// all built by walking this table, so a new column is its field in the results model (results.hpp),
// one row here and, for report.json, one line of core/report_fields.hpp.
//
// The identity of a row (Method, Allocator, Payload, Size) is not a column here: it decides the
// tables' grouping and is laid out by markdown.cpp. JSON is the results model itself
// (core/report_fields.hpp), not a view of this table.
//
// Internal to bench/src/report. Pure data and pure functions; no state.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/results.hpp"
#include "ringlab/bench/core/table.hpp"

namespace ringlab::bench::columns {

// How the tables format a value; the CSV always writes the exact number (or the text).
enum class Kind {
  time,       // ns, one unit per column, no digit finer than the timer's resolution
  op_time,    // ns of single ops (latency percentiles): no digit finer than the timer's overhead
  bytes,      // one unit per column (1 KB = 1024 B), zero shown in that unit
  count,      // per-op counts: whole numbers as such, else two decimals
  ratio,      // two decimals
  text,       // the row's own text (text())
};

// Which reports carry a column.
enum View : unsigned {
  kCompact = 1u << 0,  // the console's table (and a results page's first table)
  kFull = 1u << 1,     // report.md's table, the HTML page's, `--columns` in the console
  kCsv = 1u << 2,      // report.csv, under `key`
  kGbench = 1u << 3,   // a user counter of report.gbench.json, under `key`
};

struct Column {
  std::string_view header = {};  // in the tables; empty: not in them
  std::string_view key = {};     // CSV header and gbench counter name
  Kind kind = Kind::count;
  unsigned views = 0;
  // The number (kinds other than text); nullopt: not measured, or not meaningful for this case.
  std::optional<double> (*number)(const Report&, const CaseResult&) = nullptr;
  // The text of a text column (CSV and tables), or of a numeric column's table cell when it is more
  // than the number (an interval); nullptr: the number formatted by kind.
  std::string (*text)(const CaseResult&) = nullptr;
  // What a table shows for an ok case whose number is nullopt: "n/a" unless the row says otherwise
  // ("?": no baseline to divide by; "-": nothing of that kind happened, no ring, no zero-copy send).
  std::string_view (*missing)(const CaseResult&) = nullptr;
  // A column the tables show only for some runs (Sys Ratio with allocator jobs, the zero-copy columns
  // when a case sent with SEND_ZC); nullptr: always.
  bool (*shown)(const Report&) = nullptr;
  // The --columns name that adds it to the full table (the latency percentiles); empty: not optional.
  std::string_view option = {};
  // The legend's lines for it (report.md, --help), continuation lines indented by the caller; empty:
  // the legend says nothing of it (CSV-only fields, documented in docs/report-schema.md).
  std::string_view legend = {};
};

[[nodiscard]] std::span<const Column> all();

// Whether `column` is in the tables of `view` (kCompact or kFull) for this report.
[[nodiscard]] bool in_table(const Column& column, const Report& report, View view);

// The CSV field of a case: the exact number ("" when n/a), or the text.
[[nodiscard]] std::string csv_value(const Column& column, const Report& report, const CaseResult& c);

}  // namespace ringlab::bench::columns

namespace ringlab::bench {

// The tables as columns of finished cells (markdown.cpp builds them; render_table_columns makes them
// markdown, html.cpp makes them HTML): the main table of `view` (identity columns, then the column
// table's rows in_table), rows grouped by payload, size and allocator with a blank row between groups;
// and the phase table (empty when no case sampled its phases).
[[nodiscard]] std::vector<TableColumn> main_table(const Report& report, columns::View view);
[[nodiscard]] std::vector<TableColumn> phase_table(const Report& report);

}  // namespace ringlab::bench
