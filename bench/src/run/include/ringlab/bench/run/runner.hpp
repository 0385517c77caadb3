#pragma once
// Runner: turns benchmark cases (strategy x payload x size) into CaseResults.
//
// All cases side by side in rounds (`interleave`, the default), or one after another:
//   make, skip_reason(features)   a strategy that needs a missing kernel feature is "skipped"
//   skip_case(config)             so is one that cannot read the case's payload (three_fields on weather)
//   setup                         untimed
//   pilot                         ops per iteration: from 1, re-estimated from the measured per-op
//                                 time until one iteration lasts at least `iteration_time_ms`
//   warm-up                       `warmup` iterations, timed but discarded
//   measurement                   at least `iterations`, at most `max_iterations`; stops early once
//                                 Error / Mean <= `target_error` (Error: 99.9 % CI half-width of the
//                                 samples left after outlier removal)
//   statistics                    upper outliers (Tukey) removed and counted; see statistics.hpp
//   teardown                      untimed
// The sample of an iteration is its ticks (converted to ns) divided by its ops.
//
// Verification outside the clock: every iteration (pilot, warm-up and measured) runs one extra op with
// Check::verify before its timed ops and, when it has two or more, another at a random place between
// them, each between two timed segments. The strategy computes the full checksum of that op's records
// and fails if it differs from the generator's; the runner checks that it never changes. Allocations,
// page faults, io counters and the hooks' counters are read around the timed segments only, so the
// verified ops are in none of the per-op numbers; their duration, against a timed op's, is in the notes.
//
// Inside a timed segment nothing runs but the strategy's run(…, Check::consume) calls, the optional
// phase bookkeeping and a compare of the consumption fold (the same at every op of a case). Phases (on by default, --no-phases) cost the client's six
// stamps plus two clock readings around each run() and a few subtractions into preallocated arrays:
// with rdtsc about 8 readings of `timer_overhead_ns` per op, in the measured iterations only. The
// memory diagnoser counts only inside it; hooks, progress and statistics run between iterations.
//
// A fresh client (CaseConfig::client fresh, bench --client fresh): the case's strategy is a FreshClient
// (bench/src/run/fresh_client.hpp) around the Descriptor, whose every run() makes, sets up, runs once and
// destroys a strategy of the row: the whole client is built inside each timed op (and each verified op
// is a client of its own), so time, allocations, page faults and I/O per op include building it. Refused
// (the case fails, naming why) with more than one in flight or with connection fresh.
//
// Client threads: a case with CaseSpec::client_threads T > 1 runs T copies of its strategy, each on a
// thread of its own pinned to RunContext::client_cpus (client_threads.hpp): every step above is done by
// every copy on its own thread, and a timed segment lasts from the earliest thread's start to the
// latest's end; allocations, page faults and CPU time are the client threads' summed. T = 1 is the
// strategy on the runner's thread, the path above unchanged.
//
// Failure: a run() error (a verified op's checksum that differs from the generator's among them), a
// checksum or consumption fold that changes between calls of the same case, or (after the cases) a
// checksum that differs from the baseline's for the same method, payload, size and allocator makes the
// case "failed" with the reason; the other cases go on. Nothing is retried.
//
// Cancellation: the cancel flag is read after every iteration. Sequential: the case in progress and
// those after it are "interrupted" (failed). Interleaved: each measured case is finished with the
// samples it has (ratios pair the rounds both sides completed); one with none is "interrupted".
//
// Interleaving: every case is set up and piloted first, one after another; then every case drops its
// kept-alive connection (Strategy::drop_connection: it idled while the others were piloted, maybe past
// the server's keep-alive timeout) and the warm-up iterations run in rounds; then each round runs one
// measured iteration of every case, the order rotated by one each round (A B C, C A B, B C A, ...),
// so over n rounds every case holds every position once. The round count is a multiple of the case
// count (rounded up from `iterations`; the adaptive stop only ends the run at such a boundary), so
// the balance is exact. Sample i of every case then comes from round i, and ratios are paired.
//
// Driven rounds (RunContext::driver, bench's before/after worker): the same steps, but after the pilots
// the driver agrees the ops per iteration of every case (both builds of a before/after run measure the
// same count), and after the warm-up rounds it names, one at a time, the case whose measured iteration
// runs next and is told its sample: the rounds, their order and their end are the driver's. The adaptive
// stop is not used.
//
// Calibrated slowdown (RunnerOptions::slowdown, bench --slowdown): every case of the named strategy is
// measured through a SlowedStrategy (slowed_strategy.hpp), which after each op busy-waits the given share
// of the time that op took. A known change, for checking that a before/after run finds it; no other case
// goes through the wrapper, so nothing else pays for it.
//
// Ownership: cases refer to Descriptors of the registry (static storage). The RunContext's hooks,
// progress sink, cancel flag and driver must outlive run_cases().
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/results.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::bench {

// Every limit below has a CLI flag of the same name (dashes for underscores) in bench.
struct RunnerOptions {
  double iteration_time_ms = 100;  // a pilot goal; at least one op per iteration whatever it takes
  unsigned warmup = 3;
  unsigned iterations = 15;
  unsigned max_iterations = 100;
  double target_error = 0.02;
  uint64_t max_ops_per_iteration = 1'000'000'000;  // the pilot stops growing here
  unsigned max_pilot_stages = 40;                   // re-estimates before the pilot settles
  bool memory = true;   // count allocations (n/a if the diagnoser is not interposed)
  bool phases = true;   // stamp the phase timeline (CaseConfig::ticks)
  std::size_t phase_samples = 16384;  // ops whose phases are kept per case, spread evenly
  bool interleave = true;
  // A busy wait of `percent` % of each op's own time added to every case of `strategy` (empty: none). With
  // 0 % the cases still go through the wrapper, waiting for nothing: what a before/after run's before
  // build runs, so that both builds run the same code around the op.
  std::string slowdown_strategy;
  double slowdown_percent = 0;
};

// The clock the runner reads: two tick functions (start and end of a region) and their rate.
// Tests pass a fake clock that their fake strategies advance.
struct Clock {
  http::TickSource start = nullptr;
  http::TickSource end = nullptr;
  double hz = 1e9;
};
// The process's cycle counter (cycle_counter.hpp); initialises it on the first call.
[[nodiscard]] Clock cycle_counter_clock();

struct CaseSpec {
  const strategies::Descriptor* strategy = nullptr;
  strategies::CaseConfig config;  // host, port, payload, count; `ticks` is set by the runner
  // Client threads (bench --client-threads): with T > 1 the case runs T copies of its strategy at once,
  // each made by the descriptor's maker and used on a thread of its own (client_threads.hpp); an op is
  // then one op of every copy, T x inflight requests. 1: the strategy on the runner's thread.
  std::size_t client_threads = 1;
};

// "string_copy weather 1000" ("libcurl weather 10 fresh client" with --client fresh, "epoll weather 10 x64"
// with 64 in flight)
[[nodiscard]] std::string case_name(const CaseSpec& spec);

// The connections the cases hold open at once: every case is set up before the first round (interleaved
// rounds) and keeps its kept-alive connections until the run ends, so a run holds the sum over its cases
// of in-flight count x client threads. The embedded server must admit that many at once (its
// --max-connections); a sweep of 10 rows at 1, 4, 16, 64 and 256 in flight at two sizes holds 6,820.
[[nodiscard]] std::size_t connections_held(std::span<const CaseSpec> cases) noexcept;

// Called around every measured iteration (perf counters, perf record control). begin/end run just
// outside the timed region, so their cost is not in the samples; they must not allocate. `index`
// is the case's position in the span given to run_cases: with interleaving the calls of different
// cases alternate, so a hook that accumulates keeps one state per index.
class IterationHook {
 public:
  virtual ~IterationHook() = default;
  // Before the first measured iteration of a case (after its warm-up). An error fails the case
  // ("hook: <message>") before anything is measured.
  virtual Status case_begin(std::size_t index, const CaseSpec& spec) {
    (void)index;
    (void)spec;
    return {};
  }
  virtual void iteration_begin(std::size_t index) noexcept { (void)index; }
  virtual void iteration_end(std::size_t index, uint64_t ops) noexcept {
    (void)index;
    (void)ops;
  }
  // After the last measured iteration (not called for a case that failed before measuring); may
  // fill result.counters and result.notes, or fail the case by setting its status and reason.
  virtual void case_end(std::size_t index, const CaseSpec& spec, CaseResult& result) {
    (void)index;
    (void)spec;
    (void)result;
  }
};

enum class Stage { setup, pilot, warmup, measure, done, skipped, failed };
[[nodiscard]] std::string_view stage_name(Stage stage) noexcept;

struct ProgressEvent {
  std::size_t case_index = 0;  // 0-based
  std::size_t case_count = 0;
  std::string_view name;       // valid during the call
  Stage stage = Stage::setup;
  unsigned iteration = 0;      // within the stage, 1-based
  unsigned iterations = 0;     // planned in the stage (max for measure), 0 when open-ended
  uint64_t ops_per_iteration = 0;
  double last_sample_ns = 0;   // ns per op of the iteration just done, 0 when none
  std::string_view detail;     // reason for skipped/failed
};

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void on_progress(const ProgressEvent& event) = 0;
};

