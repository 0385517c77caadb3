#include "socket_peer.hpp"

#include <cerrno>

#include "ringlab/http/request.hpp"

namespace ringlab::strategies::detail {

std::unexpected<net::Error> syscall_failed(const char* op, const std::string& peer) {
  return net::fail(op, errno, peer);
}

Status SocketPeer::setup(const CaseConfig& config) {
  close_connection();  // a second setup() starts over
  config_ = config;
  label_ = case_label(name_, config_);
  expected_ = expected_checksum(config_);
  ready_ = false;

  auto peer = net::Endpoint::parse(config_.host, config_.port);
  if (!peer) return fail(label_, peer.error().message());
  peer_ = *peer;
  peer_text_ = peer_.to_string();

  const std::string host = authority(config_);
  const std::string target = get_target(config_);
  std::string head(4096, '\0');
  auto serialized = http::serialize(http::RequestSpec{.method = "GET", .host = host, .target = target}, head);
  if (!serialized) return fail(label_, serialized.error().message());
  request_ = std::string(serialized->head());
  models_.reserve(config_.payload, config_.count);

  ready_ = true;
  auto first = run(nullptr, Check::verify);
  if (!first) return std::unexpected(first.error());
  return {};
}

int SocketPeer::timeout_ms() const noexcept {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(config_.timeout).count();
  if (ms < 1) return 1;
  if (ms > 0x7FFFFFFF) return 0x7FFFFFFF;
  return static_cast<int>(ms);
}

void SocketPeer::close_connection() noexcept {
  if (!socket_.valid()) return;
  socket_.reset();
  count_syscall();
}

Result<Outcome> SocketPeer::run(http::Timeline* timeline, Check check) {
  if (!ready_) [[unlikely]] {
    return fail(label_.empty() ? name_ : label_, "run() without a successful setup()");
  }
  auto result = exchange(timeline, check);
  if (!result) [[unlikely]] {
    close_connection();
  }
  return result;
}

Result<Outcome> SocketPeer::exchange(http::Timeline* timeline, Check check) {
  const http::TickSource ticks = config_.ticks;
  const auto stamp = [timeline, ticks](uint64_t http::Timeline::*phase) {
    if (timeline != nullptr && ticks != nullptr) timeline->*phase = ticks();
  };
  stamp(&http::Timeline::start);
  if (!socket_.valid()) {
    if (auto opened = open_connection(); !opened) return fail(label_, opened.error().message());
    ++connections_opened_;
    stamp(&http::Timeline::connected);
  }
  if (auto sent = send_all(request_); !sent) return fail(label_, sent.error().message());
  stamp(&http::Timeline::request_sent);

  // The exchange's errors leave the peer empty: this one names it.
  const auto exchange_failed = [this](http::Error error) {
    if (error.peer.empty()) error.peer = peer_text_;
    return fail(label_, error.message());
  };
  receiver_.start(sink_, timeline, ticks);
  bool peer_closed = false;
  while (true) {
    auto window = receiver_.window();
    if (!window) return exchange_failed(std::move(window.error()));
    auto n = receive(window->bytes);
    if (!n) return fail(label_, n.error().message());
    peer_closed = *n == 0;
    auto done = peer_closed ? receiver_.closed() : receiver_.received(*n);
    if (!done) return exchange_failed(std::move(done.error()));
    if (*done) break;
  }
  if (peer_closed || !receiver_.keep_alive() || receiver_.close_delimited()) close_connection();
  if (receiver_.status() != 200) [[unlikely]] {
    return fail(label_, "status " + std::to_string(receiver_.status()) + " from " + peer_text_);
  }
  const auto consumed = models_.parse(config_.payload, parser_, json::padded_view(body_));
  stamp(&http::Timeline::deserialized);
  return conclude(label_, config_, expected_, consumed, check, [this] { return models_.checksum(config_.payload); });
}

IoCounters SocketPeer::io_counters() const {
  IoCounters counters;
  counters.syscalls = syscalls_;
  counters.connections_opened = connections_opened_;
  return counters;
}

void SocketPeer::teardown() {
  ready_ = false;
  close_connection();
}

}  // namespace ringlab::strategies::detail
