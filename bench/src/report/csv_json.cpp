// The CSV and JSON reports: exact values in base units, empty (CSV) or null (JSON) where n/a.
#include "ringlab/bench/reporters.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

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
      "strategy", "method", "payload", "size", "connection", "server_mode", "allocator", "baseline", "status", "reason",
      "ops_per_iteration", "warmup_iterations", "samples", "n", "outliers", "mean_ns", "error_ns", "stddev_ns",
      "median_ns", "p95_ns", "min_ns", "max_ns", "ratio", "ratio_sd", "bytes_per_op", "allocs_per_op",
      "alloc_ratio", "peak_rss_bytes", "minor_faults_per_op", "ring_enters_per_op", "sqes_per_op", "cqes_per_op",
      "connections_per_op", "zero_copy_sends_per_op", "zero_copy_copied_per_op", "syscalls_per_op",
      "phase_ops_sampled",
      "phase_connect_ns", "phase_send_ns", "phase_wait_ns", "phase_head_ns", "phase_body_ns",
      "phase_deserialize_ns", "phase_other_ns", "checksum", "reference", "cv", "m_value", "bimodal",
      "target_error_missed", "error_above_mean", "too_few_iterations", "baseline_unstable", "latency_count",
      "latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns", "ratio_low",
      "ratio_high", "not_applicable"};
  for (const std::string& name : counter_names) header.push_back("counter:" + name);
  std::string out;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(header[i]);
  }
  out += "\n";
  for (const CaseResult& c : report.cases) {
    std::vector<std::string> f{
        c.strategy, c.method, c.payload, std::to_string(c.size), c.connection, c.server_mode, c.allocator, bool_text(c.baseline),
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
        c.latency ? csv_number(c.latency->max) : std::string(), csv_number(c.stats.ratio_low),
        csv_number(c.stats.ratio_high), bool_text(c.not_applicable)};
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
