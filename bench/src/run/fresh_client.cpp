#include "fresh_client.hpp"

#include <fmt/format.h>

#include <utility>

#include "io_counters_sum.hpp"

namespace ringlab::bench {
namespace {

strategies::Error error(std::string_view step, std::string_view message) {
  return strategies::Error{fmt::format("fresh client {}: {}", step, message)};
}

}  // namespace

FreshClient::FreshClient(const strategies::Descriptor& descriptor, std::unique_ptr<strategies::Strategy> probe)
    : descriptor_(&descriptor), probe_(std::move(probe)) {}

std::optional<std::string> FreshClient::skip_reason(const net::RingFeatures& features) const {
  return probe_ ? probe_->skip_reason(features) : std::nullopt;
}

std::optional<std::string> FreshClient::skip_case(const strategies::CaseConfig& config) const {
  return probe_ ? probe_->skip_case(config) : std::nullopt;
}

strategies::Status FreshClient::setup(const strategies::CaseConfig& config) {
  config_ = config;
  config_.client = strategies::Client::fresh;  // what every strategy made here is told: build only
  if (!probe_) return std::unexpected(error("setup", "strategy factory returned nothing"));
  // Built once outside the clock: a case whose client cannot be built fails here, not in the first op.
  auto status = probe_->setup(config_);
  if (status) {
    probe_notes_ = probe_->notes();
    io_.counts_syscalls = probe_->io_counters().counts_syscalls;
    io_.counts_copies = probe_->io_counters().counts_copies;
  }
  probe_->teardown();
  probe_.reset();
  return status;
}

strategies::Result<strategies::Outcome> FreshClient::run(http::Timeline* timeline, strategies::Check check) {
  // The client's own phases, stamped where the runner samples this op's timeline.
  const http::TickSource ticks = timeline != nullptr ? config_.ticks : nullptr;
  const auto stamp = [ticks](uint64_t& at) {
    if (ticks != nullptr) at = ticks();
  };
  http::Timeline unstamped;
  http::Timeline& client = timeline != nullptr ? *timeline : unstamped;
  stamp(client.client_begin);
  last_.reset();  // the last op's client: its records outlived it until now (fresh_client.hpp says why)
  stamp(client.client_freed);
  std::unique_ptr<strategies::Strategy> strategy = descriptor_->make != nullptr ? descriptor_->make() : nullptr;
  if (!strategy) [[unlikely]] return std::unexpected(error("make", "strategy factory returned nothing"));
  ++clients_made_;
  if (auto status = strategy->setup(config_); !status) [[unlikely]] {
    strategy->teardown();
    return std::unexpected(error("setup", status.error().message));
  }
  stamp(client.client_ready);
  auto outcome = strategy->run(timeline, check);
  add_io_counters(io_, strategy->io_counters());
  strategy->teardown();
  stamp(client.client_closed);
  last_ = std::move(strategy);
  return outcome;
}

std::string FreshClient::notes() const {
  std::string notes = fmt::format(
      "fresh client: every op made, set up, ran and destroyed its own {} ({} clients, verified ops included)",
      descriptor_->name, clients_made_);
  if (!probe_notes_.empty()) notes += "; " + probe_notes_;
  return notes;
}

void FreshClient::teardown() {
  last_.reset();
  if (probe_) {
    probe_->teardown();
    probe_.reset();
  }
}

}  // namespace ringlab::bench
