#include "ringlab/bench/core/results.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <unordered_map>

#include <fmt/format.h>

#include "ringlab/base/enum_names.hpp"
#include "ringlab/bench/core/diagnostics.hpp"
#include "ringlab/bench/core/statistics.hpp"

namespace ringlab::bench {

std::string_view link_leg_name(LinkLeg leg) noexcept { return leg == LinkLeg::upstream ? "upstream" : "client"; }

namespace {
// A value outside the table reads as failed: a case is never shown as ok by mistake.
constexpr base::EnumNames<CaseStatus, 3> kStatusNames{
    {{{CaseStatus::ok, "ok"}, {CaseStatus::skipped, "skipped"}, {CaseStatus::failed, "failed"}}}, "failed"};
}  // namespace

std::string_view status_name(CaseStatus status) noexcept { return kStatusNames.name(status); }
std::optional<CaseStatus> parse_status(std::string_view name) noexcept { return kStatusNames.parse(name); }

std::string case_key(const CaseResult& c) {
  std::string key = fmt::format("{}/{}/{}/{}", c.method, c.payload, c.size, c.allocator);
  if (c.inflight > 1) key += fmt::format("/x{}", c.inflight);  // keys of one request in flight stay as they were
  if (c.client_threads > 1) key += fmt::format("/t{}", c.client_threads);  // and of one client thread
  return key;
}

std::string case_label(const CaseResult& c) {
  std::string label = fmt::format("{} {} {}", c.strategy, c.payload, c.size);
  if (c.inflight > 1) label += fmt::format(" x{}", c.inflight);
  if (c.client == "fresh") label += " fresh client";
  if (c.client == "inflight") label += " in-flight client";
  if (c.client_threads > 1) label += fmt::format(" t{}", c.client_threads);
  if (!c.allocator.empty()) label += fmt::format(" ({})", c.allocator);
  return label;
}

std::string_view client_mark(const CaseResult& c) noexcept {
  if (c.client == "fresh") return " (fresh client)";
  if (c.client == "inflight") return " (in-flight client)";
  return {};
}

std::string row_name(const CaseResult& c) { return c.strategy + std::string(client_mark(c)); }

std::string allocator_short_name(std::string_view description) {
  return std::string(description.substr(0, description.find(" (")));
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
    c.stats.ratio_low.reset();
    c.stats.ratio_high.reset();
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
      if (report.config.interleave) {
        // Paired by round, every round: the median of the round ratios (statistics.hpp says why the
        // median, and why no round is dropped).
        const RatioStats r = ratio_paired(c.samples_ns, base.samples_ns);
        if (std::isfinite(r.median)) {
          c.stats.ratio = r.median;
          c.stats.ratio_sd = r.sd;
          if (std::isfinite(r.median_low) && std::isfinite(r.median_high)) {
            c.stats.ratio_low = r.median_low;
            c.stats.ratio_high = r.median_high;
          }
        }
      } else {
        const RatioStats r =
            ratio_all_pairs(without(c.samples_ns, c.outliers), without(base.samples_ns, base.outliers));
        if (std::isfinite(r.mean)) {
          c.stats.ratio = r.mean;
          c.stats.ratio_sd = r.sd;
        }
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
    into.environment.warnings.push_back(allocator_short_name(from.environment.allocator) + ": " + warning);
  }
  into.cases.insert(into.cases.end(), std::make_move_iterator(from.cases.begin()),
                    std::make_move_iterator(from.cases.end()));
  compute_ratios(into);
}

}  // namespace ringlab::bench
