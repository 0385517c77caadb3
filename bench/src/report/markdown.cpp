// The markdown/console report: environment block, warnings, the main table (with the --columns extras),
// the phase and counter tables, notes and the legend.
#include "ringlab/bench/report/reporters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <set>

#include "ringlab/bench/core/diagnostics.hpp"
#include "ringlab/bench/core/findings.hpp"
#include "ringlab/bench/core/list.hpp"
#include "ringlab/bench/core/phase_fields.hpp"
#include "ringlab/bench/core/statistics.hpp"
#include "ringlab/bench/core/table.hpp"
#include "ringlab/bench/process/allocators.hpp"
#include "columns.hpp"
#include "sections.hpp"

namespace ringlab::bench {

namespace {

// The table's optional columns by their --columns names: the rows of the column table that have one.
std::vector<std::string_view> optional_columns() {
  std::vector<std::string_view> names;
  for (const columns::Column& column : columns::all()) {
    if (!column.option.empty()) names.push_back(column.option);
  }
  return names;
}

}  // namespace

std::string known_columns() {
  std::string out;
  for (std::string_view name : optional_columns()) {
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

Result<std::vector<std::string>> parse_columns(std::string_view list) {
  std::vector<std::string> out;
  // "all": every extra column, and so the full table in the console too.
  if (list == "all") {
    for (std::string_view name : optional_columns()) out.emplace_back(name);
    return out;
  }
  for (std::string_view item : split_list(list)) {
    const std::vector<std::string_view> known = optional_columns();
    if (std::find(known.begin(), known.end(), item) == known.end()) {
      return fail(fmt::format("unknown column '{}' ({})", item, known_columns()));
    }
    if (std::find(out.begin(), out.end(), item) != out.end()) {
      return fail(fmt::format("column '{}' given twice", item));
    }
    out.emplace_back(item);
  }
  return out;
}

namespace {

constexpr std::string_view kNa = "n/a";

using Column = TableColumn;

std::string group_key(const CaseResult& c) {
  std::string key = fmt::format("{}/{}/{}/{}", c.payload, c.size, c.inflight, c.allocator);
  if (c.client_threads > 1) key += fmt::format("/t{}", c.client_threads);
  return key;
}

bool several_allocators(const Report& report) {
  std::set<std::string> names;
  for (const CaseResult& c : report.cases) names.insert(c.allocator);
  return names.size() > 1;
}

// Rows of the table: indices into report.cases, with npos for a blank separator row.
constexpr std::size_t kBlank = static_cast<std::size_t>(-1);
std::vector<std::size_t> table_rows(const Report& report, const std::function<bool(const CaseResult&)>& keep) {
  std::vector<std::size_t> rows;
  std::string last;
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    const CaseResult& c = report.cases[i];
    if (!keep(c)) continue;
    const std::string key = group_key(c);
    if (!rows.empty() && key != last) rows.push_back(kBlank);
    last = key;
    rows.push_back(i);
  }
  return rows;
}

// The finest time difference a table built from iteration samples can show: one timer tick.
double iteration_granularity(const Report& report) { return report.environment.timer_resolution_ns; }
// A single op's span (a phase, an op's latency) is two readings apart: each costs the overhead.
double single_op_granularity(const Report& report) {
  return std::max(report.environment.timer_resolution_ns, report.environment.timer_overhead_ns);
}

// A time column: one unit and one precision for all its cells, the unit chosen from the values
// shown unless the table imposes one (`table_unit`), with no digit finer than `granularity_ns`
// (the timer's; 0: unknown).
Column time_column(std::string header, const Report& report, const std::vector<std::size_t>& rows,
                   double granularity_ns, const std::function<std::optional<double>(const CaseResult&)>& value,
                   const std::function<std::string(const CaseResult&)>& instead = {},
                   std::optional<Unit> table_unit = std::nullopt) {
  std::vector<double> values;
  for (std::size_t i : rows) {
    if (i == kBlank) continue;
    const auto v = value(report.cases[i]);
    if (v && std::isfinite(*v)) values.push_back(*v);
  }
  const Unit unit = table_unit ? *table_unit : time_unit_for(values);
  std::vector<double> scaled;
  for (double v : values) scaled.push_back(v / unit.scale);
  const int decimals = std::min(decimals_for(scaled), decimals_within_resolution(unit, granularity_ns));
  Column column{std::move(header), true, {}};
  for (std::size_t i : rows) {
    if (i == kBlank) {
      column.cells.emplace_back();
      continue;
    }
    const CaseResult& c = report.cases[i];
    if (instead) {
      if (std::string text = instead(c); !text.empty()) {
        column.cells.push_back(std::move(text));
        continue;
      }
    }
    const auto v = value(c);
    column.cells.push_back(v && std::isfinite(*v)
                               ? format_number(*v / unit.scale, decimals) + " " + std::string(unit.name)
                               : std::string(kNa));
  }
  return column;
}

std::string count_text(double v) {
  if (!std::isfinite(v)) return std::string(kNa);
  if (std::fabs(v - std::round(v)) < 0.005) return format_number(std::round(v), 0);
  return format_number(v, 2);
}

Column plain_column(std::string header, bool right, const Report& report, const std::vector<std::size_t>& rows,
                    const std::function<std::string(const CaseResult&)>& text) {
  Column column{std::move(header), right, {}};
  for (std::size_t i : rows) column.cells.push_back(i == kBlank ? std::string() : text(report.cases[i]));
  return column;
}

bool is_ok(const CaseResult& c) { return c.status == CaseStatus::ok; }

// Reference rows (the floors) are marked where their name is shown, and so is a client other than the
// pooled one, since one run can hold a row under two clients (--client pooled,inflight; the seeds).
std::string method_text(const CaseResult& c) {
  std::string text = c.strategy;
  if (c.reference) text += " (ref)";
  text += client_mark(c);
  return text;
}

std::string status_text(const CaseResult& c) {
  if (c.status == CaseStatus::failed) return "FAILED";
  if (c.status == CaseStatus::skipped) return "skipped";
  return {};
}

// What identifies a row: Method, Allocator (only when several ran), Payload, Size, In flight (only when
// a case had more than one request in flight). The compact table
// names the payload only when several ran, and aligns the sizes as the numbers they are.
std::vector<Column> identity_columns(const Report& report, const std::vector<std::size_t>& rows, bool compact = false) {
  std::vector<Column> columns;
  columns.push_back(plain_column("Method", false, report, rows, method_text));
  if (several_allocators(report)) {
    columns.push_back(plain_column("Allocator", false, report, rows, [](const CaseResult& c) { return c.allocator; }));
  }
  std::set<std::string> payloads;
  for (const CaseResult& c : report.cases) payloads.insert(c.payload);
  if (!compact || payloads.size() > 1) {
    columns.push_back(plain_column("Payload", false, report, rows, [](const CaseResult& c) { return c.payload; }));
  }
  columns.push_back(plain_column("Size", compact, report, rows, [](const CaseResult& c) { return std::to_string(c.size); }));
  const bool several_inflight = std::any_of(report.cases.begin(), report.cases.end(),
                                            [](const CaseResult& c) { return c.inflight > 1; });
  if (several_inflight) {
    columns.push_back(plain_column("In flight", compact, report, rows,
                                   [](const CaseResult& c) { return std::to_string(c.inflight); }));
  }
  if (std::any_of(report.cases.begin(), report.cases.end(), [](const CaseResult& c) { return c.client_threads > 1; })) {
    columns.push_back(plain_column("Threads", compact, report, rows,
                                   [](const CaseResult& c) { return std::to_string(c.client_threads); }));
  }
  return columns;
}

// One column of the main table from its row of the column table: the unit and precision of a time
// or size column chosen from the values it shows; the first time column of a table says FAILED or
// skipped for a case without numbers, every other column "-".
Column table_column(const columns::Column& spec, const Report& report, const std::vector<std::size_t>& rows,
                    bool first_time_column) {
  std::vector<double> values;
  for (std::size_t i : rows) {
    if (i == kBlank || !is_ok(report.cases[i]) || spec.number == nullptr) continue;
    const auto v = spec.number(report, report.cases[i]);
    if (v && std::isfinite(*v)) values.push_back(*v);
  }
  const auto text_of = [&](const CaseResult& c) -> std::string {
    if (!is_ok(c)) return first_time_column ? status_text(c) : std::string("-");
    if (spec.text != nullptr) return spec.text(c);
    const auto v = spec.number != nullptr ? spec.number(report, c) : std::nullopt;
    if (!v || !std::isfinite(*v)) return std::string(spec.missing != nullptr ? spec.missing(c) : kNa);
    return format_number(*v, 2);
  };
  switch (spec.kind) {
    case columns::Kind::time:
    case columns::Kind::op_time: {
      const double granularity =
          spec.kind == columns::Kind::time ? iteration_granularity(report) : single_op_granularity(report);
      return time_column(std::string(spec.header), report, rows, granularity,
                         [&](const CaseResult& c) -> std::optional<double> {
                           if (!is_ok(c)) return std::nullopt;
                           return spec.number(report, c);
                         },
                         [&](const CaseResult& c) -> std::string {
                           return is_ok(c) ? std::string() : (first_time_column ? status_text(c) : std::string("-"));
                         });
    }
    case columns::Kind::bytes: {
      std::vector<double> positive;
      for (double v : values) {
        if (v > 0) positive.push_back(v);
      }
      // One unit for the whole column, zero included ("0 KB" next to "5.67 KB", not "0 B").
      const Unit unit = size_unit_for(positive);
      return plain_column(std::string(spec.header), true, report, rows, [&](const CaseResult& c) {
        if (!is_ok(c)) return std::string("-");
        const auto v = spec.number(report, c);
        if (!v) return std::string(spec.missing != nullptr ? spec.missing(c) : kNa);
        const int decimals = unit.scale == 1 || *v == 0 ? 0 : 2;
        return format_number(*v / unit.scale, decimals) + " " + std::string(unit.name);
      });
    }
    case columns::Kind::count:
      return plain_column(std::string(spec.header), true, report, rows, [&](const CaseResult& c) {
        if (!is_ok(c)) return std::string("-");
        const auto v = spec.number(report, c);
        if (!v) return std::string(spec.missing != nullptr ? spec.missing(c) : kNa);
        return count_text(*v);
      });
    case columns::Kind::ratio:
    case columns::Kind::text:
      return plain_column(std::string(spec.header), true, report, rows, text_of);
  }
  return plain_column(std::string(spec.header), true, report, rows, text_of);
}

}  // namespace

std::vector<TableColumn> main_table(const Report& report, columns::View view) {
  const bool compact = view == columns::kCompact;
  // Rows of strategies that do not apply to the payload say nothing in the compact table: left out
  // (the console lists them once).
  const auto rows = table_rows(report, [compact](const CaseResult& c) { return !compact || !c.not_applicable; });
  if (rows.empty()) return {};
  std::vector<Column> out = identity_columns(report, rows, compact);
  bool time_seen = false;
  for (const columns::Column& spec : columns::all()) {
    if (!columns::in_table(spec, report, view)) continue;
    const bool is_time = spec.kind == columns::Kind::time;
    out.push_back(table_column(spec, report, rows, is_time && !time_seen));
    time_seen = time_seen || is_time;
  }
  return out;
}

std::string render_table(const Report& report) {
  const std::vector<TableColumn> table = main_table(report, columns::kFull);
  return table.empty() ? std::string("(no cases)\n") : render_table_columns(table);
}

std::string render_compact_table(const Report& report) {
  const std::vector<TableColumn> table = main_table(report, columns::kCompact);
  return table.empty() ? std::string("(no cases)\n") : render_table_columns(table);
}

std::vector<TableColumn> phase_table(const Report& report) {
  const bool any_sampled = std::any_of(report.cases.begin(), report.cases.end(),
                                       [](const CaseResult& c) { return is_ok(c) && c.phases.ops_sampled > 0; });
  if (!any_sampled) return {};
  // Every ok case, also one that stamps no phase (its row says n/a rather than disappearing).
  const auto rows = table_rows(report, is_ok);
  std::vector<Column> columns = identity_columns(report, rows);
  const auto phase = [](std::optional<double> Phases::*field) {
    return [field](const CaseResult& c) -> std::optional<double> { return c.phases.*field; };
  };
  // One unit for the whole table: a row reads as one request, its phases side by side.
  std::vector<double> all_values;
  for (std::size_t i : rows) {
    if (i == kBlank) continue;
    const CaseResult& c = report.cases[i];
    for (auto field : kPhaseFields) {
      if (const auto& v = c.phases.*field) all_values.push_back(*v);
    }
    all_values.push_back(c.stats.mean);
  }
  const Unit unit = time_unit_for_table(all_values);
  const double granularity = single_op_granularity(report);
  const auto phase_column = [&](std::string header, std::optional<double> Phases::*field) {
    return time_column(std::move(header), report, rows, granularity, phase(field), {}, unit);
  };
  columns.push_back(phase_column("Connect", &Phases::connect));
  columns.push_back(phase_column("Send", &Phases::send));
  columns.push_back(phase_column("Wait", &Phases::wait));
  columns.push_back(phase_column("Head", &Phases::head));
  columns.push_back(phase_column("Body", &Phases::body));
  columns.push_back(phase_column("Deserialize", &Phases::deserialize));
  columns.push_back(phase_column("Other", &Phases::other));
  // Points, not phases: from the request sent to the first and to the last body byte.
  columns.push_back(phase_column("1st body", &Phases::first_body));
  columns.push_back(phase_column("Last body", &Phases::last_body));
  // A client made per op: its own phases around the request, where a row has them.
  const bool fresh_clients = std::any_of(rows.begin(), rows.end(), [&report](std::size_t i) {
    return i != kBlank && report.cases[i].phases.client_setup.has_value();
  });
  if (fresh_clients) {
    columns.push_back(phase_column("Client free", &Phases::client_free));
    columns.push_back(phase_column("Client setup", &Phases::client_setup));
    columns.push_back(phase_column("Client teardown", &Phases::client_teardown));
  }
  columns.push_back(time_column("Mean", report, rows, iteration_granularity(report),
                                [](const CaseResult& c) -> std::optional<double> { return c.stats.mean; }, {}, unit));
  columns.push_back(plain_column("Ops sampled", true, report, rows, [](const CaseResult& c) {
    return format_number(static_cast<double>(c.phases.ops_sampled), 0);
  }));
  return columns;
}

std::string render_phase_table(const Report& report) {
  const std::vector<TableColumn> table = phase_table(report);
  return table.empty() ? std::string() : render_table_columns(table);
}

namespace {

std::string render_counter_table(const Report& report) {
  std::vector<std::string> names;
  for (const CaseResult& c : report.cases) {
    for (const auto& [name, value] : c.counters) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  if (names.empty()) return {};
  const auto rows = table_rows(report, [](const CaseResult& c) { return is_ok(c) && !c.counters.empty(); });
  if (rows.empty()) return {};
  std::vector<Column> columns;
  columns.push_back(plain_column("Method", false, report, rows, method_text));
  columns.push_back(plain_column("Payload", false, report, rows, [](const CaseResult& c) { return c.payload; }));
  columns.push_back(plain_column("Size", false, report, rows, [](const CaseResult& c) { return std::to_string(c.size); }));
  for (const std::string& name : names) {
    columns.push_back(plain_column(name + "/op", true, report, rows, [&name](const CaseResult& c) {
      const auto it = c.counters.find(name);
      if (it == c.counters.end() || !it->second) return std::string(kNa);
      return std::fabs(*it->second) >= 100 ? format_number(*it->second, 0) : format_number(*it->second, 2);
    }));
  }
  return render_table_columns(columns);
}

}  // namespace

std::string render_notes(const Report& report) {
  std::string out;
  for (const CaseResult& c : report.cases) {
    if (c.status == CaseStatus::failed) out += fmt::format("- FAILED {}: {}\n", case_label(c), c.reason);
  }
  for (const CaseResult& c : report.cases) {
    if (c.status == CaseStatus::skipped) out += fmt::format("- skipped {}: {}\n", case_label(c), c.reason);
  }
  for (const CaseResult& c : report.cases) {
    if (c.status == CaseStatus::ok && c.stats.outliers > 0) {
      out += fmt::format("- {}: {} outlier{} removed ({} -> {} samples)\n", case_label(c), c.stats.outliers,
                         c.stats.outliers == 1 ? " was" : "s were", c.samples_ns.size(), c.stats.n);
    }
  }
  for (const CaseResult& c : report.cases) {
    if (!c.notes.empty()) out += fmt::format("- {}: {}\n", case_label(c), c.notes);
  }
  return out;
}

std::string render_warnings(const Report& report) {
  const std::vector<std::string> warnings = diagnostic_warnings(report);
  if (warnings.empty()) return {};
  std::string out = "Warnings (numbers to read with care)\n";
  for (const std::string& w : warnings) out += fmt::format("- {}\n", w);
  return out;
}

std::string render_findings(const Report& report) {
  std::string out;
  // A group's detail lines come from run_findings indented by two spaces: a nested item here.
  for (const std::string& f : run_findings(report)) out += f.starts_with("  ") ? "  - " + f.substr(2) + "\n" : "- " + f + "\n";
  return out;
}

std::string render_markdown(const Report& report) {
  std::string out = render_environment(report);
  out += "\n";
  if (std::string warnings = render_warnings(report); !warnings.empty()) {
    out += warnings;
    out += "\n";
  }
  out += render_table(report);
  append_section(out, "\nWhat this run says\n", render_findings(report));
  append_section(out, "\nRequest phases (median per op)\n\n", render_phase_table(report));
  append_section(out, "\nCounters (per op)\n\n", render_counter_table(report));
  append_section(out, "\nNotes\n", render_notes(report));
  out += "\n";
  out += render_legend();
  return out;
}

}  // namespace ringlab::bench
