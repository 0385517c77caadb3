// --client fresh in the runner, with fake strategies on a fake clock: every op (timed or verified) makes,
// sets up, runs once and destroys a strategy of its own, the building is inside the timed op (its time,
// allocations and I/O per op), and the combinations bench refuses are refused here too. The same mode
// over real sockets, with the real strategies, is fresh_client_check.cpp's.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ringlab/bench/measure/memory_diagnoser.hpp"
#include "ringlab/bench/run/runner.hpp"
#include "strategy_calls.hpp"

namespace rb = ringlab::bench;
namespace rs = ringlab::strategies;

namespace {

uint64_t fake_now = 0;
uint64_t fake_ticks() noexcept { return fake_now; }
const rb::Clock kFakeClock{&fake_ticks, &fake_ticks, 1e9};

constexpr uint64_t kSetupNs = 400'000;  // what building the fake client takes
constexpr uint64_t kRunNs = 100'000;    // what its one request takes
constexpr uint64_t kDestroyNs = 20'000;  // what destroying it takes (what teardown() left: its records)
constexpr std::size_t kSetupBytes = 3000;

struct Counts : rb::testing::StrategyCalls {
  int destroyed = 0;
  int runs_on_one_strategy_at_most = 0;  // the most run() calls any one strategy got
  std::vector<rs::CaseConfig> configs;   // what each setup() was given
  bool fail_setup_after_first = false;   // every setup() but the first (the probe's) fails
  bool destroyed_before_teardown = false;  // a strategy that ran was destroyed without teardown()
};
Counts counts;

class CountingStrategy final : public rs::Strategy {
 public:
  CountingStrategy() { ++counts.made; }
  ~CountingStrategy() override {
    ++counts.destroyed;
    fake_now += kDestroyNs;
    if (runs_ > 0 && !torn_down_) counts.destroyed_before_teardown = true;
  }
  rs::Status setup(const rs::CaseConfig& config) override {
    ++counts.setups;
    counts.configs.push_back(config);
    fake_now += kSetupNs;
    buffer_ = std::make_unique<char[]>(kSetupBytes);  // the client's buffers: counted when built in the op
    if (counts.fail_setup_after_first && counts.setups > 1) return std::unexpected(rs::Error{"socket: EMFILE"});
    return {};
  }
  rs::Result<rs::Outcome> run(ringlab::http::Timeline*, rs::Check check) override {
    counts.count_run(check);
    ++runs_;
    counts.runs_on_one_strategy_at_most = std::max(counts.runs_on_one_strategy_at_most, runs_);
    fake_now += kRunNs;
    ++io_.connections_opened;
    ++io_.ring_enters;
    return rs::Outcome{7, check == rs::Check::verify ? 7u : 0u};
  }
  [[nodiscard]] rs::IoCounters io_counters() const override { return io_; }
  [[nodiscard]] std::string notes() const override { return "counting notes"; }
  void teardown() override {
    ++counts.teardowns;
    torn_down_ = true;
    buffer_.reset();
  }

 private:
  bool torn_down_ = false;
  std::unique_ptr<char[]> buffer_;
  rs::IoCounters io_{};
  int runs_ = 0;
};

std::unique_ptr<rs::Strategy> make_counting() { return std::make_unique<CountingStrategy>(); }

const rs::Descriptor kCounting{"counting", "one fake request", "nothing", rs::Method::get, true, false, &make_counting};

rb::CaseSpec fresh_spec() {
  rb::CaseSpec s;
  s.strategy = &kCounting;
  s.config.port = 8080;
  s.config.count = 10;
  s.config.client = rs::Client::fresh;
  return s;
}

// `fail_setup_after_first`: every setup() but the probe's fails.
std::vector<rb::CaseResult> run(const std::vector<rb::CaseSpec>& specs, bool fail_setup_after_first = false) {
  counts = Counts{};
  counts.fail_setup_after_first = fail_setup_after_first;
  fake_now = 1'000'000'000;
  rb::RunnerOptions options;
  options.iteration_time_ms = 5;  // 10 ops of 0.5 ms
  options.warmup = 1;
  options.iterations = 3;
  options.max_iterations = 3;
  rb::RunContext context;
  context.clock = kFakeClock;
  context.allocator = "system";
  return rb::run_cases(specs, options, context);
}

}  // namespace

