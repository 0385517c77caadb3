#pragma once
// The sum of two strategies' I/O counters: what a wrapper that runs several strategies reports as one
// (client_threads.cpp: the T copies of a case; fresh_client.cpp: a client made per op). Private to run/.
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::bench {

inline void add_io_counters(strategies::IoCounters& sum, const strategies::IoCounters& more) noexcept {
  sum.ring_enters += more.ring_enters;
  sum.sqes_submitted += more.sqes_submitted;
  sum.cqes_reaped += more.cqes_reaped;
  sum.connections_opened += more.connections_opened;
  sum.zero_copy_sends += more.zero_copy_sends;
  sum.zero_copy_copied += more.zero_copy_copied;
  sum.syscalls += more.syscalls;
  sum.counts_syscalls = more.counts_syscalls;
}

}  // namespace ringlab::bench
