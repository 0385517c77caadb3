// Statistics against textbook values: no clock, no randomness.
#include "ringlab/bench/core/statistics.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace rb = ringlab::bench;
using doctest::Approx;

TEST_CASE("mean, sample stddev and median of a textbook sample") {
  // The classic {2,4,4,4,5,5,7,9}: population sd 2, sample sd sqrt(32/7).
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  CHECK(rb::mean(v) == Approx(5.0));
  CHECK(rb::stddev(v) == Approx(std::sqrt(32.0 / 7.0)).epsilon(1e-12));
  const rb::Summary s = rb::summarize(v);
  CHECK(s.n == 8);
  CHECK(s.median == Approx(4.5));
  CHECK(s.min == 2);
  CHECK(s.max == 9);
  // Type 7: h = 7 * 0.95 = 6.65 -> 7 + 0.65 * (9 - 7).
  CHECK(s.p95 == Approx(8.3));
}

TEST_CASE("stddev of fewer than two values is zero and the error is undefined") {
  const std::vector<double> one{42};
  CHECK(rb::stddev(one) == 0);
  const rb::Summary s = rb::summarize(one);
  CHECK(s.mean == 42);
  CHECK(std::isnan(s.error));
  const rb::Summary empty = rb::summarize(std::vector<double>{});
  CHECK(empty.n == 0);
}

