// The gbench report: google-benchmark's JSON output format, so that its tools/compare.py (Debian's
// libbenchmark-tools) and whatever reads google-benchmark's JSON can load a ringlab run.
//
// How a ringlab case maps onto google-benchmark's model (reporters.hpp says it in short):
// - one benchmark family per strategy, one instance per case: name "<strategy>/<method>/<payload>/<size>"
//   ("/allocator:<name>" added when the run had allocator jobs);
// - each measured iteration of the case is one repetition: run_type "iteration", iterations = ops per
//   iteration, real_time = that iteration's ns per op (every sample, outliers included, in order);
// - then the aggregates google-benchmark writes after repetitions: "<name>_mean", "_median",
//   "_stddev" (time) and "_cv" (percentage), from ringlab's statistics (upper outliers removed);
// - cpu_time: the bench thread's task-clock per op when the run counted it (--counters), the same for
//   every repetition since it is counted per case; otherwise real_time, which the context says;
// - ringlab's per-op counters (memory, I/O, phases, perf counters, the ratio) as user counters on the
//   repetitions and the mean and median aggregates; a value that was not measured is left out;
// - a failed or skipped case is one entry with error_occurred and error_message, as google-benchmark
//   writes a benchmark that called SkipWithError.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "ringlab/bench/report/reporters.hpp"
#include "columns.hpp"

