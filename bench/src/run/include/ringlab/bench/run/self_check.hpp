#pragma once
// Self-check: does the harness measure what it claims, on this machine, now?
//
//   timer       overhead and resolution of the cycle counter, in ns
//   stability   a fixed-work spin case measured in 3 consecutive runs (pilot, warm-up and all):
//               the spread of the 3 means, (max - min) / mean of means; target <= 2 %
//   linearity   spin cases of work A and 2A measured side by side: their Ratio; target 1.95-2.05
//
// The spin work is a xorshift64 chain of `work` steps from a fixed seed, with the state passed
// through an empty asm statement at every step: the compiler can neither fold the chain into a
// closed form nor skip it, and the result (the same at every call) is the checksum, so it is used.
// Nothing else runs in the case: no network, no allocation.
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/run/runner.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::bench {

// `steps` xorshift64 steps from the fixed seed; what a spin case returns as its checksum.
[[nodiscard]] uint64_t spin(uint64_t steps) noexcept;

// A strategy doing spin(steps) per run.
[[nodiscard]] std::unique_ptr<strategies::Strategy> make_spin_strategy(uint64_t steps);

struct SelfCheckOptions {
  uint64_t work = 4000;  // spin steps of work A (about 10 μs on a 2-3 GHz core)
  RunnerOptions runner;  // iteration time, warm-up, iterations as given on the command line
};

struct SelfCheckResult {
  std::string tick_source;
  double timer_overhead_ns = 0;
  double timer_resolution_ns = 0;
  std::array<double, 3> means_ns{};
  double spread = 0;  // (max - min) / mean of the three means
  double ratio = 0;   // 2A / A
  double ratio_sd = 0;
  [[nodiscard]] bool spread_ok() const noexcept { return spread <= 0.02; }
  [[nodiscard]] bool ratio_ok() const noexcept { return ratio >= 1.95 && ratio <= 2.05; }
};

[[nodiscard]] Result<SelfCheckResult> run_self_check(const SelfCheckOptions& options, const RunContext& context);
[[nodiscard]] std::string render_self_check(const SelfCheckResult& result);

}  // namespace ringlab::bench