TEST_CASE("type-7 quantiles interpolate between order statistics") {
  const std::vector<double> sorted{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  struct Row {
    double p;
    double expected;
  };
  for (const Row& row : {Row{0.0, 1}, Row{0.25, 3.25}, Row{0.5, 5.5}, Row{0.75, 7.75}, Row{0.95, 9.55},
                         Row{1.0, 10}}) {
    INFO("p = " << row.p);
    CHECK(rb::quantile_sorted(sorted, row.p) == Approx(row.expected));
  }
}

TEST_CASE("regularized incomplete beta matches closed forms") {
  for (double x : {0.0, 0.1, 0.37, 0.5, 0.9, 1.0}) {
    INFO("x = " << x);
    CHECK(rb::incomplete_beta(1, 1, x) == Approx(x));                   // uniform
    CHECK(rb::incomplete_beta(3, 1, x) == Approx(std::pow(x, 3)));      // I_x(a,1) = x^a
    CHECK(rb::incomplete_beta(1, 2, x) == Approx(1 - std::pow(1 - x, 2)));  // I_x(1,b) = 1-(1-x)^b
  }
  CHECK(rb::incomplete_beta(7.5, 7.5, 0.5) == Approx(0.5));  // symmetry
  CHECK(std::isnan(rb::incomplete_beta(-1, 1, 0.5)));
}

TEST_CASE("Student t quantiles match the printed tables") {
  struct Row {
    double p;
    double df;
    double expected;
    double tolerance;  // the tables' own rounding
  };
  const Row rows[] = {
      {0.9995, 1, 636.619, 0.001},  {0.9995, 2, 31.599, 0.001}, {0.9995, 4, 8.610, 0.001},
      {0.9995, 14, 4.140, 0.001},   {0.9995, 30, 3.646, 0.001}, {0.9995, 1e7, 3.2905, 0.0001},
      {0.975, 10, 2.228, 0.001},    {0.95, 5, 2.015, 0.001},    {0.975, 1, 12.706, 0.001},
      {0.9, 120, 1.289, 0.001},
  };
  for (const Row& row : rows) {
    INFO("t(" << row.p << ", " << row.df << ")");
    const double t = rb::student_t_quantile(row.p, row.df);
    CHECK(std::fabs(t - row.expected) <= row.tolerance);
    // The lower quantile is the mirror image.
    CHECK(rb::student_t_quantile(1 - row.p, row.df) == Approx(-t).epsilon(1e-9));
    // And the CDF inverts it.
    CHECK(rb::student_t_cdf(t, row.df) == Approx(row.p).epsilon(1e-10));
  }
}

TEST_CASE("Student t quantile works for fractional degrees of freedom and rejects nonsense") {
  const double t25 = rb::student_t_quantile(0.9995, 2.5);
  CHECK(t25 < rb::student_t_quantile(0.9995, 2));
  CHECK(t25 > rb::student_t_quantile(0.9995, 3));
  CHECK(rb::student_t_quantile(0.5, 7) == 0);
  CHECK(std::isnan(rb::student_t_quantile(0.9995, 0)));
  CHECK(std::isnan(rb::student_t_quantile(1.0, 5)));
  CHECK(std::isnan(rb::student_t_quantile(0.0, 5)));
}

TEST_CASE("the 99.9 % confidence half-width is t(0.9995, n-1) s / sqrt(n)") {
  // {10, 12, 14, 16, 18}: s = sqrt(10), n = 5, t(0.9995, 4) = 8.6103.
  const std::vector<double> v{10, 12, 14, 16, 18};
  const rb::Summary s = rb::summarize(v);
  CHECK(s.stddev == Approx(std::sqrt(10.0)));
  CHECK(s.error == Approx(8.610302 * std::sqrt(10.0) / std::sqrt(5.0)).epsilon(1e-6));
  CHECK(rb::confidence_half_width(2.0, 31) == Approx(3.646 * 2.0 / std::sqrt(31.0)).epsilon(1e-3));
  CHECK(std::isnan(rb::confidence_half_width(1.0, 1)));
}

TEST_CASE("Tukey fences and upper outliers") {
  const std::vector<double> sorted{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const rb::Fences f = rb::tukey_fences(sorted);
  CHECK(f.lower == Approx(3.25 - 1.5 * 4.5));
  CHECK(f.upper == Approx(7.75 + 1.5 * 4.5));

  SUBCASE("only values above the upper fence are removed, and their indices are kept in order") {
    const std::vector<double> v{5, 100, 1, 2, 3, 4, 6, 7, 8, 9, 10, -50};
    // Sorted: -50,1..10,100 (12 values): Q1 = 2.75, Q3 = 9.25, upper fence 19; -50 is low, kept.
    const auto out = rb::upper_outliers(v);
    REQUIRE(out.size() == 1);
    CHECK(out[0] == 1);
    const auto kept = rb::without(v, out);
    CHECK(kept.size() == v.size() - 1);
    CHECK(kept.front() == 5);
    CHECK(kept.back() == -50);
  }
  SUBCASE("a constant sample has no outliers") {
    const std::vector<double> v(20, 3.0);
    CHECK(rb::upper_outliers(v).empty());
  }
  SUBCASE("three values are too few to call one an outlier") {
    const std::vector<double> v{1, 1, 1000};
    CHECK(rb::upper_outliers(v).empty());
  }
}

TEST_CASE("ratio over every pairing, as BenchmarkDotNet's RatioStatistics") {
  // x = {2, 4}, b = {1, 2}: ratios 2, 1, 4, 2 -> mean 2.25, sample sd sqrt(4.75 / 3).
  const std::vector<double> x{2, 4};
  const std::vector<double> b{1, 2};
  const rb::RatioStats r = rb::ratio_all_pairs(x, b);
  CHECK(r.mean == Approx(2.25));
  CHECK(r.sd == Approx(std::sqrt(4.75 / 3.0)));

  SUBCASE("constant samples give an exact ratio with no spread") {
    const std::vector<double> x2(15, 300.0);
    const std::vector<double> b2(13, 150.0);
    const rb::RatioStats r2 = rb::ratio_all_pairs(x2, b2);
    CHECK(r2.mean == Approx(2.0));
    CHECK(r2.sd == Approx(0.0));
  }
  SUBCASE("an empty or non-positive baseline gives NaN, not a number that looks real") {
    CHECK(std::isnan(rb::ratio_all_pairs(x, std::vector<double>{}).mean));
    CHECK(std::isnan(rb::ratio_all_pairs(x, std::vector<double>{1, 0}).mean));
  }
}

TEST_CASE("paired ratio cancels drift that hits both cases in a round alike") {
  // The machine slows down round by round; the case is always exactly 1.5x the baseline.
  const std::vector<double> b{100, 110, 120, 130, 140};
  const std::vector<double> x{150, 165, 180, 195, 210};
  const rb::RatioStats paired = rb::ratio_paired(x, b);
  CHECK(paired.mean == Approx(1.5));
  CHECK(paired.median == Approx(1.5));
  CHECK(paired.sd == Approx(0.0).epsilon(1e-12));
  const rb::RatioStats unpaired = rb::ratio_all_pairs(x, b);
  CHECK(unpaired.sd > 0.1);  // the same data without pairing carries the drift as spread
  CHECK(std::isnan(rb::ratio_paired(x, std::vector<double>{}).mean));
}

TEST_CASE("a column's unit is the largest one in which its smallest value stays below 1000") {
  struct Row {
    std::vector<double> ns;
    const char* unit;
  };
  const Row rows[] = {
      {{999}, "ns"},           {{1000}, "μs"},      {{113100, 7793500}, "μs"}, {{2.5e6}, "ms"},
      {{3e9}, "s"},            {{0.4}, "ns"},       {{}, "ns"},
  };
  for (const Row& row : rows) {
    INFO("first value " << (row.ns.empty() ? 0.0 : row.ns[0]));
    CHECK(rb::time_unit_for(row.ns).name == row.unit);
  }
  CHECK(rb::time_unit_for(std::vector<double>{113100}).scale == 1e3);
  CHECK(rb::size_unit_for(std::vector<double>{1023}).name == "B");
  CHECK(rb::size_unit_for(std::vector<double>{5806, 5e6}).name == "KB");
  CHECK(rb::size_unit_for(std::vector<double>{5e6}).name == "MB");
}

TEST_CASE("decimals show four significant digits of the smallest value") {
  CHECK(rb::decimals_for(std::vector<double>{113.1, 7793.5}) == 1);
  CHECK(rb::decimals_for(std::vector<double>{1.95, 155.56}) == 3);
  CHECK(rb::decimals_for(std::vector<double>{12.98}) == 2);
  CHECK(rb::decimals_for(std::vector<double>{0.66}) == 3);
  CHECK(rb::decimals_for(std::vector<double>{0.0}) == 1);
}

TEST_CASE("decimals within the timer's resolution: the last digit shown is no finer than the timer") {
  const rb::Unit ns{"ns", 1};
  const rb::Unit us{"μs", 1e3};
  CHECK(rb::decimals_within_resolution(ns, 0.38) == 0);   // a 2.6 GHz TSC: whole ns
  CHECK(rb::decimals_within_resolution(ns, 20) == 0);     // never negative
  CHECK(rb::decimals_within_resolution(us, 0.38) == 3);   // 0.001 μs = 1 ns >= 0.38 ns
  CHECK(rb::decimals_within_resolution(us, 20) == 1);     // 0.1 μs >= 20 ns > 0.01 μs
  CHECK(rb::decimals_within_resolution(us, 100) == 1);    // exactly one digit's worth
  CHECK(rb::decimals_within_resolution(us, 0) == 9);      // unknown: no limit
}

TEST_CASE("a table's unit comes from its median value, so one small value does not force ns on all") {
  const std::vector<double> phases{240, 6'044, 59'448, 115'436, 13'037'012};
  CHECK(rb::time_unit_for_table(phases).name == "μs");
  CHECK(rb::time_unit_for(phases).name == "ns");  // a column's rule: from its smallest value
  CHECK(rb::time_unit_for_table(std::vector<double>{5e6, 7e6, 9e6}).name == "ms");
  CHECK(rb::time_unit_for_table(std::vector<double>{}).name == "ns");
}

TEST_CASE("the median's 95 % interval: the binomial order statistics, none below six values") {
  // Ranks from B(n, 1/2): n = 6 -> 1st and 6th (coverage 1 - 2/64 = 0.969), n = 10 -> 2nd and 9th
  // (0.979), n = 20 -> 6th and 15th (0.959), n = 100 -> 40th and 61st (0.965), as the printed tables.
  const auto ranks = [](std::size_t n) {
    std::vector<double> sorted;
    for (std::size_t i = 1; i <= n; ++i) sorted.push_back(static_cast<double>(i));
    return rb::median_interval(sorted);
  };
  CHECK(std::isnan(ranks(5).low));
  CHECK(std::isnan(ranks(5).high));
  CHECK(ranks(6).low == 1);
  CHECK(ranks(6).high == 6);
  CHECK(ranks(10).low == 2);
  CHECK(ranks(10).high == 9);
  CHECK(ranks(20).low == 6);
  CHECK(ranks(20).high == 15);
  CHECK(ranks(100).low == 40);
  CHECK(ranks(100).high == 61);
  // Thousands of values: the sums stay finite (2^-n would underflow a plain product).
  const rb::Interval large = ranks(5000);
  CHECK(large.low > 2400);
  CHECK(large.high < 2600);
  CHECK(std::isnan(rb::median_interval({}).low));
}

TEST_CASE("paired ratios carry the interval of their median") {
  const std::vector<double> x{90, 95, 100, 105, 110, 92, 98, 102};
  const std::vector<double> b(8, 100);
  const rb::RatioStats r = rb::ratio_paired(x, b);
  CHECK(r.median == Approx(0.99));
  CHECK(r.median_low == Approx(0.90));  // n = 8: the 1st and 8th of the sorted ratios
  CHECK(r.median_high == Approx(1.10));
  const rb::RatioStats few = rb::ratio_paired(std::vector<double>{1, 2}, std::vector<double>{1, 1});
  CHECK(std::isnan(few.median_low));
}
