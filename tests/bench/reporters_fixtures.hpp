#pragma once
// The synthetic report the reporters' tests render and write: two sizes, a failed and a skipped case,
// an outlier, counters and n/a values; and a CSV line split by its quoting rules.
#include <cstddef>
#include <string>
#include <vector>

#include "ringlab/bench/core/results.hpp"
#include "../support/bench_cases.hpp"

namespace ringlab::bench::testing {

// What every case has beyond its timings: costs and phases for the memory, I/O and phase tables.
inline CaseResult costs() {
  CaseResult c = ringlab::testing::prototype_case("system", 100);
  c.warmup_iterations = 3;
  ringlab::testing::add_copying_costs(c);
  c.io.sqes_per_op = 2;
  c.io.cqes_per_op = 2.5;
  c.phases.ops_sampled = 1500;
  c.phases.send = 1500;
  c.phases.wait = 20000;
  c.phases.head = 800;
  c.phases.body = 2000;
  c.phases.first_body = 20900;
  c.phases.last_body = 22700;
  c.checksum = 0xfeedfacecafebeefULL;
  return c;
}

inline CaseResult make_case(std::string strategy, std::size_t size, double mean_ns, bool baseline) {
  CaseResult c = ringlab::testing::weather_case(costs(), std::move(strategy), size, baseline);
  c.samples_ns = std::vector<double>(15, mean_ns);
  c.stats.n = 15;
  c.stats.mean = mean_ns;
  c.stats.error = mean_ns * 0.01;
  c.stats.stddev = mean_ns * 0.005;
  c.stats.median = mean_ns;
  c.stats.p95 = mean_ns * 1.02;
  c.stats.min = mean_ns * 0.99;
  c.stats.max = mean_ns * 1.03;
  c.phases.deserialize = mean_ns / 2;
  return c;
}

inline Report synthetic_report() {
  Report r;
  r.environment.cpu = "AMD EPYC";
  r.environment.cores = 2;
  r.environment.kernel = "6.18.44";
  r.environment.tick_source = "rdtsc";
  r.environment.tsc_hz = 2.596148e9;
  r.environment.allocator = "system";
  r.environment.warnings = {"Debug build: numbers are not representative"};
  r.config.sizes = {10, 10000};
  r.config.options = {{"--client", "pooled,inflight"}, {"--iterations", "15"}, {"--no-interleave", "false"}};
  r.cases.push_back(make_case("string_copy", 10, 113'100, true));
  r.cases.push_back(make_case("presized", 10, 226'200, false));
  r.cases.back().memory.bytes_per_op = 0;
  r.cases.back().memory.allocs_per_op = 0;
  r.cases.push_back(make_case("views", 10, 0, false));
  r.cases.back().status = CaseStatus::failed;
  r.cases.back().reason = "checksum 0x1 differs from baseline string_copy's 0x2, \"quoted\"";
  r.cases.push_back(make_case("string_copy", 10000, 7'793'500, true));
  r.cases.push_back(make_case("send_zc", 10000, 0, false));
  r.cases.back().status = CaseStatus::skipped;
  r.cases.back().reason = "needs IORING_OP_SEND_ZC";
  r.cases.push_back(make_case("presized", 10000, 5'476'000, false));
  r.cases.back().memory.bytes_per_op.reset();
  r.cases.back().memory.allocs_per_op.reset();
  r.cases.back().counters["cycles"] = 123456.0;
  r.cases.back().counters["instructions"] = std::nullopt;
  r.cases.back().samples_ns[3] = 9e6;
  r.cases.back().outliers = {3};
  r.cases.back().stats.outliers = 1;
  r.cases.back().stats.n = 14;
  compute_ratios(r);
  return r;
}

inline std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cur += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

}  // namespace ringlab::bench::testing
