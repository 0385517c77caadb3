#include "ringlab/bench/results.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "ringlab/bench/diagnostics.hpp"
#include "ringlab/bench/statistics.hpp"

namespace ringlab::bench {

using nlohmann::json;

std::string_view status_name(CaseStatus status) noexcept {
  switch (status) {
    case CaseStatus::ok: return "ok";
    case CaseStatus::skipped: return "skipped";
    case CaseStatus::failed: return "failed";
  }
  return "failed";
}

std::optional<CaseStatus> parse_status(std::string_view name) noexcept {
  if (name == "ok") return CaseStatus::ok;
  if (name == "skipped") return CaseStatus::skipped;
  if (name == "failed") return CaseStatus::failed;
  return std::nullopt;
}

std::string case_key(const CaseResult& c) {
  std::string key = c.method;
  key += '/';
  key += c.payload;
  key += '/';
  key += std::to_string(c.size);
  key += '/';
  key += c.allocator;
  return key;
}

std::string case_label(const CaseResult& c) {
  std::string label = c.strategy;
  label += ' ';
  label += c.payload;
  label += ' ';
  label += std::to_string(c.size);
  if (!c.allocator.empty()) {
    label += " (";
    label += c.allocator;
    label += ')';
  }
  return label;
}

void summarize_samples(CaseResult& c) {
  c.outliers = upper_outliers(c.samples_ns);
  const Summary summary = summarize(without(c.samples_ns, c.outliers));
  c.stats.n = summary.n;
  c.stats.outliers = c.outliers.size();
  c.stats.mean = summary.mean;
  c.stats.error = summary.error;
  c.stats.stddev = summary.stddev;
  c.stats.median = summary.median;
  c.stats.p95 = summary.p95;
  c.stats.min = summary.min;
  c.stats.max = summary.max;
}

void compute_ratios(Report& report) {
  std::unordered_map<std::string, const CaseResult*> baselines;
  for (const CaseResult& c : report.cases) {
    if (c.baseline && c.status == CaseStatus::ok) baselines.emplace(case_key(c), &c);
  }
  for (CaseResult& c : report.cases) {
    c.stats.ratio.reset();
    c.stats.ratio_sd.reset();
    c.memory.alloc_ratio.reset();
    if (c.status != CaseStatus::ok) continue;
    const auto found = baselines.find(case_key(c));
    if (found == baselines.end()) continue;
    const CaseResult& base = *found->second;
    if (&base == &c) {
      // BenchmarkDotNet's convention: the baseline against itself is exactly 1 with no spread.
      c.stats.ratio = 1.0;
      c.stats.ratio_sd = 0.0;
    } else {
      RatioStats r;
      if (report.config.interleave) {
        // Pair by round: drop a round if either side discarded it as an outlier.
        std::vector<double> x;
        std::vector<double> b;
        const std::size_t n = std::min(c.samples_ns.size(), base.samples_ns.size());
        for (std::size_t i = 0; i < n; ++i) {
          const bool out = std::find(c.outliers.begin(), c.outliers.end(), i) != c.outliers.end() ||
                           std::find(base.outliers.begin(), base.outliers.end(), i) != base.outliers.end();
          if (out) continue;
          x.push_back(c.samples_ns[i]);
          b.push_back(base.samples_ns[i]);
        }
        r = ratio_paired(x, b);
      } else {
        r = ratio_all_pairs(without(c.samples_ns, c.outliers), without(base.samples_ns, base.outliers));
      }
      if (std::isfinite(r.mean)) {
        c.stats.ratio = r.mean;
        c.stats.ratio_sd = r.sd;
      }
    }
    if (c.memory.bytes_per_op && base.memory.bytes_per_op) {
      if (*base.memory.bytes_per_op > 0) {
        c.memory.alloc_ratio = *c.memory.bytes_per_op / *base.memory.bytes_per_op;
      } else if (*c.memory.bytes_per_op == 0) {
        c.memory.alloc_ratio = 1.0;  // neither allocates: the same, not undefined
      }
    }
  }
  compute_diagnostics(report);
}

void merge_reports(Report& into, Report from) {
  for (std::string& warning : from.environment.warnings) {
    into.environment.warnings.push_back(from.environment.allocator + ": " + warning);
  }
  into.cases.insert(into.cases.end(), std::make_move_iterator(from.cases.begin()),
                    std::make_move_iterator(from.cases.end()));
  compute_ratios(into);
}

namespace {

json optional_number(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}

json number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

json load_average_json(const std::optional<LoadAverage>& load) {
  if (!load) return nullptr;
  return json{{"one", number(load->one)}, {"five", number(load->five)}, {"fifteen", number(load->fifteen)}};
}

json environment_json(const Environment& e) {
  return json{{"timestamp", e.timestamp},
              {"cpu", e.cpu},
              {"cores", e.cores},
              {"kernel", e.kernel},
              {"os", e.os},
              {"io_uring_features", e.io_uring_features},
              {"governor", e.governor},
              {"perf_event_paranoid", e.perf_event_paranoid},
              {"compiler", e.compiler},
              {"build_type", e.build_type},
              {"version", e.version},
              {"git_commit", e.git_commit},
              {"git_dirty", e.git_dirty ? json(*e.git_dirty) : json(nullptr)},
              {"compiler_flags", e.compiler_flags},
              {"load_average_start", load_average_json(e.load_average_start)},
              {"load_average_end", load_average_json(e.load_average_end)},
              {"liburing_version", e.liburing_version},
              {"simdjson_version", e.simdjson_version},
              {"llhttp_version", e.llhttp_version},
              {"simdjson_kernel", e.simdjson_kernel},
              {"allocator", e.allocator},
              {"tick_source", e.tick_source},
              {"tsc_hz", number(e.tsc_hz)},
              {"tsc_hz_source", e.tsc_hz_source},
              {"timer_overhead_ns", number(e.timer_overhead_ns)},
              {"timer_resolution_ns", number(e.timer_resolution_ns)},
              {"client_cpu", e.client_cpu},
              {"server_cpu", e.server_cpu},
              {"server", e.server},
              {"warnings", e.warnings}};
}

json config_json(const Config& c) {
  return json{{"suite", c.suite},
              {"filter", c.filter},
              {"sizes", c.sizes},
              {"payload", c.payload},
              {"iteration_time_ms", c.iteration_time_ms},
              {"warmup", c.warmup},
              {"iterations", c.iterations},
              {"max_iterations", c.max_iterations},
              {"target_error", c.target_error},
              {"interleave", c.interleave},
              {"memory", c.memory},
              {"phases", c.phases},
              {"counters", c.counters},
              {"allocators", c.allocators},
              {"url", c.url},
              {"out", c.out},
              {"formats", c.formats},
              {"columns", c.columns},
              {"cpu", c.cpu},
              {"server_cpu", c.server_cpu},
              {"arguments", c.arguments}};
}

json latency_json(const std::optional<Latency>& latency) {
  if (!latency) return nullptr;
  // Buckets as [lowest_ns, highest_ns, count] triples: compact, and a plot reads them directly.
  json buckets = json::array();
  for (const LatencyBucket& b : latency->buckets) buckets.push_back(json::array({b.lowest_ns, b.highest_ns, b.count}));
  return json{{"count", latency->count},
              {"p50", number(latency->p50)},
              {"p90", number(latency->p90)},
              {"p99", number(latency->p99)},
              {"p999", number(latency->p999)},
              {"max", number(latency->max)},
              {"buckets", std::move(buckets)}};
}

json diagnostics_json(const Diagnostics& d) {
  return json{{"cv", optional_number(d.cv)},
              {"m_value", optional_number(d.m_value)},
              {"bimodal", d.bimodal},
              {"target_error_missed", d.target_error_missed},
              {"error_above_mean", d.error_above_mean},
              {"too_few_iterations", d.too_few_iterations},
              {"baseline_unstable", d.baseline_unstable}};
}

json case_json(const CaseResult& c) {
  json samples = json::array();
  for (double s : c.samples_ns) samples.push_back(number(s));
  json counters = json::object();
  for (const auto& [name, value] : c.counters) counters[name] = optional_number(value);
  return json{
      {"strategy", c.strategy},
      {"method", c.method},
      {"payload", c.payload},
      {"size", c.size},
      {"allocator", c.allocator},
      {"baseline", c.baseline},
      {"reference", c.reference},
      {"status", status_name(c.status)},
      {"reason", c.reason},
      {"ops_per_iteration", c.ops_per_iteration},
      {"warmup_iterations", c.warmup_iterations},
      {"samples_ns", std::move(samples)},
      {"outliers", c.outliers},
      {"stats",
       {{"n", c.stats.n},
        {"outliers", c.stats.outliers},
        {"mean", number(c.stats.mean)},
        {"error", number(c.stats.error)},
        {"stddev", number(c.stats.stddev)},
        {"median", number(c.stats.median)},
        {"p95", number(c.stats.p95)},
        {"min", number(c.stats.min)},
        {"max", number(c.stats.max)},
        {"ratio", optional_number(c.stats.ratio)},
        {"ratio_sd", optional_number(c.stats.ratio_sd)}}},
      {"memory",
       {{"bytes_per_op", optional_number(c.memory.bytes_per_op)},
        {"allocs_per_op", optional_number(c.memory.allocs_per_op)},
        {"alloc_ratio", optional_number(c.memory.alloc_ratio)},
        {"peak_rss", c.memory.peak_rss},
        {"minor_faults_per_op", number(c.memory.minor_faults_per_op)}}},
      {"io",
       {{"ring_enters_per_op", number(c.io.ring_enters_per_op)},
        {"sqes_per_op", number(c.io.sqes_per_op)},
        {"cqes_per_op", number(c.io.cqes_per_op)},
        {"connections_per_op", number(c.io.connections_per_op)},
        {"zero_copy_sends_per_op", number(c.io.zero_copy_sends_per_op)},
        {"zero_copy_copied_per_op", number(c.io.zero_copy_copied_per_op)},
        {"syscalls_per_op", optional_number(c.io.syscalls_per_op)}}},
      {"phases",
       {{"ops_sampled", c.phases.ops_sampled},
        {"connect", optional_number(c.phases.connect)},
        {"send", optional_number(c.phases.send)},
        {"wait", optional_number(c.phases.wait)},
        {"head", optional_number(c.phases.head)},
        {"body", optional_number(c.phases.body)},
        {"deserialize", optional_number(c.phases.deserialize)},
        {"other", optional_number(c.phases.other)}}},
      {"latency", latency_json(c.latency)},
      {"diagnostics", diagnostics_json(c.diagnostics)},
      {"counters", std::move(counters)},
      {"checksum", c.checksum},
      {"notes", c.notes}};
}

// Readers. A missing key keeps the default (older files stay readable when fields are added); a
// key of the wrong type is an error naming its path.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  template <class T>
  void field(const json& object, const char* key, T& out) {
    if (!error_.empty()) return;
    const auto it = object.find(key);
    if (it == object.end()) return;
    try {
      if constexpr (std::is_same_v<T, double>) {
        out = it->is_null() ? std::numeric_limits<double>::quiet_NaN() : it->template get<double>();
      } else {
        out = it->template get<T>();
      }
    } catch (const json::exception& e) {
      error_ = path_ + "." + key + ": " + e.what();
    }
  }

