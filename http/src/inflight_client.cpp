#include "ringlab/http/inflight_client.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "buffer_groups.hpp"
#include "inflight_connection.hpp"
#include "ringlab/http/request.hpp"
#include "ringlab/net/buffer_ring.hpp"

namespace ringlab::http {
namespace {

using inflight::Connection;

// Room for the request head (request line, Host); a longer target is refused by serialize() as
// header_too_large. As http::Client's.
constexpr std::size_t kRequestHeadBytes = 16 * 1024;

// How long a call waits for operations it cancelled, as net::Stream does: a bounded number of
// bounded waits, so a ring that never answers cannot hang the caller.
constexpr net::Duration kSettleWait = std::chrono::milliseconds(100);
constexpr int kSettleRounds = 10;

std::string milliseconds(net::Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

}  // namespace

InflightClient::InflightClient(net::Ring& ring, InflightOptions options)
    : ring_(&ring),
      options_(options),
      shared_(std::make_unique<inflight::Shared>()),
      head_buffer_(std::make_unique<char[]>(kRequestHeadBytes)) {
  shared_->ring = ring_;
  shared_->options = &options_;
  shared_->stats = &stats_;
}

InflightClient::~InflightClient() { close(); }

std::size_t InflightClient::connections() const noexcept { return connections_.size(); }

std::size_t InflightClient::open_connections() const noexcept {
  return static_cast<std::size_t>(std::count_if(connections_.begin(), connections_.end(), [](const auto& c) {
    return c->link() == Connection::Link::open;
  }));
}

int InflightClient::status(std::size_t index) const noexcept {
  return index < connections_.size() ? connections_[index]->status() : 0;
}

std::size_t InflightClient::receive_memory_bytes() const noexcept {
  std::size_t bytes = 0;
  for (const auto& connection : connections_) bytes += connection->receive_buffer_bytes();
  if (provided_) bytes += provided_->memory_bytes();
  for (const auto& own : own_rings_) bytes += own->memory_bytes();
  return bytes;
}

void InflightClient::close() noexcept {
  for (auto& connection : connections_) {
    if (connection->link() == Connection::Link::open) ++stats_.connections_closed;
    connection->close_now();
  }
  connections_.clear();
  own_rings_.clear();  // after the connections, whose receives held their buffers
  shared_->connections = 0;
  shared_->gate.reset(nullptr, 0);
}

Status InflightClient::check_options() {
  if (options_.receive == ReceiveMode::own_buffer && options_.receive_buffer_bytes == 0) {
    return fail(Errc::io, "InflightOptions::receive_buffer_bytes is 0");
  }
  const bool incremental = options_.receive == ReceiveMode::provided_incremental;
  if (options_.ring_per_connection && !incremental) {
    return fail(Errc::io, "InflightOptions::ring_per_connection is for provided_incremental only");
  }
  if (!receives_from_ring(options_.receive) || provided_) return {};
  if (!ring_->features().provided_buffer_ring) {
    return fail(Errc::unsupported, "provided-buffer receive needs buffer rings (Linux 5.19)");
  }
  if (options_.receive == ReceiveMode::provided_bundles && !ring_->features().recv_bundle) {
    return fail(Errc::unsupported, "bundle receive needs IORING_RECVSEND_BUNDLE (Linux 6.10)");
  }
  if (incremental && !ring_->features().provided_buffer_ring_incremental) {
    return fail(Errc::unsupported, "incremental provided buffers need IOU_PBUF_RING_INC (Linux 6.12)");
  }
  if (options_.ring_per_connection) return {};  // the rings come with the connections (connect)
  auto buffers = net::BufferRing::create(*ring_, next_buffer_group(), options_.provided_buffer_count,
                                         options_.provided_buffer_bytes, incremental);
  if (!buffers) return std::unexpected(Error::from(buffers.error()));
  provided_ = std::move(*buffers);
  return {};
}

Status InflightClient::connect(const Url& url, std::size_t connections) {
  close();
  if (connections == 0 || connections > options_.max_connections) {
    return fail(Errc::io, std::to_string(connections) + " connections asked for; InflightOptions::max_connections is " +
                              std::to_string(options_.max_connections) + " and at least 1 is needed");
  }
  if (auto checked = check_options(); !checked) return checked;
  auto endpoint = net::Endpoint::parse(url.host, url.port);
  if (!endpoint) {
    return fail(Errc::unsupported,
                "host '" + std::string(url.host) + "' is not a numeric address or localhost (no name resolution)");
  }
  endpoint_ = *endpoint;
  host_header_ = endpoint_.family() == AF_INET6 ? "[" + std::string(url.host) + "]" : std::string(url.host);
  host_header_ += ':';
  host_header_ += std::to_string(url.port);
  request_ = {};  // the Host header changed: the next round serializes again
  request_target_.clear();

  inflight::Shared& shared = *shared_;
  shared.peer = host_header_;
  shared.connections = connections;
  shared.gate.reset(provided_.get(), connections, options_.receive == ReceiveMode::provided_bundles);
  // Receiving from the ring, the receivers never offer a buffer of their own (see the header).
  const std::size_t own_bytes = receives_from_ring(options_.receive) ? 0 : options_.receive_buffer_bytes;
  connections_.reserve(connections);
  for (std::size_t i = 0; i < connections; ++i) {
    connections_.push_back(std::make_unique<Connection>(shared, i, own_bytes));
  }
  if (options_.ring_per_connection) {
    own_rings_.reserve(connections);
    for (auto& connection : connections_) {
      auto own = net::BufferRing::create(*ring_, next_buffer_group(), options_.provided_buffer_count,
                                         options_.provided_buffer_bytes, /*incremental=*/true);
      if (!own) {
        close();
        return std::unexpected(Error::from(own.error()));
      }
      own_rings_.push_back(std::move(*own));
      connection->receive_from(*own_rings_.back());
    }
  }

  const net::RingStats before = ring_->stats();
  for (auto& connection : connections_) connection->begin_connect(endpoint_);
  drive(options_.connect_timeout, "connect: not connected within connect_timeout");
  account(before, nullptr);
  std::optional<Error> failure = first_failure();
  for (auto& connection : connections_) {
    if (connection->outcome() == Connection::Outcome::complete) {
      connection->set_link(Connection::Link::open);
      ++stats_.connections_opened;
    }
  }
  if (failure) {
    close();
    return std::unexpected(std::move(*failure));
  }
  return {};
}

Status InflightClient::prepare_request(std::string_view target) {
  if (!request_.empty() && target == request_target_) return {};
  request_ = {};
  const RequestSpec spec{.method = "GET",
                         .host = host_header_,
                         .target = target,
                         .extra_headers = {},
                         .body = {},
                         .content_type = {},
                         .keep_alive = true};
  auto serialized = serialize(spec, std::span<char>(head_buffer_.get(), kRequestHeadBytes));
  if (!serialized) {
    Error error = std::move(serialized.error());
    error.peer = host_header_;
    return std::unexpected(std::move(error));
  }
  request_target_.assign(target);
  request_ = serialized->head();
  return {};
}

Status InflightClient::reopen_retired(RoundInfo& info) {
  bool any = false;
  for (auto& connection : connections_) {
    if (connection->link() != Connection::Link::retired) continue;
    connection->begin_connect(endpoint_);
    any = true;
  }
  if (!any) return {};
  drive(options_.connect_timeout, "connect: not reopened within connect_timeout");
  std::optional<Error> failure = first_failure();
  for (auto& connection : connections_) {
    if (connection->link() != Connection::Link::retired) continue;
    if (connection->outcome() == Connection::Outcome::complete) {
      connection->set_link(Connection::Link::open);
      ++stats_.connections_opened;
      ++stats_.connections_reopened;
      ++info.reopened;
    } else {
      connection->close_now();
      connection->set_link(Connection::Link::broken);
    }
  }
  if (failure) return std::unexpected(std::move(*failure));
  return {};
}

Result<RoundInfo> InflightClient::round(std::string_view target, std::span<BodySink* const> sinks) {
  RoundInfo info;
  const net::RingStats before = ring_->stats();
  const auto refuse = [&](Error error) -> std::unexpected<Error> {
    ++stats_.failed_rounds;
    account(before, &info.ring);
    if (error.peer.empty()) error.peer = host_header_;
    return std::unexpected(std::move(error));
  };
  if (connections_.empty()) return refuse(Error{Errc::io, "round() before connect()", {}});
  if (sinks.size() != connections_.size()) {
    return refuse(Error{Errc::io,
                        std::to_string(sinks.size()) + " sinks for " + std::to_string(connections_.size()) + " connections",
                        {}});
  }
  for (std::size_t i = 0; i < connections_.size(); ++i) {
    if (sinks[i] == nullptr) return refuse(Error{Errc::io, "sink " + std::to_string(i) + " is null", {}});
    if (connections_[i]->link() == Connection::Link::broken) {
      return refuse(Error{Errc::io,
                          "connection " + std::to_string(i + 1) + " of " + std::to_string(connections_.size()) +
                              " was closed by an earlier error; connect() opens the connections again",
                          {}});
    }
  }
  if (auto prepared = prepare_request(target); !prepared) return refuse(std::move(prepared.error()));
  if (auto reopened = reopen_retired(info); !reopened) return refuse(std::move(reopened.error()));

  // Every send and every first receive queued, then submitted together by the drive loop's first
  // io_uring_enter (more only when the submission queue fills first).
  shared_->request = request_;
  shared_->gate.clear();
  for (std::size_t i = 0; i < connections_.size(); ++i) connections_[i]->begin_exchange(*sinks[i]);
  drive(options_.io_timeout, "no complete response within io_timeout");
  shared_->gate.clear();

  std::optional<Error> failure = first_failure();
  for (auto& connection : connections_) {
    if (connection->outcome() == Connection::Outcome::failed) {
      connection->close_now();
      connection->set_link(Connection::Link::broken);
      ++stats_.connections_closed;
      continue;
    }
    ++info.responses;
    info.body_bytes += connection->body_bytes();
    if (connection->retiring()) {
      // Queued, not waited for: the close goes to the kernel with the next submission.
      connection->close_async();
      connection->set_link(Connection::Link::retired);
      ++stats_.connections_closed;
      ++info.retired;
    }
  }
  if (failure) return refuse(std::move(*failure));
  ++stats_.rounds;
  account(before, &info.ring);
  return info;
}

void InflightClient::drive(net::Duration limit, const char* late) {
  inflight::Shared& shared = *shared_;
  const Clock::time_point deadline = Clock::now() + limit;
  while (shared.unsettled > 0) {
    const auto remaining = std::chrono::duration_cast<net::Duration>(deadline - Clock::now());
    if (remaining <= net::Duration::zero()) {
      for (auto& connection : connections_) {
        if (!connection->settled()) {
          connection->fail(Error{Errc::timeout, std::string(late) + " (" + milliseconds(limit) + ")", {}});
        }
      }
      break;
    }
    // Every send still in flight (they usually complete during the submission itself) and one
    // receive: a wait that returns once any response has progressed, with the sends' completions.
    const unsigned wanted = shared.connecting + shared.sending + (shared.receiving > 0 ? 1u : 0u);
    auto ran = ring_->run_once(remaining, std::max(wanted, 1u));
    if (!ran) {
      const Error error = Error::from(ran.error());
      for (auto& connection : connections_) {
        if (!connection->settled()) connection->fail(error);
      }
      break;
    }
  }
  // What failures cancelled completes now; the handlers must not outlive this call's wait for it.
  for (int round = 0; round < kSettleRounds && shared.unsettled > 0; ++round) {
    if (!ring_->run_once(kSettleWait)) break;
  }
}

std::optional<Error> InflightClient::first_failure() const {
  const Error* first = nullptr;
  std::size_t failed = 0;
  for (const auto& connection : connections_) {
    if (connection->outcome() != Connection::Outcome::failed || !connection->error()) continue;
    if (first == nullptr) first = &*connection->error();
    ++failed;
  }
  if (first == nullptr) return std::nullopt;
  Error error = *first;
  if (failed > 1) {
    error.detail += " (" + std::to_string(failed) + " of " + std::to_string(connections_.size()) +
                    " connections failed)";
  }
  return error;
}

void InflightClient::account(const net::RingStats& before, net::RingStats* round) noexcept {
  const net::RingStats& now = ring_->stats();
  const net::RingStats delta{.enters = now.enters - before.enters,
                             .sqes_submitted = now.sqes_submitted - before.sqes_submitted,
                             .cqes_reaped = now.cqes_reaped - before.cqes_reaped};
  stats_.ring.enters += delta.enters;
  stats_.ring.sqes_submitted += delta.sqes_submitted;
  stats_.ring.cqes_reaped += delta.cqes_reaped;
  if (round != nullptr) *round = delta;
}

}  // namespace ringlab::http
