#include "socket_peer.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/time.h>

#include <cerrno>

#include "ringlab/http/request.hpp"

namespace ringlab::strategies::detail {

std::unexpected<net::Error> syscall_failed(const char* op, const std::string& peer) {
  return net::fail(op, errno, peer);
}

net::Result<net::Fd> open_blocking(const net::Endpoint& peer, const std::string& peer_text, int timeout_ms,
                                   int max_segment, uint64_t& syscalls) {
  net::Fd fd(::socket(peer.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  ++syscalls;
  if (!fd.valid()) return syscall_failed("socket", peer_text);
  const timeval deadline{.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
  const int one = 1;
  syscalls += max_segment > 0 ? 4 : 3;
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof(deadline)) != 0 ||
      ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &deadline, sizeof(deadline)) != 0 ||
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0 ||
      (max_segment > 0 && ::setsockopt(fd.get(), IPPROTO_TCP, TCP_MAXSEG, &max_segment, sizeof(max_segment)) != 0)) {
    return syscall_failed("setsockopt", peer_text);
  }
  // SO_SNDTIMEO bounds a blocking connect too (EINPROGRESS when it passes).
  int rc;
  do {
    ++syscalls;
    rc = ::connect(fd.get(), peer.addr(), peer.length);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    if (errno == EINPROGRESS) return net::fail("connect", ETIMEDOUT, peer_text);
    return syscall_failed("connect", peer_text);
  }
  return fd;
}

net::Status send_blocking(int socket, std::string_view bytes, const std::string& peer_text, uint64_t& syscalls) {
  while (!bytes.empty()) {
    ++syscalls;
    const ssize_t n = ::send(socket, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return net::fail("send", ETIMEDOUT, peer_text);
      return syscall_failed("send", peer_text);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

net::Result<std::size_t> receive_blocking(int socket, std::span<char> into, int flags, const std::string& peer_text,
                                          uint64_t& syscalls) {
  while (true) {
    ++syscalls;
    const ssize_t n = ::recv(socket, into.data(), into.size(), flags);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return net::fail("recv", ETIMEDOUT, peer_text);
    return syscall_failed("recv", peer_text);
  }
}

Status SocketPeer::open_case() {
  close_connection();  // a second setup() starts over

  auto target = socket_target(config(), label());
  if (!target) return std::unexpected(std::move(target.error()));
  target_ = std::move(*target);
  models_.reserve(config().payload, config().count);

  return {};
}

Result<SocketTarget> socket_target(const CaseConfig& config, std::string_view label, std::string_view extra_query) {
  auto peer = net::Endpoint::parse(config.host, config.port);
  if (!peer) return fail(label, peer.error().message());
  const std::string host = authority(config);
  const std::string target = get_target(config, extra_query);
  std::string head(4096, '\0');
  const bool fresh = config.connection == Connection::fresh;  // Connection: close, closed after the response
  auto serialized = http::serialize(
      http::RequestSpec{.method = "GET", .host = host, .target = target, .keep_alive = !fresh}, head);
  if (!serialized) return fail(label, serialized.error().message());
  return SocketTarget{.peer = *peer, .peer_text = peer->to_string(), .request = std::string(serialized->head())};
}

int timeout_ms(const CaseConfig& config) noexcept {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(config.timeout).count();
  if (ms < 1) return 1;
  if (ms > 0x7FFFFFFF) return 0x7FFFFFFF;
  return static_cast<int>(ms);
}

void SocketPeer::close_connection() noexcept {
  if (!socket_.valid()) return;
  socket_.reset();
  count_syscall();
}

Result<Outcome> SocketPeer::run_case(http::Timeline* timeline, Check check) {
  auto result = exchange(timeline, check);
  if (!result) [[unlikely]] {
    close_connection();
  }
  return result;
}

Result<Outcome> SocketPeer::exchange(http::Timeline* timeline, Check check) {
  const http::TickSource ticks = config().ticks;
  const Stamper stamp{timeline, ticks};
  stamp(&http::Timeline::start);
  if (!socket_.valid()) {
    if (auto opened = open_connection(); !opened) return fail(label(), opened.error().message());
    ++connections_opened_;
    stamp(&http::Timeline::connected);
  }
  if (auto sent = send_all(target_.request); !sent) return fail(label(), sent.error().message());
  stamp(&http::Timeline::request_sent);

  // The exchange's errors leave the peer empty: this one names it.
  const auto exchange_failed = [this](http::Error error) {
    if (error.peer.empty()) error.peer = target_.peer_text;
    return fail(label(), error.message());
  };
  receiver_.start(sink_, timeline, ticks);
  const uint64_t copied_before = sink_.copied_bytes();
  bool peer_closed = false;
  while (true) {
    auto window = receiver_.window();
    if (!window) return exchange_failed(std::move(window.error()));
    auto n = receive(window->bytes);
    if (!n) return fail(label(), n.error().message());
    peer_closed = *n == 0;
    auto done = peer_closed ? receiver_.closed() : receiver_.received(*n);
    if (!done) return exchange_failed(std::move(done.error()));
    if (*done) break;
  }
  copies_.received(receiver_.body_bytes(), copied_before, sink_.copied_bytes());
  const bool fresh = config().connection == Connection::fresh;
  if (peer_closed || !receiver_.keep_alive() || receiver_.close_delimited() || fresh) {
    close_connection();
  }
  if (receiver_.status() != 200) [[unlikely]] {
    return fail(label(), "status " + std::to_string(receiver_.status()) + " from " + target_.peer_text);
  }
  const auto consumed = models_.parse(config().payload, parser(), json::padded_view(body_));
  stamp(&http::Timeline::deserialized);
  return conclude(label(), config(), expected(), consumed, check, [this] { return models_.checksum(config().payload); });
}

IoCounters SocketPeer::io_counters() const {
  return copies_.into({.connections_opened = connections_opened_, .syscalls = syscalls_});
}

HeldMemory SocketPeer::held_memory() const {
  HeldMemory held{.connections = 1, .model_bytes = models_.capacity_bytes(), .receive_bytes = receiver_.buffer_bytes()};
  held.body_bytes = held_bytes(body_);
  return held;
}

void SocketPeer::close_case() { close_connection(); }

}  // namespace ringlab::strategies::detail
