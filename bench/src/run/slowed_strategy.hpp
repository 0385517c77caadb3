#pragma once
// SlowedStrategy: a case's strategy with a known slowdown, for checking that a before/after run
// (bench --before/--after) finds a change it was told about: after every op it busy-waits `percent` %
// of the ticks that op took, read from the runner's clock around the inner run(). Verified ops are
// slowed alike (they are outside the clock anyway). The runner wraps only the cases of the strategy
// RunnerOptions::slowdown_strategy names (runner.hpp), so no other case goes through it.
//
// The wait is measured, not assumed: spun_ticks() over op_ticks() is the share actually added, which the
// case's notes state. Threads: the runner's thread. Errors: the inner strategy's, unchanged.
// Ownership: owns the inner strategy.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ringlab/http/timeline.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::bench {

class SlowedStrategy final : public strategies::Strategy {
 public:
  // `start`/`end`: the runner's clock (Clock::start, Clock::end); `percent` > 0.
  SlowedStrategy(std::unique_ptr<strategies::Strategy> inner, double percent, http::TickSource start,
                 http::TickSource end);

  [[nodiscard]] std::optional<std::string> skip_reason(const net::RingFeatures& features) const override {
    return inner_->skip_reason(features);
  }
  [[nodiscard]] std::optional<std::string> skip_case(const strategies::CaseConfig& config) const override {
    return inner_->skip_case(config);
  }
  strategies::Status setup(const strategies::CaseConfig& config) override { return inner_->setup(config); }
  strategies::Result<strategies::Outcome> run(http::Timeline* timeline, strategies::Check check) override;
  [[nodiscard]] strategies::IoCounters io_counters() const override { return inner_->io_counters(); }
  [[nodiscard]] strategies::HeldMemory held_memory() const override { return inner_->held_memory(); }
  void drop_connection() override { inner_->drop_connection(); }
  // The inner strategy's notes and "slowed by X % (busy wait of Y % of the ops' own time measured)".
  [[nodiscard]] std::string notes() const override;
  void teardown() override { inner_->teardown(); }

  [[nodiscard]] uint64_t op_ticks() const noexcept { return op_ticks_; }
  [[nodiscard]] uint64_t spun_ticks() const noexcept { return spun_ticks_; }

 private:
  std::unique_ptr<strategies::Strategy> inner_;
  double fraction_;
  http::TickSource start_;
  http::TickSource end_;
  uint64_t op_ticks_ = 0;
  uint64_t spun_ticks_ = 0;
};

}  // namespace ringlab::bench
