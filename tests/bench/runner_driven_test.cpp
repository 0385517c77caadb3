// The runner driven from outside (runner.hpp's RoundDriver: a before/after run's worker), and the
// calibrated slowdown (RunnerOptions::slowdown_*, slowed_strategy.hpp), on the fake strategies and clock.
#include <doctest/doctest.h>

#include <deque>

#include "runner_fakes.hpp"

using namespace ringlab::bench::testing;

namespace {

// Agrees `ops` for every case, then hands out `script` (case indexes) one at a time and records what it
// is told.
class ScriptedDriver final : public rb::RoundDriver {
 public:
  rb::Result<std::vector<uint64_t>> agree_ops(std::span<const std::string> names,
                                              std::span<const uint64_t> piloted) override {
    seen_names.assign(names.begin(), names.end());
    seen_piloted.assign(piloted.begin(), piloted.end());
    if (refuse_ops) return std::unexpected(rb::Error{"the parent went away"});
    return std::vector<uint64_t>(names.size(), ops);
  }
  rb::Result<std::optional<std::size_t>> next_case() override {
    if (script.empty() && fail_after_script) return std::unexpected(rb::Error{"the parent went away"});
    if (script.empty()) return std::optional<std::size_t>{};
    const std::size_t next = script.front();
    script.pop_front();
    return std::optional<std::size_t>{next};
  }
  rb::Status measured(std::size_t index, std::optional<rb::IterationSample> sample, std::string_view failure) override {
    indexes.push_back(index);
    samples.push_back(sample);
    failures.emplace_back(failure);
    return {};
  }

  uint64_t ops = 7;
  bool refuse_ops = false;
  bool fail_after_script = false;  // next_case fails once the script is used up, instead of ending
  std::deque<std::size_t> script;
  std::vector<std::string> seen_names;
  std::vector<uint64_t> seen_piloted;
  std::vector<std::size_t> indexes;
  std::vector<std::optional<rb::IterationSample>> samples;
  std::vector<std::string> failures;
};

}  // namespace

TEST_CASE_FIXTURE(Fixture, "a driven run measures what the driver asks, with the ops it agrees, and tells it each sample") {
  ScriptedDriver scripted;
  scripted.script = {1, 0, 0, 1, 1};
  driver = &scripted;
  behaviours[0].cost_ns = 1'000'000;
  behaviours[1].cost_ns = 2'000'000;
  const auto results = run({spec(0), spec(1)});
  REQUIRE(results.size() == 2);
  CHECK(scripted.seen_names == std::vector<std::string>{"base weather 100", "other weather 100"});
  // The pilots' own ops (100 ms of 1 ms and of 2 ms ops) before the driver's.
  CHECK(scripted.seen_piloted == std::vector<uint64_t>{100, 50});
  CHECK(results[0].ops_per_iteration == 7);
  CHECK(results[1].ops_per_iteration == 7);
  CHECK(results[0].samples_ns.size() == 2);
  CHECK(results[1].samples_ns.size() == 3);
  CHECK(scripted.indexes == std::vector<std::size_t>{1, 0, 0, 1, 1});
  REQUIRE(scripted.samples.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    REQUIRE(scripted.samples[i]);
    CHECK(scripted.samples[i]->ns_per_op == doctest::Approx(scripted.indexes[i] == 0 ? 1e6 : 2e6));
    CHECK(scripted.samples[i]->cpu_ns_per_op >= 0);
  }
  CHECK(results[0].status == rb::CaseStatus::ok);
  CHECK(results[1].stats.mean == doctest::Approx(2e6));
}

TEST_CASE_FIXTURE(Fixture, "a driven run tells the driver of a failed iteration, and leaves out a case it never asked for") {
  ScriptedDriver scripted;
  scripted.ops = 2;
  scripted.script = {0, 0};
  driver = &scripted;
  // Case 0's calls: pilot and warm-up use some; fail the first measured one (each iteration: a verified op
  // and two timed ones).
  options.warmup = 1;
  behaviours[0].fail_at_call = 3 + 3 + 3 + 1 + 2;
  const auto results = run({spec(0), spec(1)});
  REQUIRE(results.size() == 2);
  REQUIRE(!scripted.samples.empty());
  CHECK(results[0].status == rb::CaseStatus::failed);
  const bool told = !scripted.samples.back() && !scripted.failures.back().empty();
  CHECK(told);
  // Case 1 was never asked for: left out by the driver, not failed (its pilot and warm-up ran).
  CHECK(results[1].status == rb::CaseStatus::skipped);
  CHECK(results[1].reason.starts_with("left out by the driver"));
}

TEST_CASE_FIXTURE(Fixture, "a driver that fails mid-measurement fails a case it never measured, with its reason") {
  ScriptedDriver scripted;
  scripted.script = {0};
  scripted.fail_after_script = true;
  driver = &scripted;
  const auto results = run({spec(0), spec(1)});
  REQUIRE(results.size() == 2);
  CHECK(results[0].status == rb::CaseStatus::ok);
  CHECK(results[0].samples_ns.size() == 1);
  CHECK(results[1].status == rb::CaseStatus::failed);
  CHECK(results[1].reason == "driver: the parent went away");
}

TEST_CASE_FIXTURE(Fixture, "a driver that cannot agree the ops fails every case with its reason") {
  ScriptedDriver scripted;
  scripted.refuse_ops = true;
  driver = &scripted;
  const auto results = run({spec(0), spec(1)});
  for (const auto& r : results) {
    CHECK(r.status == rb::CaseStatus::failed);
    CHECK(r.reason == "driver: the parent went away");
  }
}

// A clock that moves by 1 µs at every reading, so that a busy wait on it ends.
uint64_t ticking_now() noexcept { return fake_now += 1000; }

TEST_CASE_FIXTURE(Fixture, "--slowdown adds the measured share of each op's time to its strategy's cases only") {
  clock = rb::Clock{&ticking_now, &ticking_now, 1e9};
  options.slowdown_strategy = "other";
  options.slowdown_percent = 10;
  behaviours[0].cost_ns = 1'000'000;
  behaviours[1].cost_ns = 1'000'000;
  options.iterations = 3;
  options.max_iterations = 3;
  const auto results = run({spec(0), spec(1)});
  REQUIRE(results.size() == 2);
  REQUIRE(results[1].status == rb::CaseStatus::ok);
  REQUIRE(results[0].status == rb::CaseStatus::ok);
  // 1 ms per op plus the clock's own readings; the slowed case 10 % of its op more.
  const double ratio = results[1].stats.median / results[0].stats.median;
  CHECK(ratio == doctest::Approx(1.10).epsilon(0.01));
  CHECK(results[0].notes.find("--slowdown") == std::string::npos);
  CHECK(results[1].notes.find("slowed by 10 % (--slowdown): a busy wait of 10.") != std::string::npos);
}
