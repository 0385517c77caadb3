// The runner's interleaved rounds and cancels: balanced order, paired samples, reconnects after the
// set-up, rounds rounded up to the cases, and a cancel keeping what was measured.
#include "ringlab/bench/run/runner.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runner_fakes.hpp"

namespace rb = ringlab::bench;
namespace rs = ringlab::strategies;
using namespace ringlab::bench::testing;

TEST_CASE_FIXTURE(Fixture, "a cancel between iterations stops the run and marks the case interrupted") {
  options.interleave = false;
  hook.cancel_after = 6;  // three measured iterations of two timed segments
  const auto results = run({spec(0), spec(1)});
  CHECK(results[0].status == rb::CaseStatus::failed);
  CHECK(results[0].reason == "interrupted");
  CHECK(results[1].status == rb::CaseStatus::failed);
  CHECK(behaviours[1].calls == 0);
  CHECK(hook.ends == 6);
}

TEST_CASE_FIXTURE(Fixture, "an interleaved run cancelled mid-measurement keeps every case's samples so far") {
  options.interleave = true;
  hook.cancel_after = 2 * 7;  // 3 rounds of two cases, then one more case-iteration
  const auto results = run({spec(0), spec(1)});
  for (const auto& r : results) {
    INFO(r.strategy << ": " << r.reason);
    CHECK(r.status == rb::CaseStatus::ok);
  }
  // Cancelled after the 7th case-iteration, the first of round 3, whose order is 1 0: case 1 ran 4
  // iterations, case 0 three.
  CHECK(results[0].samples_ns.size() == 3);
  CHECK(results[1].samples_ns.size() == 4);
  CHECK(results[0].stats.mean == doctest::Approx(1e6));
}

TEST_CASE("interleaved order is balanced: each case holds each position equally often") {
  for (std::size_t n = 1; n <= 7; ++n) {
    for (std::size_t blocks = 1; blocks <= 3; ++blocks) {
      INFO(n << " cases, " << blocks << " blocks of rounds");
      std::vector<std::vector<int>> seen(n, std::vector<int>(n, 0));  // [case][position]
      for (std::size_t round = 0; round < n * blocks; ++round) {
        const auto order = rb::interleave_order(n, round);
        REQUIRE(order.size() == n);
        std::vector<int> once(n, 0);
        for (std::size_t position = 0; position < n; ++position) {
          ++seen[order[position]][position];
          ++once[order[position]];
        }
        CHECK(std::all_of(once.begin(), once.end(), [](int c) { return c == 1; }));  // a permutation
      }
      for (std::size_t c = 0; c < n; ++c) {
        for (std::size_t p = 0; p < n; ++p) CHECK(seen[c][p] == static_cast<int>(blocks));
      }
    }
  }
  // The rotation the documentation shows: A B C, C A B, B C A.
  CHECK(rb::interleave_order(3, 0) == std::vector<std::size_t>{0, 1, 2});
  CHECK(rb::interleave_order(3, 1) == std::vector<std::size_t>{2, 0, 1});
  CHECK(rb::interleave_order(3, 2) == std::vector<std::size_t>{1, 2, 0});
  CHECK(rb::balanced_rounds(3, 15) == 15);
  CHECK(rb::balanced_rounds(4, 15) == 16);
  CHECK(rb::balanced_rounds(16, 15) == 16);
}

TEST_CASE_FIXTURE(Fixture, "an interleaved run measures in rotated rounds and keeps samples paired by round") {
  CHECK(rb::RunnerOptions{}.interleave);  // the default
  behaviours[1].cost_ns = 2'000'000;
  behaviours[2].cost_ns = 3'000'000;
  const auto results = run({spec(0), spec(1), spec(2)});
  REQUIRE(results.size() == 3);
  for (const auto& r : results) {
    INFO(r.strategy << ": " << r.reason);
    REQUIRE(r.status == rb::CaseStatus::ok);
    CHECK(r.samples_ns.size() == 15);  // 15 rounds: a multiple of 3, all stable
  }
  // Two timed segments per case-iteration, so each case index appears twice in a row.
  REQUIRE(hook.order.size() == 90);
  for (std::size_t round = 0; round < 15; ++round) {
    const auto expected = rb::interleave_order(3, round);
    for (std::size_t p = 0; p < 3; ++p) {
      CHECK(hook.order[round * 6 + 2 * p] == expected[p]);
      CHECK(hook.order[round * 6 + 2 * p + 1] == expected[p]);
    }
  }
  CHECK(results[1].stats.mean == doctest::Approx(2e6));
  CHECK(hook.case_begins.size() == 3);
  CHECK(hook.case_ends.size() == 3);
}

TEST_CASE_FIXTURE(Fixture, "an interleaved run reconnects every case after the long set-up, so an idle timeout fails none") {
  // Each setup takes 1 s of fake time, so case 0 idles over 2 s while the others are set up and piloted;
  // the fake server closes connections idle for more than 1 s. A measured round (3 x 100 ms) is well
  // below that.
  for (std::size_t i = 0; i < 3; ++i) {
    behaviours[i].setup_cost_ns = 1'000'000'000;
    behaviours[i].idle_limit_ns = 1'000'000'000;
  }
  const auto results = run({spec(0), spec(1), spec(2)});
  for (std::size_t i = 0; i < 3; ++i) {
    INFO(results[i].strategy << ": " << results[i].reason);
    CHECK(results[i].status == rb::CaseStatus::ok);
    CHECK(behaviours[i].drops == 1);
    CHECK(results[i].warmup_iterations == 3);
  }
}

TEST_CASE_FIXTURE(Fixture, "one after another, a case idles only between its own iterations: no reconnect") {
  options.interleave = false;
  behaviours[0].setup_cost_ns = 1'000'000'000;
  behaviours[0].idle_limit_ns = 1'000'000'000;
  const auto results = run({spec(0)});
  CHECK(results[0].status == rb::CaseStatus::ok);
  CHECK(behaviours[0].drops == 0);
}

TEST_CASE_FIXTURE(Fixture, "an interleaved run rounds the measured rounds up to a multiple of the cases") {
  options.interleave = true;
  const auto results = run({spec(0), spec(1), spec(2), spec(0, 1000)});
  for (const auto& r : results) CHECK(r.samples_ns.size() == 16);
}
