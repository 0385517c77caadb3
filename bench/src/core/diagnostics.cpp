#include "ringlab/bench/core/diagnostics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "ringlab/bench/core/statistics.hpp"

namespace ringlab::bench {

double m_value(std::span<const double> values) {
  std::vector<double> sorted;
  sorted.reserve(values.size());
  for (double v : values) {
    if (std::isfinite(v)) sorted.push_back(v);
  }
  if (sorted.size() < 2) return 2;
  std::sort(sorted.begin(), sorted.end());
  // BenchmarkDotNet removes the outliers on both sides before looking for modes.
  const Fences fences = tukey_fences(sorted);
  std::erase_if(sorted, [&fences](double v) { return v < fences.lower || v > fences.upper; });
  if (sorted.size() < 2) return 2;
  const double lowest = sorted.front();
  const double range = sorted.back() - lowest;
  if (!(range > 0)) return 2;

  // Scott's normal reference rule, halved (Perfolizer's CalcScott2).
  const auto n = static_cast<double>(sorted.size());
  double bin_size = 3.5 * stddev(sorted) / std::cbrt(n) / 2;
  if (std::fabs(bin_size) < 1e-9) bin_size = 1;

  double result = 0;
  std::vector<std::size_t> bins;
  for (;;) {
    const auto bin_count = static_cast<std::size_t>(std::floor(range / bin_size)) + 1;
    bins.assign(bin_count, 0);
    for (double v : sorted) {
      const auto bin = std::min(bin_count - 1, static_cast<std::size_t>(std::floor((v - lowest) / bin_size)));
      ++bins[bin];
    }
    // Sum of |x[i] - x[i-1]| over 0, bins..., 0.
    std::size_t sum = 0;
    std::size_t previous = 0;
    std::size_t largest = 0;
    for (std::size_t count : bins) {
      sum += count > previous ? count - previous : previous - count;
      previous = count;
      largest = std::max(largest, count);
    }
    sum += previous;
    result = std::max(result, static_cast<double>(sum) / static_cast<double>(largest));
    if (bin_size > range) break;
    bin_size *= 2;
  }
  return result;
}

Diagnostics diagnose(const CaseResult& c, double target_error) {
  Diagnostics d;
  if (c.status != CaseStatus::ok) return d;
  const std::vector<double> kept = without(c.samples_ns, c.outliers);
  const Stats& s = c.stats;
  d.too_few_iterations = s.n < kMinKeptIterations;
  if (s.n >= 2 && s.mean > 0 && std::isfinite(s.stddev)) d.cv = s.stddev / s.mean;
  if (s.n >= kMinKeptIterations) {
    d.m_value = m_value(kept);
    d.bimodal = *d.m_value > kBimodalMValue;
  }
  if (std::isfinite(s.error) && s.mean > 0) {
    d.target_error_missed = s.error / s.mean > target_error;
    d.error_above_mean = s.error > s.mean;
  }
  return d;
}

void compute_diagnostics(Report& report) {
  for (CaseResult& c : report.cases) c.diagnostics = diagnose(c, report.config.target_error);
  std::unordered_map<std::string, bool> unstable_baselines;
  for (const CaseResult& c : report.cases) {
    if (c.baseline && c.status == CaseStatus::ok) {
      unstable_baselines[case_key(c)] = c.diagnostics.cv && *c.diagnostics.cv > kUnstableBaselineCv;
    }
  }
  for (CaseResult& c : report.cases) {
    if (c.status != CaseStatus::ok || c.reference) continue;
    const auto found = unstable_baselines.find(case_key(c));
    c.diagnostics.baseline_unstable = found != unstable_baselines.end() && found->second;
  }
}

std::vector<std::string> diagnostic_warnings(const Report& report) {
  std::vector<std::string> out;
  const auto percent = [](double fraction) { return fmt::format("{:.1f} %", fraction * 100); };
  for (const CaseResult& c : report.cases) {
    if (c.status != CaseStatus::ok) continue;
    const Diagnostics& d = c.diagnostics;
    const Stats& s = c.stats;
    std::vector<std::string> reasons;
    if (d.too_few_iterations) {
      reasons.push_back(fmt::format("only {} iteration{} kept after outlier removal (fewer than {})", s.n,
                                    s.n == 1 ? "" : "s", kMinKeptIterations));
    }
    if (d.error_above_mean) {
      reasons.emplace_back("Error > Mean: the confidence interval includes zero");
    } else if (d.target_error_missed) {
      reasons.push_back(fmt::format("Error is {} of the Mean, above the target {}", percent(s.error / s.mean),
                                    percent(report.config.target_error)));
    }
    if (d.bimodal && d.m_value) {
      reasons.push_back(fmt::format("the distribution seems bimodal (m-value {:.2f} > {})", *d.m_value, kBimodalMValue));
    }
    if (reasons.empty()) continue;
    std::string line = case_label(c) + ": ";
    for (std::size_t i = 0; i < reasons.size(); ++i) {
      if (i > 0) line += "; ";
      line += reasons[i];
    }
    if (d.cv) line += fmt::format(" (CV {})", percent(*d.cv));
    out.push_back(std::move(line));
  }
  for (const CaseResult& c : report.cases) {
    if (!c.baseline || c.status != CaseStatus::ok || !c.diagnostics.baseline_unstable || !c.diagnostics.cv) continue;
    out.push_back(fmt::format("baseline {}: CV {} > {}: every ratio against it is unreliable", case_label(c),
                              percent(*c.diagnostics.cv), percent(kUnstableBaselineCv)));
  }
  return out;
}

}  // namespace ringlab::bench