  void field(const json& object, const char* key, std::optional<double>& out) {
    if (!error_.empty()) return;
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) {
      out.reset();
      return;
    }
    if (!it->is_number()) {
      error_ = path_ + "." + key + ": expected a number or null";
      return;
    }
    out = it->get<double>();
  }

  void field(const json& object, const char* key, std::optional<bool>& out) {
    if (!error_.empty()) return;
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) {
      out.reset();
      return;
    }
    if (!it->is_boolean()) {
      error_ = path_ + "." + key + ": expected true, false or null";
      return;
    }
    out = it->get<bool>();
  }

  // An object that may be null (absent stays absent).
  const json* optional_object(const json& parent, const char* key) {
    if (!error_.empty()) return nullptr;
    const auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return nullptr;
    return object(parent, key);
  }

  void samples(const json& object, const char* key, std::vector<double>& out) {
    if (!error_.empty()) return;
    const auto it = object.find(key);
    if (it == object.end()) return;
    if (!it->is_array()) {
      error_ = path_ + "." + key + ": expected an array";
      return;
    }
    out.clear();
    for (const json& v : *it) {
      if (v.is_null()) {
        out.push_back(std::numeric_limits<double>::quiet_NaN());
      } else if (v.is_number()) {
        out.push_back(v.get<double>());
      } else {
        error_ = path_ + "." + key + ": expected numbers";
        return;
      }
    }
  }

  const json* object(const json& parent, const char* key) {
    if (!error_.empty()) return nullptr;
    const auto it = parent.find(key);
    if (it == parent.end()) return nullptr;
    if (!it->is_object()) {
      error_ = path_ + "." + key + ": expected an object";
      return nullptr;
    }
    return &*it;
  }

  void fail_with(std::string message) {
    if (error_.empty()) error_ = path_ + ": " + std::move(message);
  }
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  std::string path_;
  std::string error_;
};

