#pragma once
// CaseStrategy: what every strategy of the table keeps about the case it was set up for, and the
// protocol of setup() and run() that all of them follow: setup() records the case, makes what the
// strategy needs (open_case), then proves the case with one verified run, so that a strategy that reads
// something else than the generator's records fails before anything is measured (not for a fresh client,
// CaseConfig::client fresh: that setup() is part of a timed op, and bench's verified ops, each on a client
// of its own, prove the case instead); run() refuses to go
// until a setup() got that far, then runs one request (run_case). ClientStrategy (ringlab's stack),
// SocketPeer (blocking sockets, epoll) and libcurl are built on it.
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

  Status setup(const CaseConfig& config) final {
    config_ = config;
    label_ = case_label(name_, config_);
    expected_ = expected_of(config_);
    ready_ = false;
    if (auto opened = open_case(); !opened) return opened;
    ready_ = true;
    if (config_.client == Client::fresh) return {};
    auto first = run(nullptr, Check::verify);
    if (!first) return std::unexpected(first.error());
    return {};
  }
  Result<Outcome> run(http::Timeline* timeline, Check check) final {
    if (!ready_) [[unlikely]] {
      return fail(label_.empty() ? name_ : label_, "run() without a successful setup()");
    }
    return run_case(timeline, check);
  }
  // run() is refused again until the next setup(); then close_case() frees what open_case() made.
  void teardown() final {
    ready_ = false;
    close_case();
  }

 protected:
  // Makes what the case needs (a second setup() starts over: what the first one made goes first).
  virtual Status open_case() = 0;
  // One whole request, as Strategy::run().
  virtual Result<Outcome> run_case(http::Timeline* timeline, Check check) = 0;
  // What teardown() frees: what open_case() made.
  virtual void close_case() {}
  // The checksum verified runs must give: by default the generator's records' (json/checksum.hpp).
  [[nodiscard]] virtual uint64_t expected_of(const CaseConfig& config) const { return expected_checksum(config); }

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