// One measured iteration as a RoundDriver is told it: the time and the client's CPU time (user and system)
// per op of its timed segments.
struct IterationSample {
  double ns_per_op = 0;
  double cpu_ns_per_op = 0;
};

// Who runs the measured iterations of an interleaved run when it is not the runner's own rounds (see
// "Driven rounds" above). Called on the runner's thread; an error ends the run's measurement (the cases
// not finished fail with it).
class RoundDriver {
 public:
  virtual ~RoundDriver() = default;
  // After every case's setup and pilot: the case names and the ops per iteration each piloted (0: not
  // measured, skipped or failed). Returns the ops each case measures with, in the same order (0 leaves
  // a case's pilot as it is).
  virtual Result<std::vector<uint64_t>> agree_ops(std::span<const std::string> names,
                                                  std::span<const uint64_t> piloted) = 0;
  // After the warm-up rounds: the case whose measured iteration runs next, or nullopt when the
  // measurement is over.
  virtual Result<std::optional<std::size_t>> next_case() = 0;
  // That iteration's sample, or nullopt with the case's failure (it is not measured again).
  virtual Status measured(std::size_t index, std::optional<IterationSample> sample, std::string_view failure) = 0;
};

struct RunContext {
  net::RingFeatures features;  // for Strategy::skip_reason
  Clock clock;
  std::span<IterationHook* const> hooks;
  ProgressSink* progress = nullptr;
  // Set by a signal handler: the runner stops between iterations and marks what is left failed
  // ("interrupted").
  const volatile std::sig_atomic_t* cancel = nullptr;
  std::string allocator;  // CaseResult::allocator
  // The CPUs client thread i of a case with client_threads > 1 is pinned to: client_cpus[i % size];
  // empty: not pinned (client_thread_cpus() makes the list).
  std::vector<int> client_cpus;
  // Non-null: the measured iterations are this driver's (interleaved runs only).
  RoundDriver* driver = nullptr;
};

