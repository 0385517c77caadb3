// The markdown/console report: environment block, warnings, the main table (with the --columns extras),
// the phase and counter tables, notes and the legend.
#include "ringlab/bench/reporters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <set>

#include "../core/list.hpp"
#include "ringlab/bench/allocators.hpp"
#include "ringlab/bench/diagnostics.hpp"
#include "ringlab/bench/findings.hpp"
#include "ringlab/bench/statistics.hpp"
#include "ringlab/bench/table.hpp"

namespace ringlab::bench {

namespace {

struct ExtraColumn {
  std::string_view name;    // as --columns takes it
  std::string_view header;  // as the table shows it
  double Latency::*field;
};
constexpr std::array<ExtraColumn, 5> kExtraColumns{{{"p50", "Op P50", &Latency::p50},
                                                    {"p90", "Op P90", &Latency::p90},
                                                    {"p99", "Op P99", &Latency::p99},
                                                    {"p999", "Op P99.9", &Latency::p999},
                                                    {"max", "Op Max", &Latency::max}}};

const ExtraColumn* find_extra_column(std::string_view name) {
  for (const ExtraColumn& column : kExtraColumns) {
    if (column.name == name) return &column;
  }
  return nullptr;
}

}  // namespace

std::string known_columns() {
  std::string out;
  for (const ExtraColumn& column : kExtraColumns) {
    if (!out.empty()) out += ',';
    out += column.name;
  }
  return out;
}

Result<std::vector<std::string>> parse_columns(std::string_view list) {
  std::vector<std::string> out;
  // "all": every extra column, and so the full table in the console too.
  if (list == "all") {
    for (const ExtraColumn& column : kExtraColumns) out.emplace_back(column.name);
    return out;
  }
  for (std::string_view item : split_list(list)) {
    if (find_extra_column(item) == nullptr) {
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
  return fmt::format("{}/{}/{}", c.payload, c.size, c.allocator);
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

// Reference rows (the floors) are marked where their name is shown.
std::string method_text(const CaseResult& c) { return c.reference ? c.strategy + " (ref)" : c.strategy; }

// A case that ran no io_uring ring (a socket peer, libcurl, floor_parse) has no SQEs or CQEs to count.
bool used_ring(const CaseResult& c) {
  return c.io.ring_enters_per_op > 0 || c.io.sqes_per_op > 0 || c.io.cqes_per_op > 0;
}

std::string status_text(const CaseResult& c) {
  if (c.status == CaseStatus::failed) return "FAILED";
  if (c.status == CaseStatus::skipped) return "skipped";
  return {};
}

std::string dash_unless_ok(const CaseResult& c, const std::function<std::string(const CaseResult&)>& text) {
  return is_ok(c) ? text(c) : "-";
}

Column ratio_column(const Report& report, const std::vector<std::size_t>& rows) {
  return plain_column("Ratio", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) {
      return k.stats.ratio ? format_number(*k.stats.ratio, 2) : std::string("?");
    });
  });
}

Column allocated_column(const Report& report, const std::vector<std::size_t>& rows) {
  std::vector<double> sizes;
  for (std::size_t i : rows) {
    if (i == kBlank) continue;
    const CaseResult& c = report.cases[i];
    if (is_ok(c) && c.memory.bytes_per_op && *c.memory.bytes_per_op > 0) sizes.push_back(*c.memory.bytes_per_op);
  }
  // One unit for the whole column, zero included ("0 KB" next to "5.67 KB", not "0 B").
  const Unit unit = size_unit_for(sizes);
  return plain_column("Allocated", true, report, rows, [unit](const CaseResult& c) {
    return dash_unless_ok(c, [unit](const CaseResult& k) {
      if (!k.memory.bytes_per_op) return std::string(kNa);
      const int decimals = unit.scale == 1 || *k.memory.bytes_per_op == 0 ? 0 : 2;
      return format_number(*k.memory.bytes_per_op / unit.scale, decimals) + " " + std::string(unit.name);
    });
  });
}

Column allocs_column(const Report& report, const std::vector<std::size_t>& rows) {
  return plain_column("Allocs/op", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) {
      return k.memory.allocs_per_op ? count_text(*k.memory.allocs_per_op) : std::string(kNa);
    });
  });
}

// Shown by default: page faults explain most of the run-to-run spread of the allocating strategies.
Column page_faults_column(const Report& report, const std::vector<std::size_t>& rows) {
  return plain_column("Page faults/op", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) { return count_text(k.memory.minor_faults_per_op); });
  });
}

