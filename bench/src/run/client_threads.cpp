#include "client_threads.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <barrier>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "io_counters_sum.hpp"

namespace ringlab::bench {

std::vector<int> client_thread_cpus(int first, std::span<const int> allowed) {
  if (first < 0) return {};
  std::vector<int> out{first};
  // The others in ascending order from the one after `first`, wrapping around: with the server on the
  // CPU after the client's (bench's placement), the second client thread shares it first.
  std::vector<int> rest(allowed.begin(), allowed.end());
  std::sort(rest.begin(), rest.end());
  const auto after = std::upper_bound(rest.begin(), rest.end(), first);
  std::rotate(rest.begin(), after, rest.end());
  for (int cpu : rest) {
    if (cpu != first) out.push_back(cpu);
  }
  return out;
}

ThreadedStrategy::ThreadedStrategy(std::unique_ptr<strategies::Strategy> (*make)(), std::size_t threads,
                                   std::span<const int> cpus)
    : pinning_errors_(threads) {
  copies_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) {
    copies_.push_back(make != nullptr ? make() : nullptr);
    if (!copies_.back()) made_ = false;
  }
  if (!cpus.empty()) {
    for (std::size_t i = 0; i < threads; ++i) cpus_.push_back(cpus[i % cpus.size()]);
  }
  if (!made_) return;
  crew_ = std::make_unique<base::ThreadCrew>(threads);
  // Each thread pins itself first; setup() reports a thread that could not.
  if (cpus_.empty()) return;
  on_every_thread([this](std::size_t thread) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus_[thread], &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0) {
      const int error = errno;
      pinning_errors_[thread] = fmt::format("client thread {}: sched_setaffinity CPU {}: {}", thread + 1,
                                            cpus_[thread], std::strerror(error));
    }
  });
}

ThreadedStrategy::~ThreadedStrategy() {
  // Each copy ends on the thread that used it; then the crew joins the threads.
  on_every_thread([&](std::size_t i) { copies_[i].reset(); });
}

std::optional<std::string> ThreadedStrategy::skip_reason(const net::RingFeatures& features) const {
  return copies_.front()->skip_reason(features);
}

std::optional<std::string> ThreadedStrategy::skip_case(const strategies::CaseConfig& config) const {
  return copies_.front()->skip_case(config);
}

strategies::Status ThreadedStrategy::setup(const strategies::CaseConfig& config) {
  // The threads pinned themselves in their first job (the constructor's); this is their second.
  std::vector<std::optional<strategies::Error>> errors(copies_.size());
  on_every_thread([&](std::size_t i) {
    if (!pinning_errors_[i].empty()) {
      errors[i] = strategies::Error{pinning_errors_[i]};
      return;
    }
    if (auto status = copies_[i]->setup(config); !status) {
      errors[i] = strategies::Error{fmt::format("client thread {}: {}", i + 1, status.error().message)};
    }
  });
  const auto failed = std::find_if(errors.begin(), errors.end(), [](const auto& e) { return e.has_value(); });
  if (failed == errors.end()) return {};
  // The runner tears down no strategy whose setup failed: the copies that did set up release what
  // they hold here.
  on_every_thread([&](std::size_t i) {
    if (!errors[i]) copies_[i]->teardown();
  });
  return std::unexpected(std::move(**failed));
}

strategies::Result<strategies::Outcome> ThreadedStrategy::run(http::Timeline* timeline, strategies::Check check) {
  (void)timeline;  // no stamps on the client threads
  std::vector<std::optional<strategies::Result<strategies::Outcome>>> outcomes(copies_.size());
  on_every_thread([&](std::size_t i) { outcomes[i] = copies_[i]->run(nullptr, check); });
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (!*outcomes[i]) {
      return std::unexpected(strategies::Error{fmt::format("client thread {}: {}", i + 1, outcomes[i]->error().message)});
    }
  }
  const strategies::Outcome& first = **outcomes.front();
  for (std::size_t i = 1; i < outcomes.size(); ++i) {
    const strategies::Outcome& other = **outcomes[i];
    if (other.checksum != first.checksum || other.consumed != first.consumed) {
      return std::unexpected(strategies::Error{fmt::format(
          "client thread {}: checksum {:#018x} and consumption {:#018x} differ from client thread 1's {:#018x} and {:#018x}",
          i + 1, other.checksum, other.consumed, first.checksum, first.consumed)});
    }
  }
  return first;
}

