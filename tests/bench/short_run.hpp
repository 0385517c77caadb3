#pragma once
// A run short enough for a test of the runner over real sockets: one warmup and `iterations` measured
// iterations of about `iteration_ms` each, one case after another (not interleaved), timed by the cycle
// counter. Plain values; the caller adds what its case needs (the ops' cap, the CPUs, the features).
#include "ringlab/bench/run/runner.hpp"

namespace ringlab::bench::testing {

inline RunnerOptions short_run(unsigned iterations, double iteration_ms = 2) {
  RunnerOptions options;
  options.iteration_time_ms = iteration_ms;
  options.warmup = 1;
  options.iterations = iterations;
  options.max_iterations = iterations;
  options.interleave = false;
  return options;
}

inline RunContext cycle_counter_context() {
  RunContext context;
  context.clock = cycle_counter_clock();
  return context;
}

}  // namespace ringlab::bench::testing
