#pragma once
// The runner's tests' fakes (runner_test.cpp, runner_cases_test.cpp, runner_rounds_test.cpp): fake
// strategies on a fake clock, so that every stage's arithmetic is exact and no test depends on the
// speed of the machine. State is global to a test executable and reset by Fixture's constructor.
#include <algorithm>
#include <array>
#include <csignal>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ringlab/bench/measure/memory_diagnoser.hpp"
#include "ringlab/bench/run/runner.hpp"

namespace ringlab::bench::testing {

namespace rb = ringlab::bench;
namespace rs = ringlab::strategies;


// The fake clock: ticks are ns, and only the fake strategies move it.
inline uint64_t fake_now = 0;
inline uint64_t fake_ticks() noexcept { return fake_now; }
inline const rb::Clock kFakeClock{&fake_ticks, &fake_ticks, 1e9};

// The measured iteration in progress (1-based; 0 outside measurement), for costs that depend on the
// iteration: CountingHook starts it at 1, RecordingProgress moves it on after each measured iteration.
inline unsigned measured_iteration = 0;

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

inline std::array<Behaviour, 4> behaviours;

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

inline const rs::Descriptor kDescriptors[] = {
    {"base", "fixed work, the baseline", "nothing", rs::Method::get, true, false, &make_fake<0>},
    {"other", "fixed work", "nothing", rs::Method::get, false, false, &make_fake<1>},
    {"third", "fixed work", "nothing", rs::Method::get, false, false, &make_fake<2>},
    {"post_base", "fixed work", "nothing", rs::Method::post, true, false, &make_fake<3>},
    // Proves some fields only, as three_fields does: not held to the baseline's checksum.
    {"partial", "fixed work", "nothing", rs::Method::get, false, false, &make_fake<2>, false, {}, true},
    // Runs many requests in flight (CaseConfig::inflight > 1): its N-in-flight form is behaviours[1], its
    // one-request form behaviours[2].
    {"many", "fixed work", "nothing", rs::Method::get, false, false, &make_fake<2>, false, {}, false, &make_fake<1>},
};

inline rb::CaseSpec spec(std::size_t descriptor, std::size_t size = 100) {
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
    context.clock = clock;
    context.hooks = hooks;
    context.progress = &progress;
    context.cancel = &hook.cancel_flag;
    context.allocator = "system";
    context.driver = driver;
    return rb::run_cases(specs, options, context);
  }

  rb::RunnerOptions options;
  CountingHook hook;
  std::array<rb::IterationHook*, 1> hooks{&hook};
  RecordingProgress progress;
  rb::RoundDriver* driver = nullptr;  // a test of driven rounds sets its own
  rb::Clock clock = kFakeClock;
};


}  // namespace ringlab::bench::testing
