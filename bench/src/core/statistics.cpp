#include "ringlab/bench/core/statistics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

namespace ringlab::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Continued fraction of the incomplete beta function, evaluated with the modified Lentz method
// (Numerical Recipes §6.4 gives the recurrence). Converges fast for x < (a + 1) / (a + b + 2); the
// caller uses the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) to stay in that region.
double beta_continued_fraction(double a, double b, double x) noexcept {
  constexpr double kTiny = 1e-300;
  constexpr double kEpsilon = 1e-15;
  constexpr int kMaxTerms = 10000;
  const double qab = a + b;
  const double qap = a + 1.0;
  const double qam = a - 1.0;
  double c = 1.0;
  double d = 1.0 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= kMaxTerms; ++m) {
    const double m2 = 2.0 * m;
    // Even step of the recurrence.
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    // Odd step.
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kEpsilon) break;
  }
  return h;
}

}  // namespace

double mean(std::span<const double> values) noexcept {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double stddev(std::span<const double> values) noexcept {
  if (values.size() < 2) return 0;
  const double m = mean(values);
  double sum = 0;
  for (double v : values) sum += (v - m) * (v - m);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, 0.5);
}

double quantile_sorted(std::span<const double> sorted, double p) noexcept {
  if (sorted.empty()) return kNaN;
  p = std::clamp(p, 0.0, 1.0);
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double incomplete_beta(double a, double b, double x) noexcept {
  if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1)) return kNaN;
  if (x == 0) return 0;
  if (x == 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(a, b, x) / a;
  return 1.0 - front * beta_continued_fraction(b, a, 1.0 - x) / b;
}

double student_t_cdf(double t, double df) noexcept {
  if (!(df > 0) || std::isnan(t)) return kNaN;
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  // P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2).
  const double x = df / (df + t * t);
  const double tail = 0.5 * incomplete_beta(df / 2.0, 0.5, x);
  return t > 0 ? 1.0 - tail : tail;
}

double student_t_quantile(double p, double df) noexcept {
  if (!(df > 0) || !(p > 0) || !(p < 1)) return kNaN;
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1.0 - p, df);
  // Work on the upper tail q = 1 - p: it is what the CDF loses precision on near 1.
  const double q = 1.0 - p;
  const auto upper_tail = [df](double t) {
    return 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
  };
  double lo = 0;
  double hi = 1;
  while (upper_tail(hi) > q) {
    lo = hi;
    hi *= 2;
    if (hi > 1e300) return std::numeric_limits<double>::infinity();
  }
  for (int i = 0; i < 2000 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (upper_tail(mid) > q) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

double confidence_half_width(double sd, std::size_t n, double level) noexcept {
  if (n < 2) return kNaN;
  const double t = student_t_quantile(0.5 + level / 2.0, static_cast<double>(n - 1));
  return t * sd / std::sqrt(static_cast<double>(n));
}

Fences tukey_fences(std::span<const double> sorted, double k) noexcept {
  const double q1 = quantile_sorted(sorted, 0.25);
  const double q3 = quantile_sorted(sorted, 0.75);
  const double iqr = q3 - q1;
  return Fences{q1 - k * iqr, q3 + k * iqr};
}

std::vector<std::size_t> upper_outliers(std::span<const double> values) {
  std::vector<std::size_t> out;
  if (values.size() < 4) return out;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const Fences fences = tukey_fences(sorted);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] > fences.upper) out.push_back(i);
  }
  return out;
}

Summary summarize(std::span<const double> values) {
  Summary s;
  if (values.empty()) return s;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  s.n = sorted.size();
  s.mean = mean(sorted);
  s.stddev = stddev(sorted);
  s.error = confidence_half_width(s.stddev, s.n);
  s.median = quantile_sorted(sorted, 0.5);
  s.p95 = quantile_sorted(sorted, 0.95);
  s.min = sorted.front();
  s.max = sorted.back();
  return s;
}

std::vector<double> without(std::span<const double> values, std::span<const std::size_t> excluded) {
  std::vector<double> out;
  out.reserve(values.size());
  std::size_t next = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    while (next < excluded.size() && excluded[next] < i) ++next;
    if (next < excluded.size() && excluded[next] == i) continue;
    out.push_back(values[i]);
  }
  return out;
}

RatioStats ratio_all_pairs(std::span<const double> x, std::span<const double> b) {
  if (x.empty() || b.empty()) return {kNaN, kNaN, kNaN};
  if (std::any_of(b.begin(), b.end(), [](double v) { return !(v > 0); })) return {kNaN, kNaN, kNaN};
  std::vector<double> ratios;
  ratios.reserve(x.size() * b.size());
  for (double xi : x) {
    for (double bj : b) ratios.push_back(xi / bj);
  }
  return {mean(ratios), stddev(ratios)};
}

