#pragma once
// Client threads (bench --client-threads T): one case run by T copies of its strategy at once. Each
// copy is made by the descriptor's maker (make, or make_inflight with N in flight), so each has its
// own ring or event loop and its own connections, and each lives on a thread of its own, pinned to a
// CPU of its own where the run has CPUs to give. Internal to bench/src/run (runner.cpp, iteration.cpp).
//
// How the runner uses it: ThreadedStrategy is a Strategy to the runner's set-up, verified ops,
// io counters and teardown (each call is done by every copy, on its own thread), and its timed
// segments go through timed() instead of the runner's loop of run() calls: every thread waits at a
// barrier, reads the clock, runs its ops, reads the clock again; the segment lasts from the earliest
// start to the latest end (the wall time of T threads working at once). Each thread counts its own
// allocations, page faults and CPU time (all per thread: memory_diagnoser.hpp) around its own ops, with
// the CPU time and page faults its copy's own worker threads report (IoCounters' worker_* fields), and
// timed() sums them: the client's threads only, never the server's or the runner's, which waits.
// With T = 1 the runner never makes one: one strategy on the runner's thread, as always.
//
// Checks: a verified op runs on every copy; each checks its own checksum against the generator's (the
// strategy does) and the copies must agree with each other, as must every timed op's consumption
// fold with the case's. What is not done at T > 1: the phase timeline and the per-op latency (no
// stamps are taken on the threads).
//
// Threads: every method is called from one thread (the runner's), and returns after the work is done
// on every client thread; the copies are touched by their own threads only, except io_counters() and
// notes(), read between jobs. Errors: the first failing thread's, naming it ("client thread 2: ...").
// Lifetimes: the destructor stops and joins the threads; teardown() must have run first.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ringlab/base/thread_crew.hpp"
#include "ringlab/bench/measure/memory_diagnoser.hpp"
#include "ringlab/bench/run/runner.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::bench {

// What the T threads did in one timed segment: its wall time, and the threads' counters summed.
struct ThreadedSegment {
  uint64_t ticks = 0;  // from the earliest thread's start to the latest thread's end
  AllocationCounts allocations;
  uint64_t minor_faults = 0;
  uint64_t cpu_user_ns = 0;
  uint64_t cpu_system_ns = 0;
  // The first failing thread's op and error ("client thread 2 op 17: ..."), or a consumption fold
  // that differs from the case's.
  std::optional<std::string> failure;
};

class ThreadedStrategy final : public strategies::Strategy {
 public:
  // `threads` >= 2 copies made by `make`; thread i pinned to cpus[i % cpus.size()], or to nothing
  // when `cpus` is empty. A thread that cannot be pinned fails setup() with the reason.
  ThreadedStrategy(std::unique_ptr<strategies::Strategy> (*make)(), std::size_t threads, std::span<const int> cpus);
  ~ThreadedStrategy() override;
  ThreadedStrategy(const ThreadedStrategy&) = delete;
  ThreadedStrategy& operator=(const ThreadedStrategy&) = delete;

  // False when the maker returned nothing for some copy.
  [[nodiscard]] bool made() const noexcept { return made_; }
  [[nodiscard]] std::size_t threads() const noexcept { return copies_.size(); }

  // The first copy's (all are alike, made but not yet set up).
  [[nodiscard]] std::optional<std::string> skip_reason(const net::RingFeatures& features) const override;
  [[nodiscard]] std::optional<std::string> skip_case(const strategies::CaseConfig& config) const override;
  strategies::Status setup(const strategies::CaseConfig& config) override;
  // One op on every copy at once; the first copy's outcome, after every copy's agreed with it.
  strategies::Result<strategies::Outcome> run(http::Timeline* timeline, strategies::Check check) override;
  [[nodiscard]] strategies::IoCounters io_counters() const override;  // summed
  void drop_connection() override;
  [[nodiscard]] std::string notes() const override;
  void teardown() override;

  // `ops` timed run(nullptr, Check::consume) calls on every copy at once, each thread between its own
  // clock readings. `count`: read the threads' allocations (`memory`), page faults and CPU time
  // around their ops. `consumed`: the fold every op must give.
  ThreadedSegment timed(uint64_t ops, uint64_t consumed, bool count, bool memory, const Clock& clock);

 private:
  // work(i) on every thread i at once; returns when all are done. Allocates nothing.
  template <class F>
  void on_every_thread(F&& work) {
    if (crew_) crew_->on_every_thread(work);
  }

  std::vector<std::unique_ptr<strategies::Strategy>> copies_;
  std::vector<int> cpus_;           // thread i's CPU, or empty: not pinned
  std::vector<std::string> pinning_errors_;  // set by each thread, pinning itself, before any other job
  bool made_ = true;
  std::unique_ptr<base::ThreadCrew> crew_;  // the client threads; null when a copy was not made
};

}  // namespace ringlab::bench