void read_load_average(Reader& r, const json& j, const char* key, std::optional<LoadAverage>& out) {
  const json* object = r.optional_object(j, key);
  if (object == nullptr) return;
  LoadAverage load;
  r.field(*object, "one", load.one);
  r.field(*object, "five", load.five);
  r.field(*object, "fifteen", load.fifteen);
  out = load;
}

void read_environment(Reader& r, const json& j, Environment& e) {
  r.field(j, "timestamp", e.timestamp);
  r.field(j, "cpu", e.cpu);
  r.field(j, "cores", e.cores);
  r.field(j, "kernel", e.kernel);
  r.field(j, "os", e.os);
  r.field(j, "io_uring_features", e.io_uring_features);
  r.field(j, "governor", e.governor);
  r.field(j, "perf_event_paranoid", e.perf_event_paranoid);
  r.field(j, "compiler", e.compiler);
  r.field(j, "build_type", e.build_type);
  r.field(j, "version", e.version);
  r.field(j, "git_commit", e.git_commit);
  r.field(j, "git_dirty", e.git_dirty);
  r.field(j, "compiler_flags", e.compiler_flags);
  read_load_average(r, j, "load_average_start", e.load_average_start);
  read_load_average(r, j, "load_average_end", e.load_average_end);
  r.field(j, "liburing_version", e.liburing_version);
  r.field(j, "simdjson_version", e.simdjson_version);
  r.field(j, "llhttp_version", e.llhttp_version);
  r.field(j, "simdjson_kernel", e.simdjson_kernel);
  r.field(j, "allocator", e.allocator);
  r.field(j, "tick_source", e.tick_source);
  r.field(j, "tsc_hz", e.tsc_hz);
  r.field(j, "tsc_hz_source", e.tsc_hz_source);
  r.field(j, "timer_overhead_ns", e.timer_overhead_ns);
  r.field(j, "timer_resolution_ns", e.timer_resolution_ns);
  r.field(j, "client_cpu", e.client_cpu);
  r.field(j, "server_cpu", e.server_cpu);
  r.field(j, "server", e.server);
  r.field(j, "warnings", e.warnings);
}

