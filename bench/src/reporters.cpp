#include "ringlab/bench/reporters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>

#include "ringlab/bench/allocators.hpp"
#include "ringlab/bench/diagnostics.hpp"
#include "ringlab/bench/statistics.hpp"
#include "ringlab/bench/table.hpp"

namespace ringlab::bench {

std::string_view format_name(Format format) noexcept {
  switch (format) {
    case Format::md: return "md";
    case Format::csv: return "csv";
    case Format::json: return "json";
  }
  return "?";
}

namespace {

// "a, b,c" -> {"a", "b", "c"}, spaces around items trimmed; an empty list is one empty item.
std::vector<std::string_view> split_list(std::string_view list) {
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
    } else {
      return fail(fmt::format("unknown report format '{}' (md, csv, json)", item));
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

}  // namespace

std::string render_environment(const Report& report) {
  const Environment& e = report.environment;
  const Config& c = report.config;
  std::string out = "```ini\n";
  out += fmt::format("ringlab bench, {} (kernel {})\n", e.os.empty() ? "Linux" : e.os, e.kernel);
  out += fmt::format("CPU: {}, {} logical cores; governor {}; perf_event_paranoid {}\n", e.cpu, e.cores,
                     e.governor, e.perf_event_paranoid);
  out += fmt::format("Timer: {} at {} MHz ({}); overhead {} ns, resolution {} ns\n", e.tick_source,
                     format_number(e.tsc_hz / 1e6, 3), e.tsc_hz_source, format_number(e.timer_overhead_ns, 1),
                     format_number(e.timer_resolution_ns, 2));
  out += fmt::format("io_uring: {}\n", e.io_uring_features);
  out += fmt::format("Build: {}, {}; liburing {}, simdjson {} (On-Demand kernel: {}), llhttp {}\n", e.compiler,
                     e.build_type, e.liburing_version, e.simdjson_version, e.simdjson_kernel, e.llhttp_version);
  out += fmt::format("Source: ringlab {}, commit {}{}; flags: {}\n", e.version.empty() ? "n/a" : e.version,
                     e.git_commit.empty() ? "unknown" : e.git_commit,
                     e.git_dirty.value_or(false) ? " with uncommitted changes" : "",
                     e.compiler_flags.empty() ? "n/a" : e.compiler_flags);
  out += fmt::format("Allocator: {}\n", e.allocator);
  std::string pinning = e.client_cpu >= 0 ? fmt::format("client on CPU {}", e.client_cpu) : "client not pinned";
  if (e.server_cpu >= 0) pinning += fmt::format(", server on CPU {}", e.server_cpu);
  out += fmt::format("Server: {}; {}\n", e.server, pinning);
  out += fmt::format(
      "Run: suite {}, iteration time {} ms, warm-up {}, iterations {}..{}, target error {} %, {}{}\n", c.suite,
      format_number(c.iteration_time_ms, 0), c.warmup, c.iterations, c.max_iterations,
      format_number(c.target_error * 100, 1), c.interleave ? "interleaved rounds" : "one case after another",
      c.memory ? "" : ", memory diagnoser off");
  const auto load = [](const std::optional<LoadAverage>& l) {
    return l ? fmt::format("{:.2f} {:.2f} {:.2f}", l->one, l->five, l->fifteen) : std::string(kNa);
  };
  out += fmt::format("Started: {}; load average (1, 5, 15 min) at start {}, at end {}\n", e.timestamp,
                     load(e.load_average_start), load(e.load_average_end));
  for (const std::string& w : e.warnings) out += fmt::format("WARNING: {}\n", w);
  out += "```\n";
  return out;
}

std::string render_table(const Report& report) {
  const auto rows = table_rows(report, [](const CaseResult&) { return true; });
  if (rows.empty()) return "(no cases)\n";
  std::vector<Column> columns;
  columns.push_back(plain_column("Method", false, report, rows, method_text));
  if (several_allocators(report)) {
    columns.push_back(plain_column("Allocator", false, report, rows, [](const CaseResult& c) { return c.allocator; }));
  }
  columns.push_back(plain_column("Payload", false, report, rows, [](const CaseResult& c) { return c.payload; }));
  columns.push_back(plain_column("Size", false, report, rows, [](const CaseResult& c) { return std::to_string(c.size); }));
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
  columns.push_back(plain_column("Ratio", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) {
      return k.stats.ratio ? format_number(*k.stats.ratio, 2) : std::string("?");
    });
  }));
  columns.push_back(plain_column("RatioSD", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) {
      return k.stats.ratio_sd ? format_number(*k.stats.ratio_sd, 2) : std::string("?");
    });
  }));
  if (several_allocators(report)) {
    // Allocator jobs: the same strategy under glibc's malloc is the other yardstick.
    columns.push_back(plain_column("Sys Ratio", true, report, rows, [&report](const CaseResult& c) {
      return dash_unless_ok(c, [&report](const CaseResult& k) {
        const auto ratio = alloc::ratio_to_system(report, k);
        return ratio ? format_number(*ratio, 2) : std::string("?");
      });
    }));
  }
  {
    std::vector<double> sizes;
    for (std::size_t i : rows) {
      if (i == kBlank) continue;
      const CaseResult& c = report.cases[i];
      if (is_ok(c) && c.memory.bytes_per_op && *c.memory.bytes_per_op > 0) sizes.push_back(*c.memory.bytes_per_op);
    }
    // One unit for the whole column, zero included ("0 KB" next to "5.67 KB", not "0 B").
    const Unit unit = size_unit_for(sizes);
    columns.push_back(plain_column("Allocated", true, report, rows, [unit](const CaseResult& c) {
      return dash_unless_ok(c, [unit](const CaseResult& k) {
        if (!k.memory.bytes_per_op) return std::string(kNa);
        const int decimals = unit.scale == 1 || *k.memory.bytes_per_op == 0 ? 0 : 2;
        return format_number(*k.memory.bytes_per_op / unit.scale, decimals) + " " + std::string(unit.name);
      });
    }));
  }
  columns.push_back(plain_column("Allocs/op", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) {
      return k.memory.allocs_per_op ? count_text(*k.memory.allocs_per_op) : std::string(kNa);
    });
  }));
  columns.push_back(plain_column("Alloc Ratio", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) {
      if (!k.memory.bytes_per_op) return std::string(kNa);
      return k.memory.alloc_ratio ? format_number(*k.memory.alloc_ratio, 2) : std::string("?");
    });
  }));
  // Shown by default: page faults explain most of the run-to-run spread of the allocating strategies.
  columns.push_back(plain_column("Page faults/op", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) { return count_text(k.memory.minor_faults_per_op); });
  }));
  columns.push_back(plain_column("Syscalls/op", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) {
      return k.io.syscalls_per_op ? count_text(*k.io.syscalls_per_op) : std::string(kNa);
    });
  }));
  columns.push_back(plain_column("SQEs/op", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) { return used_ring(k) ? count_text(k.io.sqes_per_op) : "-"; });
  }));
  columns.push_back(plain_column("CQEs/op", true, report, rows, [](const CaseResult& c) {
    return dash_unless_ok(c, [](const CaseResult& k) { return used_ring(k) ? count_text(k.io.cqes_per_op) : "-"; });
  }));
  return render_table_columns(columns);
}

