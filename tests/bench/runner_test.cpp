// The runner's measurement: the pilot, warm-up, the adaptive stop, outliers, what is counted per op,
// hooks and progress (its cases' outcomes: runner_cases_test.cpp; interleaved rounds and cancels:
// runner_rounds_test.cpp).
#include "ringlab/bench/run/runner.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runner_fakes.hpp"

namespace rb = ringlab::bench;
namespace rs = ringlab::strategies;
using namespace ringlab::bench::testing;

TEST_CASE_FIXTURE(Fixture, "the pilot picks the fewest ops that make one iteration last the iteration time") {
  struct Row {
    uint64_t cost_ns;
    uint64_t expected_ops;
  };
  // 1 ms -> 100; 3 ms -> 34 (102 ms); 250 ms -> 1 (at least one op); 7 us -> 14286 (100.002 ms).
  for (const Row& row : {Row{1'000'000, 100}, Row{3'000'000, 34}, Row{250'000'000, 1}, Row{7'000, 14'286}}) {
    INFO("cost " << row.cost_ns << " ns per op");
    behaviours[0] = Behaviour{};
    behaviours[0].cost_ns = row.cost_ns;
    options.warmup = 0;
    options.iterations = 2;
    options.max_iterations = 2;
    const auto results = run({spec(0)});
    REQUIRE(results.size() == 1);
    const rb::CaseResult& r = results[0];
    REQUIRE(r.status == rb::CaseStatus::ok);
    CHECK(r.ops_per_iteration == row.expected_ops);
    CHECK(static_cast<double>(r.ops_per_iteration * row.cost_ns) >= 100e6);
    CHECK((r.ops_per_iteration == 1 || static_cast<double>((r.ops_per_iteration - 1) * row.cost_ns) < 100e6));
  }
}

TEST_CASE_FIXTURE(Fixture, "the pilot stops growing at the ops limit") {
  behaviours[0].cost_ns = 10;
  options.max_ops_per_iteration = 1000;
  options.warmup = 0;
  options.iterations = 2;
  options.max_iterations = 2;
  const auto results = run({spec(0)});
  REQUIRE(results[0].status == rb::CaseStatus::ok);
  CHECK(results[0].ops_per_iteration == 1000);
}

TEST_CASE_FIXTURE(Fixture, "warm-up runs the given iterations untimed, then measurement stops at the minimum when stable") {
  const auto results = run({spec(0)});
  REQUIRE(results.size() == 1);
  const rb::CaseResult& r = results[0];
  REQUIRE(r.status == rb::CaseStatus::ok);
  CHECK(r.warmup_iterations == 3);
  CHECK(r.ops_per_iteration == 100);
  // Constant cost: Error is 0, so the adaptive stop ends at the minimum of 15.
  CHECK(r.samples_ns.size() == 15);
  // Pilot 1 + 100 ops, warm-up 3 x 100, measurement 15 x 100, and the verified ops outside the clock:
  // one before an iteration's timed ops and one among them when there are two or more.
  CHECK(behaviours[0].calls == (1 + 1) + (100 + 2) + 3 * (100 + 2) + 15 * (100 + 2));
  CHECK(behaviours[0].verified_calls == 1 + 2 + 3 * 2 + 15 * 2);
  // The hooks see the timed segments only: two per iteration, 1500 ops in all.
  CHECK(hook.begins == 30);
  CHECK(hook.ends == 30);
  CHECK(hook.ops_seen == 1500);
  CHECK(r.stats.mean == doctest::Approx(1e6));
  CHECK(r.stats.stddev == doctest::Approx(0));
  CHECK(r.stats.error == doctest::Approx(0));
  CHECK(behaviours[0].setups == 1);
  CHECK(behaviours[0].teardowns == 1);
  CHECK(behaviours[0].last_setup.port == 8080);
  // The strategy's notes, then what verification cost: 30 verified ops (two per measured iteration),
  // each as long as a timed op on the fake clock.
  CHECK(r.notes ==
        "fake notes; verification (full checksum, clock stopped) on 30 ops: 1000.0 µs per verified op against "
        "1000.0 µs per timed op");
  CHECK(r.verified_ops == 30);
  CHECK(r.strategy == "base");
  CHECK(r.method == "GET");
  CHECK(r.payload == "weather");
  CHECK(r.size == 100);
  CHECK(r.allocator == "system");
}