void read_config(Reader& r, const json& j, Config& c) {
  r.field(j, "suite", c.suite);
  r.field(j, "filter", c.filter);
  r.field(j, "sizes", c.sizes);
  r.field(j, "payload", c.payload);
  r.field(j, "iteration_time_ms", c.iteration_time_ms);
  r.field(j, "warmup", c.warmup);
  r.field(j, "iterations", c.iterations);
  r.field(j, "max_iterations", c.max_iterations);
  r.field(j, "target_error", c.target_error);
  r.field(j, "interleave", c.interleave);
  r.field(j, "memory", c.memory);
  r.field(j, "phases", c.phases);
  r.field(j, "counters", c.counters);
  r.field(j, "allocators", c.allocators);
  r.field(j, "url", c.url);
  r.field(j, "out", c.out);
  r.field(j, "formats", c.formats);
  r.field(j, "columns", c.columns);
  r.field(j, "cpu", c.cpu);
  r.field(j, "server_cpu", c.server_cpu);
  r.field(j, "arguments", c.arguments);
}

void read_latency(Reader& r, const json& j, std::optional<Latency>& out) {
  const json* object = r.optional_object(j, "latency");
  if (object == nullptr) return;
  Latency latency;
  r.field(*object, "count", latency.count);
  r.field(*object, "p50", latency.p50);
  r.field(*object, "p90", latency.p90);
  r.field(*object, "p99", latency.p99);
  r.field(*object, "p999", latency.p999);
  r.field(*object, "max", latency.max);
  std::vector<std::array<uint64_t, 3>> buckets;
  r.field(*object, "buckets", buckets);
  for (const auto& [lowest, highest, count] : buckets) latency.buckets.push_back({lowest, highest, count});
  out = std::move(latency);
}

