#pragma once
// StatsBoard: where each worker publishes a copy of its counters (every 64 batches of completions
// and at every tick: Worker::kBatchesPerPublish), so that GET /stats (answered by any worker) and
// Server::stats() can sum them while the workers run.
//
// Owned by the Server, created before its workers and destroyed after them. Threads: slot i is
// written by worker i alone; any thread reads. Each slot has its own mutex on its own cache line: a
// publish waits at most for one reader's copy of that slot, never for another worker.
#include <cstddef>
#include <memory>
#include <mutex>

#include "ringlab/server/server.hpp"

namespace ringlab::server {

class StatsBoard {
 public:
  explicit StatsBoard(std::size_t workers) : slots_(std::make_unique<Slot[]>(workers)), count_(workers) {}

  void publish(std::size_t worker, const ServerStats& stats) noexcept {
    Slot& slot = slots_[worker];
    std::lock_guard lock(slot.mutex);
    slot.stats = stats;
  }

  [[nodiscard]] ServerStats total() const {
    ServerStats sum;
    for (std::size_t i = 0; i < count_; ++i) {
      std::lock_guard lock(slots_[i].mutex);
      sum += slots_[i].stats;
    }
    return sum;
  }

 private:
  struct alignas(64) Slot {
    mutable std::mutex mutex;
    ServerStats stats;
  };
  std::unique_ptr<Slot[]> slots_;
  std::size_t count_;
};

}  // namespace ringlab::server
