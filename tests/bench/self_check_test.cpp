// Self-check: the spin work is real work, and the check produces its three figures. The figures'
// values are the machine's business (no timing assertion here); `bench --self-check` reports them.
#include "ringlab/bench/run/self_check.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "ringlab/bench/measure/cycle_counter.hpp"
#include "text_checks.hpp"

namespace rb = ringlab::bench;
using ringlab::bench::testing::check_contains;

TEST_CASE("spin is deterministic and depends on every step") {
  CHECK(rb::spin(1000) == rb::spin(1000));
  CHECK(rb::spin(1000) != rb::spin(1001));
  CHECK(rb::spin(0) == 0x9E3779B97F4A7C15ull);
  // One xorshift64 step from the seed, by hand.
  uint64_t x = 0x9E3779B97F4A7C15ull;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  CHECK(rb::spin(1) == x);
}

TEST_CASE("a spin strategy returns its spin as the checksum at every call") {
  auto strategy = rb::make_spin_strategy(500);
  REQUIRE(strategy->setup(ringlab::strategies::CaseConfig{}).has_value());
  const auto first = strategy->run(nullptr, ringlab::strategies::Check::verify);
  const auto second = strategy->run(nullptr, ringlab::strategies::Check::consume);
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  CHECK(first->checksum == rb::spin(500));
  CHECK(first->consumed == rb::spin(500));
  CHECK(second->consumed == first->consumed);
}

TEST_CASE("the self-check measures three runs of A and the ratio of 2A to A") {
  rb::SelfCheckOptions options;
  options.work = 200;
  options.runner.iteration_time_ms = 2;
  options.runner.warmup = 1;
  options.runner.iterations = 4;
  options.runner.max_iterations = 4;
  rb::RunContext context;
  context.clock = rb::cycle_counter_clock();
  const auto result = rb::run_self_check(options, context);
  INFO((result ? std::string() : result.error().message));
  REQUIRE(result.has_value());
  for (double m : result->means_ns) CHECK(m > 0);
  CHECK(std::isfinite(result->spread));
  // The spread is the three means' range over their mean, as the report says.
  const auto [lowest, highest] = std::minmax_element(result->means_ns.begin(), result->means_ns.end());
  const double mean_of_means = (result->means_ns[0] + result->means_ns[1] + result->means_ns[2]) / 3;
  CHECK(result->spread == doctest::Approx((*highest - *lowest) / mean_of_means));
  CHECK(result->ratio > 0);
  CHECK(result->timer_overhead_ns > 0);
  const std::string text = rb::render_self_check(*result);
  check_contains(text, {"timer", "spread", "target 1.95-2.05"});
}
