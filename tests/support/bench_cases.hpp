#pragma once
// The synthetic cases the report tests (gbench, HTML, markdown/CSV/JSON) render: one shape of case,
// filled in by each test with what its format reads, so that every report is checked on the same kind
// of input the runner produces.
//
// Threads: any; nothing here is shared.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ringlab/bench/core/results.hpp"

namespace ringlab::testing {

// What every case of a test's report shares: the allocator it ran under and the ops of each timed
// iteration (the per-op columns divide by them); the test adds what its format reads.
inline bench::CaseResult prototype_case(std::string allocator, uint64_t ops_per_iteration) {
  bench::CaseResult c;
  c.allocator = std::move(allocator);
  c.ops_per_iteration = ops_per_iteration;
  return c;
}

// A case of the weather payload: `prototype` (allocator, iterations, costs: what a test's format reads
// beyond the identity) with this strategy, size and baseline flag.
inline bench::CaseResult weather_case(bench::CaseResult prototype, std::string strategy, std::size_t size,
                                      bool baseline) {
  prototype.strategy = std::move(strategy);
  prototype.payload = "weather";
  prototype.size = size;
  prototype.baseline = baseline;
  return prototype;
}

// What an op of a copying strategy costs in memory and ring entries: the reports' memory and I/O
// columns have a number to print.
inline void add_copying_costs(bench::CaseResult& c) {
  c.memory.bytes_per_op = 5806;
  c.memory.allocs_per_op = 3;
  c.memory.peak_rss = 10 << 20;
  c.io.ring_enters_per_op = 2;
}

struct MeasuredCase {
  std::string strategy;
  std::size_t size = 0;
  std::vector<double> samples_ns;  // empty: the case failed before it measured anything
  bool baseline = false;
};

// A report of `cases` made from `prototype`, their samples summarized as the runner summarizes them;
// a case without samples failed ("connection reset"); ratios computed as the runner does at the end
// (the default config: what the tests then set in the report does not change them).
inline bench::Report measured_report(const bench::CaseResult& prototype, const std::vector<MeasuredCase>& cases) {
  bench::Report report;
  for (const MeasuredCase& measured : cases) {
    bench::CaseResult c = weather_case(prototype, measured.strategy, measured.size, measured.baseline);
    c.samples_ns = measured.samples_ns;
    bench::summarize_samples(c);
    if (c.samples_ns.empty()) {
      c.status = bench::CaseStatus::failed;
      c.reason = "connection reset";
    }
    report.cases.push_back(std::move(c));
  }
  bench::compute_ratios(report);
  return report;
}

// The lines of a rendered report (empty ones kept: a table's blank separator row is one), without
// their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace ringlab::testing
