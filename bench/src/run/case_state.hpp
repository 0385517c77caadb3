#pragma once
// The runner's state of one case while it runs, and what turns that state into the case's numbers.
// Internal to bench/src/run (runner.cpp).
//
// Ownership: a CaseState owns its strategy and its sample vectors, which are reserved before the
// measured iterations (begin_measuring) so that nothing next to the clock allocates.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/phase_fields.hpp"
#include "ringlab/bench/core/results.hpp"
#include "ringlab/bench/measure/memory_diagnoser.hpp"
#include "ringlab/bench/run/runner.hpp"
#include "ringlab/http/timeline.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::bench {

class ThreadedStrategy;  // client_threads.hpp

// payload_name() lives in the strategies library; the runner spells the names itself so that
// it (and its tests) do not need that library linked.
inline std::string_view payload_text(strategies::Payload payload) noexcept {
  switch (payload) {
    case strategies::Payload::weather: return "weather";
    case strategies::Payload::repos: return "repos";
    case strategies::Payload::github: return "github";
    case strategies::Payload::profiles: return "profiles";
  }
  return "?";
}

// The HTTP method a strategy's requests use (echo rows POST).
inline std::string_view method_text(strategies::Method method) noexcept {
  return method == strategies::Method::post || method == strategies::Method::echo ? "POST" : "GET";
}

// The stacked phases of a request (connect .. other), then two offsets that overlap them: from the
// request sent to the first and to the last body byte (Phases::first_body, last_body), then the three
// phases of a client made per op around its request (client_free, client_setup, client_teardown).
enum Phase : std::size_t {
  connect, send, wait, head, body, deserialize, other, first_body, last_body,
  client_free, client_setup, client_teardown, kPhaseCount
};
// One Phase per field of Phases, in kPhaseFields' order: a phase's median is stored at kPhaseFields[phase].
static_assert(kPhaseCount == kPhaseFields.size());

struct CaseState {
  std::size_t index = 0;
  const CaseSpec* spec = nullptr;
  strategies::CaseConfig config;
  std::string name;
  std::unique_ptr<strategies::Strategy> strategy;
  // With client_threads > 1: `strategy`, as the T copies it runs (timed segments go through it); else null.
  ThreadedStrategy* threads = nullptr;
  CaseResult result;
  bool active = false;       // set up and not failed
  bool have_checksum = false;
  uint64_t checksum = 0;     // the full checksum, from verified ops
  bool have_consumed = false;
  uint64_t consumed = 0;     // the consumption fold, the same at every op
  std::optional<std::string> failure;  // set inside the timed loop; turned into status after
  uint64_t ops = 0;
  uint64_t random = 0;       // xorshift64 state: where the second verified op of an iteration goes

  // Durations (ticks) of the verified ops of measured iterations, for the verification's cost.
  std::vector<uint64_t> verified_ticks;

  // Phase durations in ticks, sampled every `phase_stride`-th measured op.
  std::array<std::vector<uint64_t>, kPhaseCount> phases;
  std::vector<uint64_t> op_ticks;  // the whole run() of each sampled op: the latency distribution
  uint64_t phase_stride = 1;
  uint64_t measured_ops = 0;

  // Summed over the timed segments of measured iterations only (verified ops excluded).
  AllocationCounts allocations;
  // The measuring thread's, plus the strategy's own worker threads' (IoCounters' worker_* fields).
  uint64_t minor_faults = 0;
  uint64_t cpu_user_ns = 0;    // CPU time in user space
  uint64_t cpu_system_ns = 0;  // and in the kernel
  strategies::IoCounters io_before;
  strategies::IoCounters io_verified;  // the verified ops' share of the counters, taken out at the end
  std::optional<uint64_t> resident_before;  // the process's resident bytes just before setup()
};

// Keeps the phases of every `phase_stride`-th measured op, and the op's whole run() for the latency
// histogram. `run_start`/`run_end`: clock readings just around the run() call, so that the time run()
// spent outside the client's stamped span (the strategy's own work before and after the request) is
// accounted for too. Allocation-free: it only fills reserved room.
void record_phases(CaseState& s, const http::Timeline& t, uint64_t run_start, uint64_t run_end) noexcept;

// After the measured iterations: the per-op counters (less the verified ops' share), memory, phase
// medians, the latency histogram and the statistics of the samples, into s.result. `hz`: the clock's
// tick rate; `memory`: allocations were counted.
void fill_case_numbers(CaseState& s, double hz, bool memory);

// After setup and the pilot, the connections idle: what the strategy says it keeps per connection
// (Strategy::held_memory) and the process's resident memory grown since `resident_before`, per
// connection, into the result's memory. Reads /proc: outside the clock.
void record_held_memory(CaseState& s);

// "verification (full checksum, clock stopped) on N ops: X µs per verified op against Y µs per timed
// op", or empty when there were no verified or no sampled ops.
[[nodiscard]] std::string verification_note(const CaseState& s, double hz);

}  // namespace ringlab::bench
