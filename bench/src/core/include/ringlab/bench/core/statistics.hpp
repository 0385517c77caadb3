#pragma once
// Statistics of benchmark samples: the arithmetic behind the table's Mean, Error, StdDev, Median,
// P95, Ratio and RatioSD columns, and the units they are printed in.
//
// Pure functions of their inputs, no I/O and no clock: every one is tested against textbook values.
//
// Definitions (what a reader of the table needs to know):
//   - StdDev is the sample standard deviation (divisor n - 1).
//   - Quantiles (median, P95, quartiles) interpolate linearly between order statistics
//     (Hyndman & Fan type 7, the default of R and NumPy): q(p) = x[h] + (h - floor h)(x[h+1] - x[h])
//     with h = (n - 1) p on the sorted sample, 0-based.
//   - Error is half the width of the 99.9 % confidence interval of the mean: t(0.9995, n - 1) * s / sqrt(n),
//     with the Student t quantile computed for any degrees of freedom (no table). NaN when n < 2.
//   - Outliers: Tukey's fences Q1 - 1.5 IQR and Q3 + 1.5 IQR; only values above the upper fence are
//     removed (slow iterations are interference: a preempted thread, a page fault storm; a fast
//     one is not noise in that direction).
//   - Ratio and RatioSD come from a distribution of ratios case / baseline. For runs one case after
//     another, as BenchmarkDotNet's RatioStatistics: the mean and standard deviation of every pairing
//     x_i / b_j (n_x * n_b ratios), since no sample of one case belongs with a particular sample of
//     the other. For interleaved runs sample i of every case comes from round i, so the distribution
//     is the paired x_i / b_i over every round, and the drift of the machine between rounds cancels
//     in each ratio; Ratio is then its median and RatioSD its standard deviation. The median, not
//     the mean: on a shared VM single iterations of any case fall into a slow mode now and then
//     (seen here: 1.3 ms or 1.85 ms for the same work), so a round's ratio is sometimes far off in
//     either direction, and the mean moves with how many such rounds a run happened to get. Dropping
//     the rounds where either side was an outlier is no cure: it drops the rounds where the baseline
//     was slow, that is the low ratios, and biases the mean upwards.
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