// The CPUs of a run's client threads, in the order they are given: `first` (the client's CPU, where the
// runner's thread is pinned), then the other `allowed` CPUs in ascending order from the one after it,
// wrapping around; empty (nothing pinned) when `first` is negative. With more threads than CPUs, or
// with the server on one of them, threads share CPUs (with each other, with the server).
[[nodiscard]] std::vector<int> client_thread_cpus(int first, std::span<const int> allowed);

// Runs every case; the results are in the order of `cases`. Baseline checksums are checked
// (check_checksums) and ratios are not: the caller puts the results in a Report and calls
// compute_ratios().
[[nodiscard]] std::vector<CaseResult> run_cases(std::span<const CaseSpec> cases, const RunnerOptions& options,
                                                const RunContext& context);

// Marks failed every ok case whose checksum differs from the ok baseline case with the same
// method, payload, size and allocator.
void check_checksums(std::vector<CaseResult>& results);

// The case index at each position of round `round` for `n` interleaved cases: round 0 is
// 0 1 2 ..., round 1 is n-1 0 1 ..., each round rotated right by one.
[[nodiscard]] std::vector<std::size_t> interleave_order(std::size_t n, std::size_t round);

// Measured rounds for an interleaved run: `at_least` rounded up to a multiple of `n`.
[[nodiscard]] std::size_t balanced_rounds(std::size_t n, std::size_t at_least) noexcept;

}  // namespace ringlab::bench
