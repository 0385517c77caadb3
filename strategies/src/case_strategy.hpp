#pragma once
// CaseStrategy: what every strategy of the table keeps about the case it was set up for, and the
// protocol of setup() and run() that all of them follow: setup() records the case (begin_case), makes
// what the strategy needs, then proves the case with one verified run (prove_case); run() refuses to go
// until a setup() got that far (require_ready). ClientStrategy (ringlab's stack), SocketPeer (blocking
// sockets, epoll) and libcurl are built on it.
//
// Errors carry the case label ("presized weather 1000: ..."), or the strategy's name before any case.
// Threads: one strategy object is used by one thread at a time.
#include <cstdint>
#include <string>
#include <string_view>

#include "common.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies::detail {

class CaseStrategy : public Strategy {
 public:
  // `name` is the registry row's (a string literal): the factory passes it, derived classes inherit this.
  explicit CaseStrategy(std::string_view name) : name_(name) {}

 protected:
  // The start of every setup(): records the case; run() is refused until prove_case().
  void begin_case(const CaseConfig& config) {
    config_ = config;
    label_ = case_label(name_, config_);
    expected_ = expected_checksum(config_);
    ready_ = false;
  }
  // The end of a setup() that made everything: the first response proves the case, so that a strategy
  // that reads something else than the generator's records fails here, before anything is measured.
  Status prove_case() {
    ready_ = true;
    auto first = run(nullptr, Check::verify);
    if (!first) return std::unexpected(first.error());
    return {};
  }
  // run()'s first check.
  [[nodiscard]] Status require_ready() const {
    if (!ready_) [[unlikely]] {
      return fail(label_.empty() ? name_ : label_, "run() without a successful setup()");
    }
    return {};
  }
  void forget_case() noexcept { ready_ = false; }  // teardown(): run() is refused again

  [[nodiscard]] const CaseConfig& config() const noexcept { return config_; }
  [[nodiscard]] const std::string& label() const noexcept { return label_; }
  // The checksum of the generator's records for this case (what verified runs must equal).
  [[nodiscard]] uint64_t expected() const noexcept { return expected_; }

 private:
  std::string_view name_;
  CaseConfig config_;
  std::string label_;
  uint64_t expected_ = 0;
  bool ready_ = false;
};

}  // namespace ringlab::strategies::detail