std::string render_phase_table(const Report& report) {
  const bool any_sampled = std::any_of(report.cases.begin(), report.cases.end(),
                                       [](const CaseResult& c) { return is_ok(c) && c.phases.ops_sampled > 0; });
  if (!any_sampled) return {};
  // Every ok case, also one that stamps no phase (its row says n/a rather than disappearing).
  const auto rows = table_rows(report, is_ok);
  std::vector<Column> columns;
  columns.push_back(plain_column("Method", false, report, rows, method_text));
  if (several_allocators(report)) {
    columns.push_back(plain_column("Allocator", false, report, rows, [](const CaseResult& c) { return c.allocator; }));
  }
  columns.push_back(plain_column("Payload", false, report, rows, [](const CaseResult& c) { return c.payload; }));
  columns.push_back(plain_column("Size", false, report, rows, [](const CaseResult& c) { return std::to_string(c.size); }));
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

std::string render_legend() {
  return R"legend(Legend
  Method         : the strategy (bench --list says where its bytes land and which .NET pattern it mirrors);
                   "(ref)" marks a reference row, a physical limit rather than a contender (floor_transfer:
                   the transfer alone, no parse; floor_parse: the parse alone, no network)
  Payload        : the route's records (weather: GET /weather, repos: GET /repos)
  Size           : records per response (GET) or per posted body (POST)
  Mean           : arithmetic mean of the per-op time of the measured iterations (upper outliers removed)
  Error          : half of the 99.9 % confidence interval of the mean (Student t, n-1 degrees of freedom)
  StdDev         : standard deviation of the per-op times of the iterations
  Median         : 50th percentile of the per-op times of the iterations
  P95            : 95th percentile of the per-op times of the iterations (linear interpolation)
  Op P50 .. Max  : with --columns p50,p90,p99,p999,max: percentiles and maximum of the latency of single
                   ops (those whose phases were sampled), from a log-linear histogram exact to 3 digits
  Ratio          : mean of the distribution of ratios to the baseline of the same payload and size
                   (every pairing of samples; paired by round with --interleave)
  RatioSD        : standard deviation of that distribution of ratios
  Sys Ratio      : allocator jobs only: Mean / the same strategy's Mean under the system allocator (glibc)
  Allocated      : heap bytes requested per op (malloc family and operator new; 1 KB = 1024 B)
  Allocs/op      : heap allocation calls per op
  Alloc Ratio    : Allocated / the baseline's Allocated
  Page faults/op : minor page faults of the measuring thread per op (getrusage), the usual cause of the
                   run-to-run spread of strategies that allocate megabytes per op
  Syscalls/op    : system calls on the request path per op: io_uring_enter for ringlab's io_uring
                   strategies; connect, send, recv, poll/epoll_wait for the socket peers; n/a for libcurl,
                   which does not report its own
  SQEs/op        : submission queue entries submitted per op ("-": the case uses no io_uring ring)
  CQEs/op        : completion queue entries reaped per op ("-": no io_uring ring)
  Phases         : median per op of start->connected (Connect), ->request sent (Send), ->first response
                   byte (Wait), ->headers parsed (Head), ->body complete (Body), ->deserialized (Deserialize),
                   and the time run() took outside that stamped span (Other). Medians: with a tail of slow
                   requests (a wake-up on the other CPU) they add up to less than the Mean. n/a: not seen
                   in the sampled ops (Connect on a kept-alive connection; Send and Wait for libcurl, which
                   does not say when the request went out; every phase of a case that stamps none)
  Warnings       : above the table, per case: CV (StdDev/Mean), a bimodal distribution (m-value > 3.2, as
                   BenchmarkDotNet), Error above the target error or above the Mean, fewer than 5 iterations
                   kept; and a baseline whose CV is above 10 %, which makes every ratio against it unreliable
  Precision      : one unit per column, chosen from its smallest value (the phase table: one unit for
                   the whole table, from its median value); no digit finer than the timer (its
                   resolution for iteration times, its overhead for single ops)
  ?              : no baseline in the group;  n/a : not measured;  FAILED/skipped : see the notes
  1 ns           : 1 nanosecond (0.000000001 s);  1 μs : 1 microsecond (0.000001 s);  1 ms : 0.001 s
)legend";
}

