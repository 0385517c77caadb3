#include "slowed_strategy.hpp"

#include <fmt/format.h>

namespace ringlab::bench {

SlowedStrategy::SlowedStrategy(std::unique_ptr<strategies::Strategy> inner, double percent, http::TickSource start,
                               http::TickSource end)
    : inner_(std::move(inner)), fraction_(percent / 100), start_(start), end_(end) {}

strategies::Result<strategies::Outcome> SlowedStrategy::run(http::Timeline* timeline, strategies::Check check) {
  const uint64_t t0 = start_();
  auto outcome = inner_->run(timeline, check);
  const uint64_t t1 = end_();
  const uint64_t op = t1 - t0;
  const uint64_t until = t1 + static_cast<uint64_t>(static_cast<double>(op) * fraction_);
  uint64_t now = end_();
  while (now < until) now = end_();
  op_ticks_ += op;
  spun_ticks_ += now - t1;
  return outcome;
}

std::string SlowedStrategy::notes() const {
  std::string text = inner_->notes();
  if (!text.empty()) text += "; ";
  const double measured = op_ticks_ > 0 ? 100.0 * static_cast<double>(spun_ticks_) / static_cast<double>(op_ticks_) : 0;
  text += fmt::format("slowed by {:g} % (--slowdown): a busy wait of {:.2f} % of the ops' own time, measured",
                      fraction_ * 100, measured);
  return text;
}

}  // namespace ringlab::bench
