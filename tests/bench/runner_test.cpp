// Runner with fake strategies on a fake clock: every stage's arithmetic is exact and no test
// depends on the speed of the machine.
#include "ringlab/bench/run/runner.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ringlab/bench/measure/memory_diagnoser.hpp"

namespace rb = ringlab::bench;
namespace rs = ringlab::strategies;

namespace {

// The fake clock: ticks are ns, and only the fake strategies move it.
uint64_t fake_now = 0;
uint64_t fake_ticks() noexcept { return fake_now; }
const rb::Clock kFakeClock{&fake_ticks, &fake_ticks, 1e9};

// The measured iteration in progress (1-based; 0 outside measurement), for costs that depend on the
// iteration: CountingHook starts it at 1, RecordingProgress moves it on after each measured iteration.
unsigned measured_iteration = 0;

struct Behaviour {
  uint64_t cost_ns = 1'000'000;
  // Extra ns of every op of measured iteration k (1-based), 0 outside measurement.
  std::function<uint64_t(unsigned)> extra_in_iteration;
  uint64_t checksum = 42;
  std::optional<uint64_t> checksum_from_call;  // from this call (1-based) on, checksum + 1
  // From this verified call (1-based, counting verified calls only) on, the verified checksum is wrong
  // while the consumption stays right: what only verification can catch.
  std::optional<uint64_t> wrong_checksum_from_verified_call;
  std::optional<uint64_t> fail_at_call;        // 1-based
  std::optional<std::string> skip;
  std::optional<rs::Payload> skip_payload;  // skip_case() refuses cases of this payload
  std::optional<std::string> setup_error;
  std::size_t allocate_per_run = 0;  // bytes allocated (and freed) by each run
  bool stamp_timeline = false;
  rs::IoCounters io_per_run{};
  uint64_t setup_cost_ns = 0;  // fake time setup() takes
  // A server that closes a connection idle for longer than this (0: never): the next run() on it
  // fails, as a kept-alive connection the server closed does; drop_connection() makes run() reconnect.
  uint64_t idle_limit_ns = 0;
  rs::HeldMemory held{};  // what held_memory() reports (connections 0: nothing)

  // Observed.
  rs::CaseConfig last_setup{};  // what the last setup() was given (the default before any)
  uint64_t calls = 0;
  uint64_t verified_calls = 0;
  int drops = 0;
  int setups = 0;
  int teardowns = 0;
};

std::array<Behaviour, 4> behaviours;

class FakeStrategy final : public rs::Strategy {
 public:
  explicit FakeStrategy(Behaviour& b) : b_(b) {}

  std::optional<std::string> skip_reason(const ringlab::net::RingFeatures&) const override { return b_.skip; }
  std::optional<std::string> skip_case(const rs::CaseConfig& config) const override {
    if (b_.skip_payload && config.payload == *b_.skip_payload) return "reads no weather records";
    return std::nullopt;
  }

  rs::Status setup(const rs::CaseConfig& config) override {
    ++b_.setups;
    fake_now += b_.setup_cost_ns;
    last_run_ = fake_now;
    connected_ = true;
    b_.last_setup = config;
    if (b_.setup_error) return std::unexpected(rs::Error{*b_.setup_error});
    return {};
  }

  rs::Result<rs::Outcome> run(ringlab::http::Timeline* timeline, rs::Check check) override {
    ++b_.calls;
    const bool verify = check == rs::Check::verify;
    if (verify) ++b_.verified_calls;
    if (b_.idle_limit_ns != 0) {
      if (connected_ && fake_now - last_run_ > b_.idle_limit_ns) {
        connected_ = false;
        return std::unexpected(rs::Error{"fake 127.0.0.1:1: peer closed the reused connection before responding"});
      }
      connected_ = true;
    }
    if (b_.fail_at_call && b_.calls == *b_.fail_at_call) {
      return std::unexpected(rs::Error{"fake 127.0.0.1:1: peer closed after 3 of 7 body bytes"});
    }
    uint64_t cost = b_.cost_ns;
    if (measured_iteration > 0 && b_.extra_in_iteration) cost += b_.extra_in_iteration(measured_iteration);
    if (timeline != nullptr && b_.stamp_timeline) {
      // send 10, wait 20, head 30, body 40, deserialize 50 (ns = ticks on the fake clock).
      timeline->start = fake_now + 1;
      timeline->request_sent = timeline->start + 10;
      timeline->first_byte = timeline->request_sent + 20;
      timeline->head_parsed = timeline->first_byte + 30;
      timeline->body_done = timeline->head_parsed + 40;
      timeline->deserialized = timeline->body_done + 50;
    }
    if (b_.allocate_per_run > 0) {
      auto* block = new char[b_.allocate_per_run];
      asm volatile("" : : "r"(block) : "memory");
      delete[] block;
    }
    io_.ring_enters += b_.io_per_run.ring_enters;
    io_.sqes_submitted += b_.io_per_run.sqes_submitted;
    io_.cqes_reaped += b_.io_per_run.cqes_reaped;
    io_.syscalls += b_.io_per_run.syscalls;
    fake_now += cost;
    last_run_ = fake_now;
    const uint64_t value =
        b_.checksum_from_call && b_.calls >= *b_.checksum_from_call ? b_.checksum + 1 : b_.checksum;
    rs::Outcome outcome{value, 0};
    if (verify) {
      const bool wrong = b_.wrong_checksum_from_verified_call && b_.verified_calls >= *b_.wrong_checksum_from_verified_call;
      outcome.checksum = wrong ? value ^ 0xFF : value;
    }
    return outcome;
  }

