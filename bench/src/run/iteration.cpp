#include "iteration.hpp"

#include <fmt/format.h>

#include "client_threads.hpp"
#include "io_counters_sum.hpp"
#include "ringlab/bench/measure/memory_diagnoser.hpp"

namespace ringlab::bench {

IterationRunner::IterationRunner(const RunContext& context, bool phases, bool memory)
    : context_(&context), phases_(phases), memory_(memory) {}

// One verified op (Check::verify), outside the clock: the full checksum of its records must equal
// the generator's (the strategy checks) and the case's earlier ones (checked here). In measured
// iterations its I/O is set aside, to be taken out of the case's counters. False with s.failure set.
bool IterationRunner::verified_op(CaseState& s, bool measured, std::string_view stage, unsigned number) {
  const strategies::IoCounters io_before = measured ? s.strategy->io_counters() : strategies::IoCounters{};
  const uint64_t t0 = context_->clock.start();
  auto r = s.strategy->run(nullptr, strategies::Check::verify);
  const uint64_t t1 = context_->clock.end();
  if (!r) [[unlikely]] {
    s.failure = fmt::format("{} iteration {} verified op: {}", stage, number, r.error().message);
    return false;
  }
  if (!s.have_checksum) {
    s.checksum = r->checksum;
    s.have_checksum = true;
  } else if (r->checksum != s.checksum) [[unlikely]] {
    s.failure = fmt::format("{} iteration {} verified op: checksum {:#018x} differs from the first one's {:#018x} "
                            "(the response or its deserialization is not deterministic)",
                            stage, number, r->checksum, s.checksum);
    return false;
  }
  if (!check_consumed(s, r->consumed, stage, number, 0)) return false;
  if (measured) {
    const strategies::IoCounters io_after = s.strategy->io_counters();
    s.io_verified.add(io_after.since(io_before));
    if (s.verified_ticks.size() < s.verified_ticks.capacity()) s.verified_ticks.push_back(t1 - t0);
  }
  return true;
}

// The consumption fold is the same at every op of a case; false with s.failure set when not.
bool IterationRunner::check_consumed(CaseState& s, uint64_t consumed, std::string_view stage, unsigned number, uint64_t op) {
  if (!s.have_consumed) {
    s.consumed = consumed;
    s.have_consumed = true;
    return true;
  }
  if (consumed == s.consumed) [[likely]] return true;
  s.failure = fmt::format("{} iteration {} op {}: consumption {:#018x} differs from the first op's {:#018x} "
                          "(the response or its deserialization is not deterministic)",
                          stage, number, op + 1, consumed, s.consumed);
  return false;
}

// Ops [first, last) of an iteration between two clock readings: the timed region. In measured
// iterations the allocations, page faults and the hooks' counters are read around it (and only
// around it: verified ops are not in them); so are the CPU time and page faults of the strategy's own
// worker threads (IoCounters' worker_* fields), added to this thread's. Returns the ticks, or nullopt
// with s.failure set.
std::optional<uint64_t> IterationRunner::timed_segment(CaseState& s, uint64_t first, uint64_t last, bool measured,
                                                       std::string_view stage, unsigned number) {
  if (s.threads != nullptr) return threaded_segment(s, last - first, measured, stage, number);
  http::Timeline timeline{};
  http::Timeline* const tl = phases_ ? &timeline : nullptr;
  strategies::Strategy& strategy = *s.strategy;
  const bool stamping = measured && tl != nullptr;
  uint64_t run_start = 0;
  uint64_t run_end = 0;
  strategies::IoCounters workers_before;
  if (measured) {
    for (IterationHook* hook : context_->hooks) hook->iteration_begin(s.index);
    workers_before = strategy.io_counters();
    const ResourceUsage usage = read_resource_usage();
    s.minor_faults -= usage.minor_faults;
    s.cpu_user_ns -= usage.user_ns;
    s.cpu_system_ns -= usage.system_ns;
    if (memory_) start_counting_allocations();
  }
  std::optional<strategies::Error> error;
  uint64_t failed_op = 0;
  uint64_t consumed = s.consumed;
  const uint64_t t0 = context_->clock.start();
  for (uint64_t i = first; i < last; ++i) {
    if (tl != nullptr) timeline = http::Timeline{};
    if (stamping) run_start = context_->clock.start();
    auto r = strategy.run(tl, strategies::Check::consume);
    if (stamping) run_end = context_->clock.end();
    if (!r) [[unlikely]] {
      error = std::move(r.error());
      failed_op = i;
      break;
    }
    if (r->consumed != consumed) [[unlikely]] {
      consumed = r->consumed;
      failed_op = i;
      break;
    }
    if (stamping) record_phases(s, timeline, run_start, run_end);
  }
  const uint64_t t1 = context_->clock.end();
  if (measured) {
    if (memory_) {
      const AllocationCounts c = stop_counting_allocations();
      s.allocations.allocations += c.allocations;
      s.allocations.bytes += c.bytes;
      s.allocations.frees += c.frees;
    }
    const ResourceUsage usage = read_resource_usage();
    const WorkerUsage workers = worker_usage_between(workers_before, strategy.io_counters());
    s.minor_faults += usage.minor_faults + workers.minor_faults;
    s.cpu_user_ns += usage.user_ns + workers.user_ns;
    s.cpu_system_ns += usage.system_ns + workers.system_ns;
    for (IterationHook* hook : context_->hooks) hook->iteration_end(s.index, last - first);
  }
  if (error) {
    s.failure = fmt::format("{} iteration {} op {}: {}", stage, number, failed_op + 1, error->message);
    return std::nullopt;
  }
  if (!check_consumed(s, consumed, stage, number, failed_op)) return std::nullopt;
  return t1 - t0;
}

// The threads count their own allocations, page faults and CPU time around their own ops; the hooks
// run here, on the runner's thread, around the whole segment.
std::optional<uint64_t> IterationRunner::threaded_segment(CaseState& s, uint64_t ops, bool measured,
                                                          std::string_view stage, unsigned number) {
  if (measured) {
    for (IterationHook* hook : context_->hooks) hook->iteration_begin(s.index);
  }
  ThreadedSegment segment = s.threads->timed(ops, s.consumed, measured, memory_, context_->clock);
  if (measured) {
    s.allocations.allocations += segment.allocations.allocations;
    s.allocations.bytes += segment.allocations.bytes;
    s.allocations.frees += segment.allocations.frees;
    s.minor_faults += segment.minor_faults;
    s.cpu_user_ns += segment.cpu_user_ns;
    s.cpu_system_ns += segment.cpu_system_ns;
    for (IterationHook* hook : context_->hooks) hook->iteration_end(s.index, ops);
  }
  if (segment.failure) {
    s.failure = fmt::format("{} iteration {} {}", stage, number, *segment.failure);
    return std::nullopt;
  }
  return segment.ticks;
}

std::optional<uint64_t> IterationRunner::run(CaseState& s, uint64_t ops, bool measured, std::string_view stage,
                                             unsigned number) {
  if (!verified_op(s, measured, stage, number)) return std::nullopt;
  // xorshift64: cheap, deterministic per case, and nothing the strategy can predict.
  s.random ^= s.random << 13;
  s.random ^= s.random >> 7;
  s.random ^= s.random << 17;
  const uint64_t split = ops >= 2 ? 1 + s.random % (ops - 1) : ops;
  auto first = timed_segment(s, 0, split, measured, stage, number);
  if (!first) return std::nullopt;
  if (split == ops) return first;
  if (!verified_op(s, measured, stage, number)) return std::nullopt;
  auto second = timed_segment(s, split, ops, measured, stage, number);
  if (!second) return std::nullopt;
  return *first + *second;
}

}  // namespace ringlab::bench
