#pragma once
// The sum of two strategies' I/O counters: what a wrapper that runs several strategies reports as one
// (client_threads.cpp: the T copies of a case; fresh_client.cpp: a client made per op); and what a
// strategy's worker threads spent between two readings (iteration.cpp, client_threads.cpp). Private to
// run/.
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::bench {

inline void add_io_counters(strategies::IoCounters& sum, const strategies::IoCounters& more) noexcept {
  sum.add(more);
  sum.counts_syscalls = more.counts_syscalls;
  sum.counts_copies = more.counts_copies;
}

// What a strategy's own worker threads spent between two readings of its counters (IoCounters'
// worker_* fields): bench adds it to the CPU time and page faults it reads of the thread that ran the
// timed ops, which does not see the workers'.
struct WorkerUsage {
  uint64_t user_ns = 0;
  uint64_t system_ns = 0;
  uint64_t minor_faults = 0;
};
[[nodiscard]] inline WorkerUsage worker_usage_between(const strategies::IoCounters& before,
                                                      const strategies::IoCounters& after) noexcept {
  return {.user_ns = after.worker_user_ns - before.worker_user_ns,
          .system_ns = after.worker_system_ns - before.worker_system_ns,
          .minor_faults = after.worker_minor_faults - before.worker_minor_faults};
}

}  // namespace ringlab::bench