namespace {

// P(B(n, 1/2) = k), in log space so that large n does not underflow 2^-n.
double binomial_half_mass(std::size_t n, std::size_t k) noexcept {
  const auto nd = static_cast<double>(n);
  const auto kd = static_cast<double>(k);
  return std::exp(std::lgamma(nd + 1) - std::lgamma(kd + 1) - std::lgamma(nd - kd + 1) + nd * std::log(0.5));
}

}  // namespace

double binomial_half_at_most(std::size_t n, std::size_t k) noexcept {
  if (k >= n) return 1;
  double sum = 0;
  for (std::size_t i = 0; i <= k; ++i) sum += binomial_half_mass(n, i);
  return std::min(1.0, sum);
}

Interval median_interval(std::span<const double> sorted, double level) {
  const std::size_t n = sorted.size();
  if (n == 0 || !(level > 0) || !(level < 1)) return {};
  double below = 0;  // P(B(n, 1/2) <= j - 1) for the current j
  std::size_t best = 0;
  for (std::size_t j = 1; j <= n / 2; ++j) {
    below += binomial_half_mass(n, j - 1);
    // [x_(j), x_(n-j+1)] covers the median with probability 1 - 2 P(B <= j - 1).
    if (1 - 2 * below < level) break;
    best = j;
  }
  if (best == 0) return {};
  return {sorted[best - 1], sorted[n - best]};
}

RatioStats ratio_paired(std::span<const double> x, std::span<const double> b) {
  const std::size_t n = std::min(x.size(), b.size());
  if (n == 0) return {kNaN, kNaN, kNaN};
  std::vector<double> ratios;
  ratios.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!(b[i] > 0)) return {kNaN, kNaN, kNaN};
    ratios.push_back(x[i] / b[i]);
  }
  RatioStats stats{mean(ratios), stddev(ratios), 0};
  std::sort(ratios.begin(), ratios.end());
  stats.median = quantile_sorted(ratios, 0.5);
  const Interval interval = median_interval(ratios);
  stats.median_low = interval.low;
  stats.median_high = interval.high;
  return stats;
}

namespace {

template <std::size_t N>
Unit pick_unit(std::span<const double> values, const std::array<Unit, N>& units, double step) noexcept {
  double smallest = std::numeric_limits<double>::infinity();
  for (double v : values) {
    if (std::isfinite(v)) smallest = std::min(smallest, std::fabs(v));
  }
  if (!std::isfinite(smallest)) return units.front();
  for (const Unit& unit : units) {
    if (smallest < step * unit.scale) return unit;
  }
  return units.back();
}

}  // namespace

Unit time_unit_for(std::span<const double> values_ns) noexcept {
  static constexpr std::array<Unit, 4> kUnits{{{"ns", 1}, {"μs", 1e3}, {"ms", 1e6}, {"s", 1e9}}};
  return pick_unit(values_ns, kUnits, 1000.0);
}

Unit time_unit_for_table(std::span<const double> values_ns) {
  std::vector<double> finite;
  for (double v : values_ns) {
    if (std::isfinite(v)) finite.push_back(std::fabs(v));
  }
  if (finite.empty()) return time_unit_for(finite);
  std::sort(finite.begin(), finite.end());
  const double median = quantile_sorted(finite, 0.5);
  return time_unit_for(std::span<const double>(&median, 1));
}

Unit size_unit_for(std::span<const double> values_bytes) noexcept {
  static constexpr std::array<Unit, 4> kUnits{
      {{"B", 1}, {"KB", 1024.0}, {"MB", 1024.0 * 1024}, {"GB", 1024.0 * 1024 * 1024}}};
  return pick_unit(values_bytes, kUnits, 1024.0);
}

int decimals_for(std::span<const double> values_in_unit, int min_decimals, int max_decimals) noexcept {
  double smallest = std::numeric_limits<double>::infinity();
  for (double v : values_in_unit) {
    if (std::isfinite(v) && v != 0) smallest = std::min(smallest, std::fabs(v));
  }
  if (!std::isfinite(smallest)) return min_decimals;
  const int digits_before_point = static_cast<int>(std::floor(std::log10(smallest))) + 1;
  return std::clamp(4 - digits_before_point, min_decimals, max_decimals);
}

int decimals_within_resolution(const Unit& unit, double resolution_ns) noexcept {
  constexpr int kUnknown = 9;
  if (!std::isfinite(resolution_ns) || !(resolution_ns > 0)) return kUnknown;
  // The digit at 10^-d of the unit is worth printing when it is at least the resolution.
  const double digits = std::floor(std::log10(unit.scale / resolution_ns) + 1e-9);
  return static_cast<int>(std::clamp(digits, 0.0, static_cast<double>(kUnknown)));
}

}  // namespace ringlab::bench