TEST_CASE_FIXTURE(Fixture, "the adaptive stop: noise above the target error runs to the maximum, noise below stops at the minimum") {
  SUBCASE("iterations alternating 1 ms and 2 ms per op never reach 2 %") {
    behaviours[0].extra_in_iteration = [](unsigned k) -> uint64_t { return k % 2 == 0 ? 1'000'000 : 0; };
    const auto results = run({spec(0)});
    REQUIRE(results[0].status == rb::CaseStatus::ok);
    CHECK(results[0].samples_ns.size() == 40);
    CHECK(results[0].stats.error / results[0].stats.mean > 0.02);
  }
  SUBCASE("iterations alternating 1.000 ms and 1.001 ms per op are within 2 % at once") {
    behaviours[0].extra_in_iteration = [](unsigned k) -> uint64_t { return k % 2 == 0 ? 1'000 : 0; };
    const auto results = run({spec(0)});
    REQUIRE(results[0].status == rb::CaseStatus::ok);
    CHECK(results[0].samples_ns.size() == 15);
  }
}

TEST_CASE_FIXTURE(Fixture, "a slow iteration is removed as an upper outlier and counted") {
  behaviours[0].extra_in_iteration = [](unsigned k) -> uint64_t {
    if (k == 5) return 9'000'000;  // 10x
    return k % 3 == 0 ? 1'000 : 0;
  };
  const auto results = run({spec(0)});
  const rb::CaseResult& r = results[0];
  REQUIRE(r.status == rb::CaseStatus::ok);
  REQUIRE(r.samples_ns.size() == 15);
  CHECK(r.samples_ns[4] == doctest::Approx(10e6));
  CHECK(r.stats.outliers == 1);
  REQUIRE(r.outliers.size() == 1);
  CHECK(r.outliers[0] == 4);
  CHECK(r.stats.n == 14);
  CHECK(r.stats.max < 1.01e6);
}

TEST_CASE_FIXTURE(Fixture, "allocations, io_uring work and phases are reported per op") {
  behaviours[0].allocate_per_run = 1000;
  behaviours[0].io_per_run = rs::IoCounters{2, 3, 3, 0, 0, 0, 2};
  behaviours[0].stamp_timeline = true;
  const auto results = run({spec(0)});
  const rb::CaseResult& r = results[0];
  REQUIRE(r.status == rb::CaseStatus::ok);
  CHECK((behaviours[0].last_setup.ticks != nullptr));
  REQUIRE(rb::interposition_works());
  REQUIRE(r.memory.bytes_per_op.has_value());
  CHECK(*r.memory.bytes_per_op == doctest::Approx(1000));
  CHECK(*r.memory.allocs_per_op == doctest::Approx(1));
  CHECK(r.io.ring_enters_per_op == doctest::Approx(2));
  CHECK(r.io.sqes_per_op == doctest::Approx(3));
  CHECK(r.io.cqes_per_op == doctest::Approx(3));
  REQUIRE(r.io.syscalls_per_op.has_value());
  CHECK(*r.io.syscalls_per_op == doctest::Approx(2));  // the verified ops' I/O is not in it
  CHECK(r.phases.ops_sampled == 1500);
  CHECK_FALSE(r.phases.connect.has_value());  // never stamped: a kept-alive connection
  CHECK(r.phases.send == doctest::Approx(10));
  CHECK(r.phases.wait == doctest::Approx(20));
  CHECK(r.phases.head == doctest::Approx(30));
  CHECK(r.phases.body == doctest::Approx(40));
  CHECK(r.phases.deserialize == doctest::Approx(50));
  // run() lasted the op's cost (1 ms on the fake clock); 150 ns of it were stamped.
  CHECK(r.phases.other == doctest::Approx(1e6 - 150));
  // Every sampled op's whole run(), in the latency histogram: all 1 ms, within 3 digits.
  REQUIRE(r.latency.has_value());
  CHECK(r.latency->count == 1500);
  CHECK(r.latency->p50 == doctest::Approx(1e6).epsilon(1e-3));
  CHECK(r.latency->p999 == doctest::Approx(1e6).epsilon(1e-3));
  CHECK(r.latency->max == doctest::Approx(1e6));
  CHECK(r.counters.at("fake-events") == 2.5);
  CHECK_FALSE(r.counters.at("unsupported").has_value());
}

TEST_CASE_FIXTURE(Fixture, "with memory and phases off nothing is counted or stamped") {
  options.memory = false;
  options.phases = false;
  behaviours[0].allocate_per_run = 1000;
  behaviours[0].stamp_timeline = true;
  const auto results = run({spec(0)});
  const rb::CaseResult& r = results[0];
  CHECK((behaviours[0].last_setup.ticks == nullptr));
  CHECK_FALSE(r.memory.bytes_per_op.has_value());
  CHECK_FALSE(r.phases.send.has_value());
  CHECK(r.phases.ops_sampled == 0);
}

TEST_CASE_FIXTURE(Fixture, "phases are sampled evenly when there are more ops than room") {
  options.phase_samples = 100;
  behaviours[0].stamp_timeline = true;
  const auto results = run({spec(0)});
  // 100 ops x at most 40 iterations planned -> every 40th op; 1500 measured ops -> 38 samples.
  CHECK(results[0].phases.ops_sampled == 38);
}

TEST_CASE_FIXTURE(Fixture, "a hook that cannot begin fails the case before anything is measured") {
  hook.refuse_begin = true;
  const auto results = run({spec(0)});
  CHECK(results[0].status == rb::CaseStatus::failed);
  CHECK(results[0].reason == "hook: perf control: no ack within 5000 ms");
  CHECK(hook.begins == 0);
  CHECK(behaviours[0].teardowns == 1);
}

TEST_CASE_FIXTURE(Fixture, "progress goes through setup, pilot, warm-up, measurement and done") {
  run({spec(0)});
  std::vector<rb::Stage> distinct;
  for (rb::Stage s : progress.stages) {
    if (distinct.empty() || distinct.back() != s) distinct.push_back(s);
  }
  const std::vector<rb::Stage> expected{rb::Stage::setup, rb::Stage::pilot, rb::Stage::warmup, rb::Stage::measure,
                                        rb::Stage::done};
  CHECK(distinct == expected);
}
