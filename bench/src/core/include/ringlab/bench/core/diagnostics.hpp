#pragma once
// Stability diagnostics of a case, as BenchmarkDotNet prints them above its table: numbers that
// should not be trusted are named, with the reason, instead of being printed like any other row.
//
// Per ok case, over the samples the statistics kept (samples_ns without the upper outliers):
//   CV                    StdDev / Mean.
//   m-value               BenchmarkDotNet's multimodality test (Brendan Gregg's "modes" metric as
//                         BenchmarkDotNet's MValueCalculator computes it, see m_value below): 2 for
//                         one mode, 4 for two well separated ones; bimodal above kBimodalMValue.
//   target error missed   Error / Mean above config.target_error: the adaptive stop ran out of
//                         iterations before the mean was as precise as asked.
//   Error > Mean          the 99.9 % confidence interval of the mean includes zero.
//   too few iterations    fewer than kMinKeptIterations samples kept after outlier removal.
//   unstable baseline     the group's baseline has a CV above kUnstableBaselineCv: every ratio
//                         against it is unreliable (reference rows are not warned about).
//
// Pure functions of the report (no clock, no I/O).
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "ringlab/bench/core/results.hpp"

namespace ringlab::bench {

// BenchmarkDotNet's threshold: above it "the distribution is bimodal".
inline constexpr double kBimodalMValue = 3.2;
// A baseline spread wider than this makes ratios against it move from run to run.
inline constexpr double kUnstableBaselineCv = 0.10;
// Below this many kept samples the 99.9 % t quantile is above 8.6: the Error says little.
inline constexpr std::size_t kMinKeptIterations = 5;

// The m-value of `values` (any order): outliers beyond both Tukey fences removed, then for bin
// sizes from Scott's rule / 2 doubling up to the range, the histogram's sum of absolute differences
// between neighbouring bin counts (with an empty bin on each side) over the largest count; the
// maximum over bin sizes. Bins start at the smallest value (BenchmarkDotNet's adaptive builder
// aligns them differently; the value differs only where a mode straddles a bin edge). 2 for fewer
// than two values or no spread.
[[nodiscard]] double m_value(std::span<const double> values);

// The diagnostics of one case from its samples and stats; `target_error` is config.target_error.
// baseline_unstable is left false (it needs the group: compute_diagnostics sets it).
[[nodiscard]] Diagnostics diagnose(const CaseResult& c, double target_error);

// Fills every case's diagnostics (failed and skipped cases get the defaults).
void compute_diagnostics(Report& report);

// One line per affected case and reason ("presized weather 10000: bimodal (m-value 3.9)"), then
// one per unstable baseline; empty when nothing is wrong.
[[nodiscard]] std::vector<std::string> diagnostic_warnings(const Report& report);

}  // namespace ringlab::bench