TEST_CASE("--client fresh: every op makes, sets up, runs once and destroys its own strategy") {
  const auto results = run({fresh_spec()});
  REQUIRE(results.size() == 1);
  const rb::CaseResult& r = results[0];
  REQUIRE_MESSAGE(r.status == rb::CaseStatus::ok, r.reason);
  CHECK(r.client == "fresh");
  CHECK(rb::case_name(fresh_spec()) == "counting weather 10 fresh client");
  CHECK(rb::case_label(r) == "counting weather 10 fresh client (system)");
  // One strategy per run() call, plus the probe: made, set up (untimed, to fail early) and destroyed.
  CHECK(counts.runs > 10);
  rb::testing::check_a_strategy_per_op(counts);
  CHECK(counts.destroyed == counts.made);
  CHECK(counts.runs_on_one_strategy_at_most == 1);
  // The verified ops are fresh clients too, one or two per iteration.
  CHECK(counts.verified_runs >= 1 + 1 + 3);
  CHECK(r.verified_ops >= 3);
  for (const rs::CaseConfig& config : counts.configs) CHECK(config.client == rs::Client::fresh);
  CHECK(r.notes.starts_with("fresh client: every op made, set up, ran and destroyed its own counting ("));
  CHECK(r.notes.find("counting notes") != std::string::npos);
  CHECK_FALSE(counts.destroyed_before_teardown);
  // Building is inside the op: its time, its allocations, its connection; and so is destroying the last
  // op's client, whose records outlived it until this op began (one destroyed per op).
  CHECK(r.stats.median == doctest::Approx(static_cast<double>(kSetupNs + kRunNs + kDestroyNs)));
  CHECK(r.io.connections_per_op == doctest::Approx(1.0));
  CHECK(r.io.ring_enters_per_op == doctest::Approx(1.0));
  REQUIRE(rb::interposition_works());
  REQUIRE(r.memory.bytes_per_op.has_value());
  CHECK(*r.memory.bytes_per_op >= static_cast<double>(kSetupBytes));
  CHECK(*r.memory.allocs_per_op >= 2);  // the strategy object and its buffer, at least
}

TEST_CASE("--client pooled: one strategy for the case, set up once, its buffers built outside the clock") {
  rb::CaseSpec pooled = fresh_spec();
  pooled.config.client = rs::Client::pooled;
  const auto results = run({pooled});
  REQUIRE(results[0].status == rb::CaseStatus::ok);
  CHECK(results[0].client == "pooled");
  CHECK(rb::case_name(pooled) == "counting weather 10");
  rb::testing::check_one_strategy_for_the_case(counts);
  CHECK(counts.runs_on_one_strategy_at_most == counts.runs);
  CHECK(results[0].stats.median == doctest::Approx(static_cast<double>(kRunNs)));
  REQUIRE(results[0].memory.bytes_per_op.has_value());
  CHECK(*results[0].memory.bytes_per_op == doctest::Approx(0));
}

TEST_CASE("--client fresh: a client that cannot be built in an op fails the case with the step") {
  const auto results = run({fresh_spec()}, true);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == rb::CaseStatus::failed);
  CHECK(results[0].reason == "pilot iteration 1 verified op: fresh client setup: socket: EMFILE");
  CHECK(counts.teardowns == counts.made);  // torn down whatever happened
  CHECK(counts.destroyed == counts.made);
}

TEST_CASE("--client fresh refuses more than one in flight and --connection fresh, naming why") {
  rb::CaseSpec many = fresh_spec();
  many.config.inflight = 4;
  rb::CaseSpec fresh_connection = fresh_spec();
  fresh_connection.config.connection = rs::Connection::fresh;
  const auto results = run({many, fresh_connection});
  REQUIRE(results.size() == 2);
  CHECK(results[0].status == rb::CaseStatus::failed);
  CHECK(results[0].reason == "a fresh client runs one request: it does not combine with more than one in flight");
  CHECK(results[1].status == rb::CaseStatus::failed);
  CHECK(results[1].reason == "a fresh client opens its own connection: --connection fresh is redundant with it");
  CHECK(counts.made == 0);
}
