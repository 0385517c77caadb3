// bench compare's Welch test (bench/src/core/compare.cpp) against reference values from
// scipy.stats.ttest_ind(equal_var=False), and its edge cases.
#include "ringlab/bench/core/compare.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace ringlab::bench;

TEST_CASE("welch_test matches reference values (scipy.stats.ttest_ind, equal_var=False)") {
  struct Row {
    std::vector<double> a;
    std::vector<double> b;
    double t;
    double p;
  };
  const Row rows[] = {
      {{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4},
       {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4},
       -2.455356398286006, 0.021378001462866985},
      {{17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8},
       {21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8, 20.7, 21.7, 21.5, 22.5, 23.6, 21.5, 22.5, 23.5,
        21.5, 21.8},
       -1.5654335235985037, 0.14884169660532834},
      {{1000, 1001, 1002}, {1100, 1101, 1103, 1102}, -116.04740410711479, 1.0412883219021192e-09},
  };
  for (const auto& row : rows) {
    const auto test = welch_test(row.a, row.b);
    REQUIRE(test.has_value());
    CHECK(test->t == doctest::Approx(row.t).epsilon(1e-9));
    CHECK(test->p == doctest::Approx(row.p).epsilon(1e-6));
    // Swapping the samples flips t and keeps p.
    const auto swapped = welch_test(row.b, row.a);
    REQUIRE(swapped.has_value());
    CHECK(swapped->t == doctest::Approx(-row.t).epsilon(1e-9));
    CHECK(swapped->p == doctest::Approx(row.p).epsilon(1e-6));
  }
}

TEST_CASE("welch_test: too few samples is no test; no spread is decided by the means alone") {
  const std::vector<double> one = {5};
  const std::vector<double> two = {5, 6};
  CHECK_FALSE(welch_test(one, two).has_value());
  CHECK_FALSE(welch_test(two, std::vector<double>{}).has_value());
  const std::vector<double> flat = {7, 7, 7};
  const std::vector<double> other_flat = {8, 8};
  CHECK(welch_test(flat, flat)->p == 1.0);
  CHECK(welch_test(flat, other_flat)->p == 0.0);
  CHECK(welch_test(flat, other_flat)->t < 0);
}