Column syscalls_column(const Report& report, const std::vector<std::size_t>& rows) {
  return plain_column("Syscalls/op", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) {
      return k.io.syscalls_per_op ? count_text(*k.io.syscalls_per_op) : std::string(kNa);
    });
  });
}

// The spread of Ratio: the 95 % interval of the median of the per-round ratios.
Column ratio_interval_column(const Report& report, const std::vector<std::size_t>& rows) {
  return plain_column("Ratio 95% CI", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) {
      if (k.baseline) return std::string("-");
      if (!k.stats.ratio_low || !k.stats.ratio_high) return std::string(kNa);
      return format_number(*k.stats.ratio_low, 2) + "-" + format_number(*k.stats.ratio_high, 2);
    });
  });
}

// What identifies a row in both tables: Method, Allocator (only when several ran), Payload, Size.
std::vector<Column> identity_columns(const Report& report, const std::vector<std::size_t>& rows) {
  std::vector<Column> columns;
  columns.push_back(plain_column("Method", false, report, rows, method_text));
  if (several_allocators(report)) {
    columns.push_back(plain_column("Allocator", false, report, rows, [](const CaseResult& c) { return c.allocator; }));
  }
  columns.push_back(plain_column("Payload", false, report, rows, [](const CaseResult& c) { return c.payload; }));
  columns.push_back(plain_column("Size", false, report, rows, [](const CaseResult& c) { return std::to_string(c.size); }));
  return columns;
}

}  // namespace

std::string render_table(const Report& report) {
  const auto rows = table_rows(report, [](const CaseResult&) { return true; });
  if (rows.empty()) return "(no cases)\n";
  std::vector<Column> columns = identity_columns(report, rows);
  const auto stat = [](double Stats::*field) {
    return [field](const CaseResult& c) -> std::optional<double> {
      if (!is_ok(c)) return std::nullopt;
      return c.stats.*field;
    };
  };
  const auto dash = [](const CaseResult& c) -> std::string { return is_ok(c) ? std::string() : "-"; };
  const double granularity = iteration_granularity(report);
  columns.push_back(time_column("Mean", report, rows, granularity, stat(&Stats::mean), status_text));
  columns.push_back(time_column("Error", report, rows, granularity, stat(&Stats::error), dash));
  columns.push_back(time_column("StdDev", report, rows, granularity, stat(&Stats::stddev), dash));
  columns.push_back(time_column("Median", report, rows, granularity, stat(&Stats::median), dash));
  columns.push_back(time_column("P95", report, rows, granularity, stat(&Stats::p95), dash));
  for (const std::string& name : report.config.columns) {
    const ExtraColumn* extra = find_extra_column(name);
    if (extra == nullptr) continue;  // a newer report's column this bench does not know
    const auto field = extra->field;
    columns.push_back(time_column(std::string(extra->header), report, rows, single_op_granularity(report),
                                  [field](const CaseResult& c) -> std::optional<double> {
                                    if (!is_ok(c) || !c.latency || c.latency->count == 0) return std::nullopt;
                                    return (*c.latency).*field;
                                  },
                                  dash));
  }
  columns.push_back(ratio_column(report, rows));
  columns.push_back(plain_column("RatioSD", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) {
      return k.stats.ratio_sd ? format_number(*k.stats.ratio_sd, 2) : std::string("?");
    });
  }));
  columns.push_back(ratio_interval_column(report, rows));
  if (several_allocators(report)) {
    // Allocator jobs: the same strategy under glibc's malloc is the other yardstick.
    columns.push_back(plain_column("Sys Ratio", true, report, rows, [&report](const CaseResult& c) {
      return dash_unless_ok(c, [&report](const CaseResult& k) {
        const auto ratio = alloc::ratio_to_system(report, k);
        return ratio ? format_number(*ratio, 2) : std::string("?");
      });
    }));
  }
  columns.push_back(allocated_column(report, rows));
  columns.push_back(allocs_column(report, rows));
  columns.push_back(plain_column("Alloc Ratio", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) {
      if (!k.memory.bytes_per_op) return std::string(kNa);
      return k.memory.alloc_ratio ? format_number(*k.memory.alloc_ratio, 2) : std::string("?");
    });
  }));
  columns.push_back(page_faults_column(report, rows));
  columns.push_back(syscalls_column(report, rows));
  columns.push_back(plain_column("SQEs/op", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) { return used_ring(k) ? count_text(k.io.sqes_per_op) : "-"; });
  }));
  columns.push_back(plain_column("CQEs/op", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) { return used_ring(k) ? count_text(k.io.cqes_per_op) : "-"; });
  }));
  // Only where a case sent with SEND_ZC: how many of those sends the kernel copied anyway (all of
  // them over loopback and veth, where the receiver is on the same machine).
  const bool any_zero_copy = std::any_of(report.cases.begin(), report.cases.end(),
                                         [](const CaseResult& c) { return is_ok(c) && c.io.zero_copy_sends_per_op > 0; });
  if (any_zero_copy) {
    columns.push_back(plain_column("ZC sends/op", true, report, rows, [](const CaseResult& c) {
      return dash_unless_ok(c, [](const CaseResult& k) { return count_text(k.io.zero_copy_sends_per_op); });
    }));
    columns.push_back(plain_column("ZC copied/op", true, report, rows, [](const CaseResult& c) {
      return dash_unless_ok(c, [](const CaseResult& k) {
        return k.io.zero_copy_sends_per_op > 0 ? count_text(k.io.zero_copy_copied_per_op) : std::string("-");
      });
    }));
  }
  return render_table_columns(columns);
}