  rs::IoCounters io_counters() const override { return io_; }
  rs::HeldMemory held_memory() const override { return b_.held; }
  void drop_connection() override {
    ++b_.drops;
    connected_ = false;
  }
  std::string notes() const override { return "fake notes"; }
  void teardown() override { ++b_.teardowns; }

 private:
  Behaviour& b_;
  rs::IoCounters io_{};
  uint64_t last_run_ = 0;
  bool connected_ = false;
};

template <std::size_t I>
std::unique_ptr<rs::Strategy> make_fake() {
  return std::make_unique<FakeStrategy>(behaviours[I]);
}

const rs::Descriptor kDescriptors[] = {
    {"base", "fixed work, the baseline", "nothing", rs::Method::get, true, false, &make_fake<0>},
    {"other", "fixed work", "nothing", rs::Method::get, false, false, &make_fake<1>},
    {"third", "fixed work", "nothing", rs::Method::get, false, false, &make_fake<2>},
    {"post_base", "fixed work", "nothing", rs::Method::post, true, false, &make_fake<3>},
    // Proves some fields only, as three_fields does: not held to the baseline's checksum.
    {"partial", "fixed work", "nothing", rs::Method::get, false, false, &make_fake<2>, false, {}, true},
    // Runs many requests in flight (CaseConfig::inflight > 1).
    {"many", "fixed work", "nothing", rs::Method::get, false, false, &make_fake<1>, false, {}, false, &make_fake<1>},
};

rb::CaseSpec spec(std::size_t descriptor, std::size_t size = 100) {
  rb::CaseSpec s;
  s.strategy = &kDescriptors[descriptor];
  s.config.port = 8080;
  s.config.count = size;
  return s;
}

// Counts hook calls and moves measured_iteration; optionally cancels after some iterations.
class CountingHook final : public rb::IterationHook {
 public:
  rb::Status case_begin(std::size_t index, const rb::CaseSpec&) override {
    case_begins.push_back(index);
    measured_iteration = 0;
    if (refuse_begin) return std::unexpected(rb::Error{"perf control: no ack within 5000 ms"});
    return {};
  }
  // Around each timed segment of a measured iteration: two per iteration of two or more ops (the
  // verified op between them is outside).
  void iteration_begin(std::size_t index) noexcept override {
    if (measured_iteration == 0) measured_iteration = 1;
    ++begins;
    last_index = index;
  }
  void iteration_end(std::size_t index, uint64_t ops) noexcept override {
    ++ends;
    ops_seen += ops;
    order.push_back(index);  // capacity reserved by the test: no allocation here
    if (cancel_after != 0 && ends >= cancel_after) cancel_flag = 1;
  }
  void case_end(std::size_t index, const rb::CaseSpec&, rb::CaseResult& result) override {
    case_ends.push_back(index);
    result.counters["fake-events"] = 2.5;
    result.counters["unsupported"] = std::nullopt;
  }

  std::vector<std::size_t> case_begins;
  std::vector<std::size_t> case_ends;
  std::vector<std::size_t> order;
  unsigned begins = 0;
  unsigned ends = 0;
  uint64_t ops_seen = 0;
  std::size_t last_index = 0;
  unsigned cancel_after = 0;
  bool refuse_begin = false;
  volatile std::sig_atomic_t cancel_flag = 0;
};

class RecordingProgress final : public rb::ProgressSink {
 public:
  void on_progress(const rb::ProgressEvent& e) override {
    if (e.stage == rb::Stage::measure) measured_iteration = e.iteration + 1;
    if (e.stage == rb::Stage::done || e.stage == rb::Stage::failed) measured_iteration = 0;
    stages.push_back(e.stage);
    if (!e.detail.empty()) details.emplace_back(e.detail);
  }
  std::vector<rb::Stage> stages;
  std::vector<std::string> details;
};

struct Fixture {
  Fixture() {
    for (Behaviour& b : behaviours) b = Behaviour{};
    fake_now = 1'000'000'000;
    measured_iteration = 0;
    hook.order.reserve(4096);
    options.iteration_time_ms = 100;
    options.warmup = 3;
    options.iterations = 15;
    options.max_iterations = 40;
    options.target_error = 0.02;
  }