strategies::IoCounters ThreadedStrategy::io_counters() const {
  strategies::IoCounters sum;
  for (const auto& copy : copies_) add_io_counters(sum, copy->io_counters());
  return sum;
}

void ThreadedStrategy::drop_connection() {
  on_every_thread([&](std::size_t i) { copies_[i]->drop_connection(); });
}

std::string ThreadedStrategy::notes() const {
  std::string where = "not pinned";
  if (!cpus_.empty()) where = fmt::format("pinned to CPUs {}", fmt::join(cpus_, ", "));
  std::string out = fmt::format("{} client threads, each with its own copy of the strategy, {}", copies_.size(), where);
  if (std::string own = copies_.front()->notes(); !own.empty()) out += fmt::format("; client thread 1: {}", own);
  return out;
}

void ThreadedStrategy::teardown() {
  on_every_thread([&](std::size_t i) { copies_[i]->teardown(); });
}

ThreadedSegment ThreadedStrategy::timed(uint64_t ops, uint64_t consumed, bool count, bool memory, const Clock& clock) {
  struct PerThread {
    uint64_t start = 0;
    uint64_t end = 0;
    AllocationCounts allocations;
    ResourceUsage before;
    ResourceUsage after;
    WorkerUsage workers;  // the copy's own worker threads', if it has any (IoCounters' worker_* fields)
    std::optional<std::string> failure;
  };
  std::vector<PerThread> per(copies_.size());
  std::barrier start_together(static_cast<std::ptrdiff_t>(copies_.size()));
  on_every_thread([&](std::size_t i) {
    PerThread& p = per[i];
    strategies::Strategy& strategy = *copies_[i];
    start_together.arrive_and_wait();
    strategies::IoCounters workers_before;
    if (count) {
      workers_before = strategy.io_counters();
      p.before = read_resource_usage();
      if (memory) start_counting_allocations();
    }
    uint64_t op = 0;
    uint64_t got = consumed;
    std::optional<strategies::Error> error;
    p.start = clock.start();
    for (; op < ops; ++op) {
      auto r = strategy.run(nullptr, strategies::Check::consume);
      if (!r) [[unlikely]] {
        error = std::move(r.error());
        break;
      }
      if (r->consumed != consumed) [[unlikely]] {
        got = r->consumed;
        break;
      }
    }
    p.end = clock.end();
    if (count) {
      if (memory) p.allocations = stop_counting_allocations();
      p.after = read_resource_usage();
      p.workers = worker_usage_between(workers_before, strategy.io_counters());
    }
    if (error) {
      p.failure = fmt::format("client thread {} op {}: {}", i + 1, op + 1, error->message);
    } else if (got != consumed) {
      p.failure = fmt::format("client thread {} op {}: consumption {:#018x} differs from the first op's {:#018x} "
                              "(the response or its deserialization is not deterministic)",
                              i + 1, op + 1, got, consumed);
    }
  });
  ThreadedSegment out;
  uint64_t first = std::numeric_limits<uint64_t>::max();
  uint64_t last = 0;
  for (PerThread& p : per) {
    first = std::min(first, p.start);
    last = std::max(last, p.end);
    out.allocations.allocations += p.allocations.allocations;
    out.allocations.bytes += p.allocations.bytes;
    out.allocations.frees += p.allocations.frees;
    out.minor_faults += p.after.minor_faults - p.before.minor_faults + p.workers.minor_faults;
    out.cpu_user_ns += p.after.user_ns - p.before.user_ns + p.workers.user_ns;
    out.cpu_system_ns += p.after.system_ns - p.before.system_ns + p.workers.system_ns;
    if (p.failure && !out.failure) out.failure = std::move(p.failure);
  }
  out.ticks = last >= first ? last - first : 0;
  return out;
}

}  // namespace ringlab::bench