namespace ringlab::bench {

[[nodiscard]] double mean(std::span<const double> values) noexcept;
// Sample standard deviation; 0 for fewer than two values.
[[nodiscard]] double stddev(std::span<const double> values) noexcept;
// Type-7 quantile of an already sorted, non-empty sample; p in [0, 1].
[[nodiscard]] double quantile_sorted(std::span<const double> sorted, double p) noexcept;
// The median of `values` in any order (sorted here, a copy); NaN when empty.
[[nodiscard]] double median_of(std::vector<double> values);
// The distribution-free confidence interval of the median of `sorted` (ascending): the order
// statistics j and k around the middle between which the true median lies with probability at least
// `level`, from the binomial distribution B(n, 1/2) (exact sums, no normal approximation). Both NaN
// when n is too small for that level (n < 6 at 95 %): a pair of rounds cannot bound a median.
struct Interval {
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
};
[[nodiscard]] Interval median_interval(std::span<const double> sorted, double level = 0.95);
// P(B(n, 1/2) <= k): the sign test's tail, the chance that at most k of n values fall on one side of the
// true median (1 when k >= n). Summed in log space, exact for the n of any run.
[[nodiscard]] double binomial_half_at_most(std::size_t n, std::size_t k) noexcept;

// Regularized incomplete beta function I_x(a, b), a, b > 0, x in [0, 1].
[[nodiscard]] double incomplete_beta(double a, double b, double x) noexcept;
// P(T <= t) for Student's t with `df` > 0 degrees of freedom (df need not be an integer).
[[nodiscard]] double student_t_cdf(double t, double df) noexcept;
// Inverse of student_t_cdf: the t with P(T <= t) = p, for p in (0, 1). Bisection on the CDF to a
// relative precision of 1e-12; NaN for df <= 0 or p outside (0, 1).
[[nodiscard]] double student_t_quantile(double p, double df) noexcept;

// Half-width of the `level` (0.999 for the table) two-sided confidence interval of the mean of `n`
// samples with standard deviation `sd`. NaN when n < 2.
[[nodiscard]] double confidence_half_width(double sd, std::size_t n, double level = 0.999) noexcept;

struct Fences {
  double lower = 0;
  double upper = 0;
};
// Tukey's fences of an already sorted, non-empty sample.
[[nodiscard]] Fences tukey_fences(std::span<const double> sorted, double k = 1.5) noexcept;

// Indices (ascending) of the values above the upper Tukey fence. Empty for fewer than 4 values: the
// quartiles of 3 numbers say nothing about what is unusual.
[[nodiscard]] std::vector<std::size_t> upper_outliers(std::span<const double> values);

struct Summary {
  std::size_t n = 0;
  double mean = 0;
  double error = 0;  // NaN when n < 2
  double stddev = 0;
  double median = 0;
  double p95 = 0;
  double min = 0;
  double max = 0;
};
// Summary of `values` (any order). All zero when empty.
[[nodiscard]] Summary summarize(std::span<const double> values);

// `values` without the entries at `excluded` (ascending indices), order kept.
[[nodiscard]] std::vector<double> without(std::span<const double> values, std::span<const std::size_t> excluded);

struct RatioStats {
  double mean = 0;
  double sd = 0;
  double median = 0;
  // ratio_paired only: the distribution-free 95 % confidence interval of the median (median_interval);
  // NaN when there are too few pairs for one.
  double median_low = std::numeric_limits<double>::quiet_NaN();
  double median_high = std::numeric_limits<double>::quiet_NaN();
};
// Every pairing x_i / b_j (see the header comment). Both non-empty and b all positive, else NaN.
[[nodiscard]] RatioStats ratio_all_pairs(std::span<const double> x, std::span<const double> b);
// Paired x_i / b_i over the first min(n_x, n_b) entries: mean, sd, median and the median's 95 %
// interval. NaN when there is no pair or a b_i is not positive.
[[nodiscard]] RatioStats ratio_paired(std::span<const double> x, std::span<const double> b);

// A unit for a column of values: the largest unit in which the smallest value is still below 1000
// of it (BenchmarkDotNet's rule: 113100 ns -> 113.1 μs, 999 ns -> 999 ns).
struct Unit {
  std::string_view name;   // "ns", "μs", "ms", "s" / "B", "KB", "MB", "GB"
  double scale = 1;        // value in base units per one of this unit
};
[[nodiscard]] Unit time_unit_for(std::span<const double> values_ns) noexcept;
// One unit for a whole table of unlike quantities (the phase table: a 200 ns phase next to a 10 ms
// one): the largest unit in which the median value is still below 1000 of it, so that most cells
// read between 1 and 1000 and the smallest ones get decimals instead of forcing ns on the rest.
[[nodiscard]] Unit time_unit_for_table(std::span<const double> values_ns);
// Sizes use 1024 steps: the smallest value stays below 1024 of the unit.
[[nodiscard]] Unit size_unit_for(std::span<const double> values_bytes) noexcept;

// Decimal places so that the smallest magnitude in a column (in its unit) shows four significant
// digits, clamped to [min_decimals, max_decimals].
[[nodiscard]] int decimals_for(std::span<const double> values_in_unit, int min_decimals = 1, int max_decimals = 3) noexcept;

// The most decimal places worth printing in `unit` for values read with a timer of granularity
// `resolution_ns` (its resolution, or its overhead for single readings): the last digit shown is no
// finer than the timer. 0 at least; 9 when the resolution is unknown (0 or not finite).
[[nodiscard]] int decimals_within_resolution(const Unit& unit, double resolution_ns) noexcept;

}  // namespace ringlab::bench