  std::vector<rb::CaseResult> run(std::vector<rb::CaseSpec> specs) {
    rb::RunContext context;
    context.clock = kFakeClock;
    context.hooks = hooks;
    context.progress = &progress;
    context.cancel = &hook.cancel_flag;
    context.allocator = "system";
    return rb::run_cases(specs, options, context);
  }

  rb::RunnerOptions options;
  CountingHook hook;
  std::array<rb::IterationHook*, 1> hooks{&hook};
  RecordingProgress progress;
};

}  // namespace

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

TEST_CASE_FIXTURE(Fixture, "a strategy whose checksum covers some fields only is not held to the baseline's") {
  behaviours[1].checksum = 43;
  behaviours[2].checksum = 43;
  const auto results = run({spec(0), spec(1), spec(4)});
  REQUIRE(results.size() == 3);
  CHECK(results[1].status == rb::CaseStatus::failed);
  CHECK_FALSE(results[1].partial_checksum);
  CHECK(results[2].status == rb::CaseStatus::ok);
  CHECK(results[2].partial_checksum);
  CHECK(results[2].checksum == 43);
}

TEST_CASE_FIXTURE(Fixture, "a checksum that differs from the baseline's fails the case loudly") {
  behaviours[1].checksum = 43;
  behaviours[2].checksum = 42;
  const auto results = run({spec(0), spec(1), spec(2), spec(0, 1000), spec(1, 1000)});
  REQUIRE(results.size() == 5);
  CHECK(results[0].status == rb::CaseStatus::ok);
  CHECK(results[1].status == rb::CaseStatus::failed);
  INFO(results[1].reason);
  CHECK(results[1].reason.find("checksum 0x000000000000002b differs from baseline base's 0x000000000000002a") !=
        std::string::npos);
  CHECK(results[2].status == rb::CaseStatus::ok);
  // Size 1000 has its own baseline, with the same checksums: same verdicts.
  CHECK(results[3].status == rb::CaseStatus::ok);
  CHECK(results[4].status == rb::CaseStatus::failed);
}

TEST_CASE_FIXTURE(Fixture, "a checksum that changes between calls of one case fails it") {
  behaviours[0].checksum_from_call = 50;
  const auto results = run({spec(0)});
  REQUIRE(results[0].status == rb::CaseStatus::failed);
  INFO(results[0].reason);
  CHECK(results[0].reason.find("not deterministic") != std::string::npos);
  CHECK(results[0].reason.find("pilot iteration 2") != std::string::npos);
  CHECK(behaviours[0].teardowns == 1);
}

TEST_CASE_FIXTURE(Fixture, "a verified op whose checksum is wrong fails the case, though every timed op looked right") {
  // Verified calls: pilot 1 + 2, warm-up 3 x 2, then measured iteration 1's first.
  behaviours[0].wrong_checksum_from_verified_call = 1 + 2 + 6 + 1;
  const auto results = run({spec(0)});
  REQUIRE(results[0].status == rb::CaseStatus::failed);
  INFO(results[0].reason);
  CHECK(results[0].reason.starts_with("measurement iteration 1 verified op: checksum 0x"));
  CHECK(results[0].reason.find("not deterministic") != std::string::npos);
  CHECK(results[0].samples_ns.empty());
}

TEST_CASE_FIXTURE(Fixture, "a run error fails the case with the step and the strategy's message; others go on") {
  // Pilot 2 + 102 calls, warm-up 3 x 102, measured iterations 1 and 2: 2 x 102; then iteration 3's
  // verified op, and its first timed op fails.
  behaviours[0].fail_at_call = 104 + 306 + 204 + 2;
  const auto results = run({spec(0), spec(1)});
  REQUIRE(results[0].status == rb::CaseStatus::failed);
  INFO(results[0].reason);
  CHECK(results[0].reason ==
        "measurement iteration 3 op 1: fake 127.0.0.1:1: peer closed after 3 of 7 body bytes");
  CHECK(results[1].status == rb::CaseStatus::ok);
  CHECK(behaviours[0].teardowns == 1);
  REQUIRE_FALSE(progress.details.empty());
  CHECK(progress.details[0] == results[0].reason);
}