namespace ringlab::bench {

namespace {

using nlohmann::ordered_json;

// google-benchmark's library_build_type: "release" or "debug".
std::string build_type_of(const Environment& e) {
  std::string lower = e.build_type;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return lower.starts_with("debug") ? "debug" : "release";
}

ordered_json context_of(const Report& report, bool cpu_time_measured) {
  const Environment& e = report.environment;
  ordered_json context;
  context["date"] = e.timestamp;
  context["host_name"] = "";
  context["executable"] = "bench";
  context["num_cpus"] = e.cores;
  context["mhz_per_cpu"] = static_cast<long long>(std::llround(e.tsc_hz / 1e6));
  // google-benchmark's test: a cpufreq governor other than "performance" scales the frequency.
  context["cpu_scaling_enabled"] = !e.governor.empty() && e.governor != "n/a" && e.governor != "performance";
  context["caches"] = ordered_json::array();
  if (e.load_average_start) {
    context["load_avg"] = {e.load_average_start->one, e.load_average_start->five, e.load_average_start->fifteen};
  } else {
    context["load_avg"] = ordered_json::array();
  }
  context["library_build_type"] = build_type_of(e);
  context["json_schema_version"] = 1;
  // ringlab's own keys: a reader of google-benchmark's schema ignores them.
  context["ringlab_report_schema_version"] = report.schema_version;
  context["ringlab_cpu"] = e.cpu;
  context["ringlab_kernel"] = e.kernel;
  context["ringlab_compiler"] = e.compiler;
  context["ringlab_build_type"] = e.build_type;
  context["ringlab_git_commit"] = e.git_commit;
  context["ringlab_suite"] = report.config.suite;
  context["ringlab_cpu_time"] = cpu_time_measured
                                    ? "task-clock of the bench thread per op, counted per case (--counters)"
                                    : "equal to real_time: run with --counters to count the bench thread's CPU time";
  context["ringlab_warnings"] = e.warnings;
  if (report.partial) context["ringlab_partial"] = true;
  return context;
}

void put(ordered_json& entry, const std::string& name, const std::optional<double>& value) {
  if (value && std::isfinite(*value)) entry[name] = *value;
}

// The case's per-op values as google-benchmark user counters (plain numbers next to the fixed keys):
// the column table's rows marked kGbench, then the perf counters.
void put_counters(ordered_json& entry, const Report& report, const CaseResult& c) {
  for (const columns::Column& column : columns::all()) {
    if ((column.views & columns::kGbench) && column.number != nullptr) put(entry, std::string(column.key), column.number(report, c));
  }
  for (const auto& [name, value] : c.counters) put(entry, name, value);
}

std::string benchmark_name(const CaseResult& c, bool allocator_jobs) {
  std::string name = fmt::format("{}/{}/{}/{}", c.strategy, c.method, c.payload, c.size);
  if (c.inflight > 1) name += fmt::format("/inflight:{}", c.inflight);
  if (c.client_threads > 1) name += fmt::format("/client_threads:{}", c.client_threads);
  if (allocator_jobs) name += "/allocator:" + c.allocator;
  return name;
}

}  // namespace

std::string render_gbench(const Report& report) {
  bool allocator_jobs = false;
  bool cpu_time_measured = false;
  for (const CaseResult& c : report.cases) {
    allocator_jobs = allocator_jobs || c.allocator != report.cases.front().allocator;
    const auto task_clock = c.counters.find("task-clock");
    cpu_time_measured = cpu_time_measured || (task_clock != c.counters.end() && task_clock->second.has_value());
  }
  std::vector<std::string> families;  // strategies in the order they first ran
  std::vector<std::size_t> instances;  // cases seen so far per family

  ordered_json benchmarks = ordered_json::array();
  for (const CaseResult& c : report.cases) {
    auto family = std::find(families.begin(), families.end(), c.strategy);
    if (family == families.end()) {
      families.push_back(c.strategy);
      instances.push_back(0);
      family = families.end() - 1;
    }
    const auto family_index = static_cast<std::size_t>(family - families.begin());
    const std::size_t instance_index = instances[family_index]++;
    const std::string name = benchmark_name(c, allocator_jobs);
    const std::size_t repetitions = std::max<std::size_t>(1, c.samples_ns.size());

    const auto base = [&](const std::string& entry_name, std::string_view run_type) {
      ordered_json entry;
      entry["name"] = entry_name;
      entry["family_index"] = family_index;
      entry["per_family_instance_index"] = instance_index;
      entry["run_name"] = name;
      entry["run_type"] = run_type;
      entry["repetitions"] = repetitions;
      return entry;
    };

    if (c.status != CaseStatus::ok || c.samples_ns.empty()) {
      ordered_json entry = base(name, "iteration");
      entry["repetition_index"] = 0;
      entry["threads"] = 1;
      entry["error_occurred"] = true;
      entry["error_message"] = fmt::format("{}: {}", status_name(c.status),
                                           c.reason.empty() ? std::string("no samples") : c.reason);
      entry["iterations"] = 0;
      entry["real_time"] = 0.0;
      entry["cpu_time"] = 0.0;
      entry["time_unit"] = "ns";
      benchmarks.push_back(std::move(entry));
      continue;
    }

    std::optional<double> task_clock;
    if (const auto it = c.counters.find("task-clock"); it != c.counters.end()) task_clock = it->second;
    const auto cpu_or = [&](double real) { return task_clock.value_or(real); };

    for (std::size_t i = 0; i < c.samples_ns.size(); ++i) {
      ordered_json entry = base(name, "iteration");
      entry["repetition_index"] = i;
      entry["threads"] = 1;
      entry["iterations"] = c.ops_per_iteration;
      entry["real_time"] = c.samples_ns[i];
      entry["cpu_time"] = cpu_or(c.samples_ns[i]);
      entry["time_unit"] = "ns";
      put_counters(entry, report, c);
      benchmarks.push_back(std::move(entry));
    }
    struct Aggregate {
      std::string_view name;
      std::string_view unit;
      double real;
      double cpu;
      bool counters;
    };
    const double cv = c.stats.mean > 0 ? c.stats.stddev / c.stats.mean : 0.0;
    const Aggregate aggregates[] = {
        {"mean", "time", c.stats.mean, cpu_or(c.stats.mean), true},
        {"median", "time", c.stats.median, cpu_or(c.stats.median), true},
        // One task-clock value per case: its spread across repetitions was not measured.
        {"stddev", "time", c.stats.stddev, task_clock ? 0.0 : c.stats.stddev, false},
        {"cv", "percentage", cv, task_clock ? 0.0 : cv, false},
    };
    for (const Aggregate& a : aggregates) {
      ordered_json entry = base(fmt::format("{}_{}", name, a.name), "aggregate");
      entry["threads"] = 1;
      entry["aggregate_name"] = a.name;
      entry["aggregate_unit"] = a.unit;
      entry["iterations"] = c.ops_per_iteration;  // as google-benchmark: the repetitions' iterations
      entry["real_time"] = a.real;
      entry["cpu_time"] = a.cpu;
      entry["time_unit"] = "ns";
      if (a.counters) put_counters(entry, report, c);
      benchmarks.push_back(std::move(entry));
    }
  }

  ordered_json out;
  out["context"] = context_of(report, cpu_time_measured);
  out["benchmarks"] = std::move(benchmarks);
  return out.dump(2) + "\n";
}

}  // namespace ringlab::bench