void read_case(Reader& r, const json& j, CaseResult& c) {
  r.field(j, "strategy", c.strategy);
  r.field(j, "method", c.method);
  r.field(j, "payload", c.payload);
  r.field(j, "size", c.size);
  r.field(j, "allocator", c.allocator);
  r.field(j, "baseline", c.baseline);
  r.field(j, "reference", c.reference);
  std::string status = "ok";
  r.field(j, "status", status);
  if (const auto parsed = parse_status(status)) {
    c.status = *parsed;
  } else {
    r.fail_with("unknown status '" + status + "'");
  }
  r.field(j, "reason", c.reason);
  r.field(j, "ops_per_iteration", c.ops_per_iteration);
  r.field(j, "warmup_iterations", c.warmup_iterations);
  r.samples(j, "samples_ns", c.samples_ns);
  r.field(j, "outliers", c.outliers);
  if (const json* s = r.object(j, "stats")) {
    r.field(*s, "n", c.stats.n);
    r.field(*s, "outliers", c.stats.outliers);
    r.field(*s, "mean", c.stats.mean);
    r.field(*s, "error", c.stats.error);
    r.field(*s, "stddev", c.stats.stddev);
    r.field(*s, "median", c.stats.median);
    r.field(*s, "p95", c.stats.p95);
    r.field(*s, "min", c.stats.min);
    r.field(*s, "max", c.stats.max);
    r.field(*s, "ratio", c.stats.ratio);
    r.field(*s, "ratio_sd", c.stats.ratio_sd);
  }
  if (const json* m = r.object(j, "memory")) {
    r.field(*m, "bytes_per_op", c.memory.bytes_per_op);
    r.field(*m, "allocs_per_op", c.memory.allocs_per_op);
    r.field(*m, "alloc_ratio", c.memory.alloc_ratio);
    r.field(*m, "peak_rss", c.memory.peak_rss);
    r.field(*m, "minor_faults_per_op", c.memory.minor_faults_per_op);
  }
  if (const json* io = r.object(j, "io")) {
    r.field(*io, "ring_enters_per_op", c.io.ring_enters_per_op);
    r.field(*io, "sqes_per_op", c.io.sqes_per_op);
    r.field(*io, "cqes_per_op", c.io.cqes_per_op);
    r.field(*io, "connections_per_op", c.io.connections_per_op);
    r.field(*io, "zero_copy_sends_per_op", c.io.zero_copy_sends_per_op);
    r.field(*io, "zero_copy_copied_per_op", c.io.zero_copy_copied_per_op);
    r.field(*io, "syscalls_per_op", c.io.syscalls_per_op);
  }
  if (const json* p = r.object(j, "phases")) {
    r.field(*p, "ops_sampled", c.phases.ops_sampled);
    r.field(*p, "connect", c.phases.connect);
    r.field(*p, "send", c.phases.send);
    r.field(*p, "wait", c.phases.wait);
    r.field(*p, "head", c.phases.head);
    r.field(*p, "body", c.phases.body);
    r.field(*p, "deserialize", c.phases.deserialize);
    r.field(*p, "other", c.phases.other);
  }
  read_latency(r, j, c.latency);
  if (const json* d = r.object(j, "diagnostics")) {
    r.field(*d, "cv", c.diagnostics.cv);
    r.field(*d, "m_value", c.diagnostics.m_value);
    r.field(*d, "bimodal", c.diagnostics.bimodal);
    r.field(*d, "target_error_missed", c.diagnostics.target_error_missed);
    r.field(*d, "error_above_mean", c.diagnostics.error_above_mean);
    r.field(*d, "too_few_iterations", c.diagnostics.too_few_iterations);
    r.field(*d, "baseline_unstable", c.diagnostics.baseline_unstable);
  }
  if (const json* counters = r.object(j, "counters")) {
    for (const auto& [name, value] : counters->items()) {
      if (value.is_null()) {
        c.counters[name] = std::nullopt;
      } else if (value.is_number()) {
        c.counters[name] = value.get<double>();
      } else {
        r.fail_with("counters." + name + ": expected a number or null");
      }
    }
  }
  r.field(j, "checksum", c.checksum);
  r.field(j, "notes", c.notes);
}

}  // namespace