TEST_CASE_FIXTURE(Fixture, "a case that cannot start ends with its reason, shown, and never runs") {
  // What the case ends as, and how often the strategy was set up on the way.
  rb::CaseStatus status = rb::CaseStatus::ok;
  rb::Stage stage = rb::Stage::done;
  std::string reason;
  int setups = 0;
  SUBCASE("a skip reason skips the case without setting it up") {
    behaviours[0].skip = "needs IORING_OP_SEND_ZC (kernel 6.0)";
    status = rb::CaseStatus::skipped;
    stage = rb::Stage::skipped;
    reason = "needs IORING_OP_SEND_ZC (kernel 6.0)";
  }
  SUBCASE("a setup error fails the case") {
    behaviours[0].setup_error = "connect 127.0.0.1:8080: Connection refused (ECONNREFUSED)";
    status = rb::CaseStatus::failed;
    stage = rb::Stage::failed;
    reason = "setup: connect 127.0.0.1:8080: Connection refused (ECONNREFUSED)";
    setups = 1;
  }
  const auto results = run({spec(0)});
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == status);
  CHECK(results[0].reason == reason);
  CHECK(behaviours[0].setups == setups);
  CHECK(behaviours[0].calls == 0);
  CHECK(std::find(progress.stages.begin(), progress.stages.end(), stage) != progress.stages.end());
  CHECK(std::find(progress.details.begin(), progress.details.end(), reason) != progress.details.end());
}

TEST_CASE_FIXTURE(Fixture, "a case the strategy cannot read (skip_case) is skipped with its reason, the others run") {
  behaviours[1].skip_payload = rs::Payload::weather;
  rb::CaseSpec github = spec(1);
  github.config.payload = rs::Payload::github;
  const auto results = run({spec(0), spec(1), github});
  REQUIRE(results.size() == 3);
  CHECK(results[1].status == rb::CaseStatus::skipped);
  CHECK(results[1].reason == "reads no weather records");
  CHECK(results[2].status == rb::CaseStatus::ok);
  CHECK(behaviours[1].setups == 1);  // the github case only
}

TEST_CASE_FIXTURE(Fixture, "with N in flight, a strategy that runs one request at a time is not applicable; one that runs N gets N") {
  rb::CaseSpec base = spec(0);
  base.config.inflight = 8;
  rb::CaseSpec many = spec(5);
  many.config.inflight = 8;
  const auto results = run({base, many});
  REQUIRE(results.size() == 2);
  CHECK(results[0].status == rb::CaseStatus::skipped);
  CHECK(results[0].not_applicable);
  CHECK(results[0].reason == "runs one request in flight at a time");
  CHECK(results[0].inflight == 8);
  CHECK(behaviours[0].setups == 0);
  CHECK(results[1].status == rb::CaseStatus::ok);
  CHECK(results[1].inflight == 8);
  CHECK(behaviours[1].last_setup.inflight == 8);
  CHECK(rb::case_label(results[1]) == "many weather 100 x8 (system)");
  CHECK(rb::case_key(results[1]) == "GET/weather/100/system/x8");
}

TEST_CASE_FIXTURE(Fixture, "what a strategy holds per idle connection and the resident memory per connection are recorded") {
  behaviours[1].held = rs::HeldMemory{.connections = 8, .body_bytes = 8000, .model_bytes = 800, .receive_bytes = 80};
  rb::CaseSpec many = spec(5);
  many.config.inflight = 8;
  const auto results = run({spec(0), many});
  REQUIRE(results.size() == 2);
  REQUIRE(results[1].status == rb::CaseStatus::ok);
  const rb::Memory& held = results[1].memory;
  REQUIRE(held.held_bytes_per_connection.has_value());
  CHECK(*held.held_bytes_per_connection == doctest::Approx(8880.0 / 8));
  REQUIRE(held.held_body_bytes_per_connection.has_value());
  CHECK(*held.held_body_bytes_per_connection == doctest::Approx(1000));
  CHECK(held.rss_bytes_per_connection.has_value());  // /proc/self/statm read before setup and after the pilot
  // A strategy that does not say what it holds: null, never 0.
  CHECK_FALSE(results[0].memory.held_bytes_per_connection.has_value());
  CHECK_FALSE(results[0].memory.held_body_bytes_per_connection.has_value());
}

TEST_CASE_FIXTURE(Fixture, "a case without a factory fails instead of crashing") {
  rb::CaseSpec broken;
  const auto results = run({broken});
  CHECK(results[0].status == rb::CaseStatus::failed);
  CHECK(results[0].reason == "no such strategy");
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

TEST_CASE_FIXTURE(Fixture, "POST and GET baselines are separate") {
  behaviours[3].checksum = 7;
  const auto results = run({spec(0), spec(3)});
  CHECK(results[0].status == rb::CaseStatus::ok);
  CHECK(results[1].status == rb::CaseStatus::ok);
  CHECK(results[1].method == "POST");
}