std::string render_markdown(const Report& report) {
  std::string out = render_environment(report);
  out += "\n";
  if (std::string warnings = render_warnings(report); !warnings.empty()) {
    out += warnings;
    out += "\n";
  }
  out += render_table(report);
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

std::string bool_text(bool v) { return v ? "true" : "false"; }

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
  std::vector<std::string> header{
      "strategy", "method", "payload", "size", "allocator", "baseline", "status", "reason",
      "ops_per_iteration", "warmup_iterations", "samples", "n", "outliers", "mean_ns", "error_ns", "stddev_ns",
      "median_ns", "p95_ns", "min_ns", "max_ns", "ratio", "ratio_sd", "bytes_per_op", "allocs_per_op",
      "alloc_ratio", "peak_rss_bytes", "minor_faults_per_op", "ring_enters_per_op", "sqes_per_op", "cqes_per_op",
      "connections_per_op", "zero_copy_sends_per_op", "zero_copy_copied_per_op", "syscalls_per_op",
      "phase_ops_sampled",
      "phase_connect_ns", "phase_send_ns", "phase_wait_ns", "phase_head_ns", "phase_body_ns",
      "phase_deserialize_ns", "phase_other_ns", "checksum", "reference", "cv", "m_value", "bimodal",
      "target_error_missed", "error_above_mean", "too_few_iterations", "baseline_unstable", "latency_count",
      "latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns"};
  for (const std::string& name : counter_names) header.push_back("counter:" + name);
  std::string out;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(header[i]);
  }
  out += "\n";
  for (const CaseResult& c : report.cases) {
    std::vector<std::string> f{
        c.strategy, c.method, c.payload, std::to_string(c.size), c.allocator, bool_text(c.baseline),
        std::string(status_name(c.status)), c.reason, std::to_string(c.ops_per_iteration),
        std::to_string(c.warmup_iterations), std::to_string(c.samples_ns.size()), std::to_string(c.stats.n),
        std::to_string(c.stats.outliers), csv_number(c.stats.mean), csv_number(c.stats.error),
        csv_number(c.stats.stddev), csv_number(c.stats.median), csv_number(c.stats.p95), csv_number(c.stats.min),
        csv_number(c.stats.max), csv_number(c.stats.ratio), csv_number(c.stats.ratio_sd),
        csv_number(c.memory.bytes_per_op), csv_number(c.memory.allocs_per_op), csv_number(c.memory.alloc_ratio),
        std::to_string(c.memory.peak_rss), csv_number(c.memory.minor_faults_per_op),
        csv_number(c.io.ring_enters_per_op), csv_number(c.io.sqes_per_op), csv_number(c.io.cqes_per_op),
        csv_number(c.io.connections_per_op), csv_number(c.io.zero_copy_sends_per_op),
        csv_number(c.io.zero_copy_copied_per_op), csv_number(c.io.syscalls_per_op),
        std::to_string(c.phases.ops_sampled),
        csv_number(c.phases.connect), csv_number(c.phases.send), csv_number(c.phases.wait),
        csv_number(c.phases.head), csv_number(c.phases.body), csv_number(c.phases.deserialize),
        csv_number(c.phases.other),
        fmt::format("{:#018x}", c.checksum), bool_text(c.reference), csv_number(c.diagnostics.cv),
        csv_number(c.diagnostics.m_value), bool_text(c.diagnostics.bimodal),
        bool_text(c.diagnostics.target_error_missed), bool_text(c.diagnostics.error_above_mean),
        bool_text(c.diagnostics.too_few_iterations), bool_text(c.diagnostics.baseline_unstable),
        c.latency ? std::to_string(c.latency->count) : std::string(),
        c.latency ? csv_number(c.latency->p50) : std::string(), c.latency ? csv_number(c.latency->p90) : std::string(),
        c.latency ? csv_number(c.latency->p99) : std::string(), c.latency ? csv_number(c.latency->p999) : std::string(),
        c.latency ? csv_number(c.latency->max) : std::string()};
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

std::string results_folder_name(long long unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}_{:02}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

Result<std::vector<std::filesystem::path>> write_reports(const Report& report, const std::filesystem::path& root,
                                                         const std::vector<Format>& formats, long long unix_seconds) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return fail(fmt::format("create {}: {}", root.string(), ec.message()));
  const std::string base = results_folder_name(unix_seconds);
  fs::path folder;
  for (int attempt = 1; attempt < 1000; ++attempt) {
    folder = root / (attempt == 1 ? base : fmt::format("{}-{}", base, attempt));
    if (fs::create_directory(folder, ec)) break;
    if (ec) return fail(fmt::format("create {}: {}", folder.string(), ec.message()));
    folder.clear();  // exists: try the next suffix
  }
  if (folder.empty()) return fail(fmt::format("create {}/{}: every suffix up to 999 exists", root.string(), base));
  std::vector<fs::path> written;
  for (Format format : formats) {
    const fs::path path = folder / fmt::format("report.{}", format_name(format));
    std::string text;
    switch (format) {
      case Format::md: text = render_markdown(report); break;
      case Format::csv: text = render_csv(report); break;
      case Format::json: text = render_json(report); break;
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return fail(errno_message("open", path.string(), errno));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) return fail(errno_message("write", path.string(), errno));
    written.push_back(path);
  }
  return written;
}

}  // namespace ringlab::bench