std::string render_compact_table(const Report& report) {
  // Rows of strategies that do not apply to the payload say nothing: left out (the console lists them once).
  const auto rows = table_rows(report, [](const CaseResult& c) { return !c.not_applicable; });
  if (rows.empty()) return "(no cases)\n";
  std::vector<Column> columns;
  columns.push_back(plain_column("Method", false, report, rows, method_text));
  if (several_allocators(report)) {
    columns.push_back(plain_column("Allocator", false, report, rows, [](const CaseResult& c) { return c.allocator; }));
  }
  std::set<std::string> payloads;
  for (const CaseResult& c : report.cases) payloads.insert(c.payload);
  if (payloads.size() > 1) {
    columns.push_back(plain_column("Payload", false, report, rows, [](const CaseResult& c) { return c.payload; }));
  }
  columns.push_back(plain_column("Size", true, report, rows, [](const CaseResult& c) { return std::to_string(c.size); }));
  columns.push_back(time_column(
      "Median", report, rows, iteration_granularity(report),
      [](const CaseResult& c) -> std::optional<double> {
        if (!is_ok(c)) return std::nullopt;
        return c.stats.median;
      },
      status_text));
  columns.push_back(ratio_column(report, rows));
  columns.push_back(ratio_interval_column(report, rows));
  columns.push_back(allocated_column(report, rows));
  columns.push_back(allocs_column(report, rows));
  columns.push_back(page_faults_column(report, rows));
  columns.push_back(syscalls_column(report, rows));
  return render_table_columns(columns);
}

std::string render_phase_table(const Report& report) {
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
  constexpr std::array<std::optional<double> Phases::*, 7> kPhaseFields{
      &Phases::connect, &Phases::send, &Phases::wait, &Phases::head, &Phases::body, &Phases::deserialize,
      &Phases::other};
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
  columns.push_back(time_column("Mean", report, rows, iteration_granularity(report),
                                [](const CaseResult& c) -> std::optional<double> { return c.stats.mean; }, {}, unit));
  columns.push_back(plain_column("Ops sampled", true, report, rows, [](const CaseResult& c) {
    return format_number(static_cast<double>(c.phases.ops_sampled), 0);
  }));
  return render_table_columns(columns);
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

std::string render_markdown(const Report& report) {
  std::string out = render_environment(report);
  out += "\n";
  if (std::string warnings = render_warnings(report); !warnings.empty()) {
    out += warnings;
    out += "\n";
  }
  out += render_table(report);
  if (const std::vector<std::string> findings = run_findings(report); !findings.empty()) {
    out += "\nWhat this run says\n";
    for (const std::string& f : findings) out += f.starts_with("  ") ? "  - " + f.substr(2) + "\n" : "- " + f + "\n";
  }
  if (std::string phases = render_phase_table(report); !phases.empty()) {
    out += "\nRequest phases (median per op)\n\n";
    out += phases;
  }
  if (std::string counters = render_counter_table(report); !counters.empty()) {
    out += "\nCounters (per op)\n\n";
    out += counters;
  }
  if (std::string notes = render_notes(report); !notes.empty()) {
    out += "\nNotes\n";
    out += notes;
  }
  out += "\n";
  out += render_legend();
  return out;
}

}  // namespace ringlab::bench