json to_json(const Report& report) {
  json cases = json::array();
  for (const CaseResult& c : report.cases) cases.push_back(case_json(c));
  return json{{"schema_version", report.schema_version},
              {"partial", report.partial},
              {"environment", environment_json(report.environment)},
              {"config", config_json(report.config)},
              {"cases", std::move(cases)}};
}

Result<Report> report_from_json(const json& j) {
  if (!j.is_object()) return fail("report: expected a JSON object at the top");
  Report report;
  const auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer()) return fail("report: no integer schema_version");
  report.schema_version = version->get<int>();
  if (report.schema_version < kOldestReadableSchemaVersion || report.schema_version > kReportSchemaVersion) {
    return fail("report: schema_version " + std::to_string(report.schema_version) + " is not one of the " +
                std::to_string(kOldestReadableSchemaVersion) + ".." + std::to_string(kReportSchemaVersion) +
                " this bench reads");
  }
  if (const auto partial = j.find("partial"); partial != j.end()) {
    if (!partial->is_boolean()) return fail("report: partial is not a boolean");
    report.partial = partial->get<bool>();
  }
  Reader top("report");
  if (const json* e = top.object(j, "environment")) {
    Reader r("environment");
    read_environment(r, *e, report.environment);
    if (!r.error().empty()) return fail(r.error());
  }
  if (const json* c = top.object(j, "config")) {
    Reader r("config");
    read_config(r, *c, report.config);
    if (!r.error().empty()) return fail(r.error());
  }
  if (!top.error().empty()) return fail(top.error());
  const auto cases = j.find("cases");
  if (cases == j.end() || !cases->is_array()) return fail("report: no cases array");
  for (std::size_t i = 0; i < cases->size(); ++i) {
    const json& item = (*cases)[i];
    Reader r("cases[" + std::to_string(i) + "]");
    if (!item.is_object()) return fail(r.error().empty() ? "cases[" + std::to_string(i) + "]: expected an object" : r.error());
    CaseResult c;
    read_case(r, item, c);
    if (!r.error().empty()) return fail(r.error());
    report.cases.push_back(std::move(c));
  }
  return report;
}

Result<Report> parse_report(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail("report: not valid JSON");
  return report_from_json(j);
}

Result<Report> read_report_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(errno_message("open", path.string(), errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return fail(errno_message("read", path.string(), errno));
  auto report = parse_report(text.str());
  if (!report) return std::unexpected(report.error().wrap(path.string()));
  return report;
}

Status write_report_fd(int fd, const Report& report) {
  const std::string text = to_json(report).dump(2) + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno_message("write", "report fd " + std::to_string(fd), errno));
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Result<Report> read_report_fd(int fd) {
  std::string text;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno_message("read", "report fd " + std::to_string(fd), errno));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return parse_report(text);
}

}  // namespace ringlab::bench
