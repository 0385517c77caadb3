// epoll (peer; the epoll row's Recipe::make and make_inflight, one strategy for one request and for N):
// what an event-loop client does, with one request or many at once. N = CaseConfig::inflight kept-alive
// non-blocking TCP sockets (TCP_NODELAY) to the case's server, all in one epoll instance, one request in
// flight on each. One run() is one round: the request (serialized once, at setup) goes out on every
// connection, then one epoll_wait loop serves whichever socket is ready until all N responses are
// complete; then each body is deserialized into its own connection's models and consumed.
//
// Edge-triggered: each socket is registered once, when it is opened, for EPOLLIN | EPOLLOUT | EPOLLRDHUP |
// EPOLLET, and its interest never changes after that, so a round costs no epoll_ctl. Level-triggered, a
// socket with nothing to do in this round (its response complete, bytes still unread, or a send buffer
// with room while nothing is left to send) would be reported by every epoll_wait until it was modified or
// taken out of the set, and put back the next round: two epoll_ctl per connection per round. What edge
// triggering asks in return is what the loop does anyway: a socket reported ready is read until EAGAIN or
// until its response is complete, and written until EAGAIN or the request is out; each report carries the
// socket's whole readiness at that moment, so a response whose bytes came while the request was still
// being sent is read as soon as the send completes in the same report.
//
// Per round, in steady state: N sends, per connection one recv per time its socket ran dry plus the one
// that completes the response, and the epoll_waits. Every system call is counted (IoCounters::syscalls).
//
// Deadline: each epoll_wait is bounded by the case's deadline (CaseConfig::timeout), as every blocking
// call of blocking_sockets is by SO_RCVTIMEO: a round in which no socket becomes ready for that long
// fails, naming how many of the N responses were still missing.
//
// Memory: per connection, the one response exchange (http::ResponseReceiver with its own buffer, as
// SocketPeer's), a presized padded body buffer (http::PresizedSink) and owning models reused in
// place; the events array (N entries) and one parser are shared. Nothing is allocated per round in steady
// state.
//
// Errors name the case, the connection when there are several ("connection 3 of 64", counted from 1), the
// operation, the peer and errno: "epoll weather 10 x64: connection 3 of 64: recv 127.0.0.1:8080:
// Connection reset by peer (ECONNRESET)". After an error every connection of the round is closed and the
// next run() opens them all again; nothing is retried. A response that closes its connection
// (Connection: close, a body that ends at the close) closes it; the next round opens it again.
//
// Timeline (when run() is given one and the case a tick source): the round's start, connected (when the
// round opened connections: the last connect done), request_sent (after the last send), first_byte (the
// first byte of any response), head_parsed (the first head), body_done (the last body complete) and
// deserialized. Each connection's receiver stamps its own timeline; the round's are taken from them.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "socket_peer.hpp"

namespace ringlab::strategies::detail {
namespace {

// What every socket is registered for, once (see above).
constexpr uint32_t kInterest = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
// The reports that move a connection on: a receive or a send (or getsockopt, for a connect) says what.
constexpr uint32_t kReadable = EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR;
constexpr uint32_t kWritable = EPOLLOUT | EPOLLHUP | EPOLLERR;

// One connection and its response exchange. Never moved: the sink points into the body buffer.
struct Connection {
  // Where the connection is in the round.
  enum class State {
    connecting,  // connect returned EINPROGRESS: EPOLLOUT says it is done (getsockopt SO_ERROR says how)
    sending,     // the request is going out; a send that would block waits for EPOLLOUT
    receiving,   // the request is out; the response is read as it arrives
    complete,    // the response is in (or the connection is closed)
  };

  net::Fd socket;
  State state = State::complete;
  std::size_t sent = 0;  // bytes of the request out so far
  http::ResponseReceiver receiver{http::ParserLimits{}, kReceiveBufferBytes};
  base::PaddedBuffer body;
  http::PresizedSink sink{body};
  OwningModels models;
  http::Timeline stamps;  // this connection's share of a timed round
};

class EpollInflight final : public CaseStrategy {
 public:
  using CaseStrategy::CaseStrategy;

  [[nodiscard]] IoCounters io_counters() const override {
    return copies_.into({.connections_opened = connections_opened_, .syscalls = syscalls_, .counts_syscalls = true});
  }
  void drop_connection() override { close_all(); }
  // Per connection: its receiver's buffer, its presized body buffer and its models (see "Memory" above).
  [[nodiscard]] HeldMemory held_memory() const override {
    HeldMemory held{.connections = count_};
    for (std::size_t i = 0; i < count_; ++i) {
      const Connection& connection = connections_[i];
      held.receive_bytes += connection.receiver.buffer_bytes();
      held.body_bytes += held_bytes(connection.body);
      held.model_bytes += connection.models.capacity_bytes();
    }
    return held;
  }

 private:
  Status open_case() override;
  Result<Outcome> run_case(http::Timeline* timeline, Check check) override {
    auto result = round(timeline, check);
    if (!result) [[unlikely]] {
      close_all();
    }
    return result;
  }
  void close_case() override {
    close_all();
    if (epoll_.valid()) {
      epoll_.reset();
      ++syscalls_;
    }
  }

  Result<Outcome> round(http::Timeline* timeline, Check check);
  // The steps of one connection's request; errors are the case's, naming the connection.
  Status open(std::size_t index);
  Status connect_done(std::size_t index);
  Status send_request(std::size_t index);
  Status receive(std::size_t index);
  // Moves connection `index` on after epoll reported `events` for it.
  Status on_ready(std::size_t index, uint32_t events);
  void stamp(uint64_t http::Timeline::*phase) noexcept {
    if (timeline_ != nullptr) timeline_->*phase = config().ticks();
  }

  void close(Connection& connection) noexcept {
    connection.state = Connection::State::complete;
    if (!connection.socket.valid()) return;
    connection.socket.reset();  // which also takes it out of the epoll set
    ++syscalls_;
  }
  void close_all() noexcept {
    for (std::size_t i = 0; i < count_; ++i) close(connections_[i]);
  }

  // "label: connection 3 of 64: what"; only on error paths (it allocates).
  [[nodiscard]] std::unexpected<Error> failed_on(std::size_t index, std::string_view what) const {
    return fail_on_connection(label(), index, count_, what);
  }
  // The exchange's errors leave the peer empty: this one names it.
  [[nodiscard]] std::unexpected<Error> exchange_failed(std::size_t index, http::Error error) const {
    if (error.peer.empty()) error.peer = target_.peer_text;
    return failed_on(index, error.message());
  }
  // The system call just made failed (reads errno).
  [[nodiscard]] std::unexpected<Error> syscall_failed_on(std::size_t index, const char* op) const {
    return failed_on(index, syscall_failed(op, target_.peer_text).error().message());
  }

  SocketTarget target_;
  std::size_t count_ = 0;  // N: connections, so requests in flight
  std::unique_ptr<Connection[]> connections_;
  std::unique_ptr<epoll_event[]> events_;  // epoll_wait's, N entries
  net::Fd epoll_;
  http::Timeline* timeline_ = nullptr;  // the round's, while a timed round runs
  // The round's progress: requests not yet out, connects not yet done, responses not yet complete.
  std::size_t unsent_ = 0;
  std::size_t connecting_ = 0;
  std::size_t missing_ = 0;
  bool opened_ = false;  // the round opened connections
  uint64_t syscalls_ = 0;
  uint64_t connections_opened_ = 0;
  BodyCopies copies_;
};

Status EpollInflight::open_case() {
  close_all();  // a second setup() starts over
  if (config().inflight == 0) return fail(label(), "no request in flight (CaseConfig::inflight is 0)");
  if (config().inflight > static_cast<std::size_t>(INT_MAX)) {
    return fail(label(), "more requests in flight than epoll_wait can report at once");
  }

  auto target = socket_target(config(), label());
  if (!target) return std::unexpected(std::move(target.error()));
  target_ = std::move(*target);

  count_ = 0;  // the connections go first: close_all() must not see a count without them
  connections_ = std::make_unique<Connection[]>(config().inflight);
  events_ = std::make_unique<epoll_event[]>(config().inflight);
  count_ = config().inflight;
  for (std::size_t i = 0; i < count_; ++i) connections_[i].models.reserve(config().payload, config().count);

  if (!epoll_.valid()) {
    epoll_ = net::Fd(::epoll_create1(EPOLL_CLOEXEC));
    ++syscalls_;
    if (!epoll_.valid()) return fail(label(), syscall_failed("epoll_create1", target_.peer_text).error().message());
  }
  return {};
}

Status EpollInflight::open(std::size_t index) {
  Connection& connection = connections_[index];
  auto socket = net::tcp_socket_for(target_.peer, /*nonblocking=*/true);
  syscalls_ += 2;  // socket, setsockopt TCP_NODELAY
  if (!socket) return failed_on(index, socket.error().message());
  net::Fd fd = std::move(*socket);
  ++syscalls_;
  const bool connected = ::connect(fd.get(), target_.peer.addr(), target_.peer.length) == 0;
  if (!connected && errno != EINPROGRESS) return syscall_failed_on(index, "connect");
  // Registered right away: a connect that completed meanwhile is reported (epoll_ctl looks at the
  // socket's state as it adds it), so no edge is missed.
  epoll_event interest{.events = kInterest, .data = {.u64 = index}};
  ++syscalls_;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd.get(), &interest) != 0) return syscall_failed_on(index, "epoll_ctl");
  connection.socket = std::move(fd);
  ++connections_opened_;
  opened_ = true;
  if (connected) return {};
  connection.state = Connection::State::connecting;
  ++connecting_;
  return {};
}

Status EpollInflight::connect_done(std::size_t index) {
  Connection& connection = connections_[index];
  int error = 0;
  socklen_t length = sizeof(error);
  ++syscalls_;
  if (::getsockopt(connection.socket.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
    return syscall_failed_on(index, "getsockopt");
  }
  if (error != 0) return failed_on(index, net::Error{"connect", error, target_.peer_text}.message());
  connection.state = Connection::State::sending;
  if (--connecting_ == 0 && opened_) stamp(&http::Timeline::connected);
  return {};
}

Status EpollInflight::send_request(std::size_t index) {
  Connection& connection = connections_[index];
  while (connection.sent < target_.request.size()) {
    const std::string_view rest = std::string_view(target_.request).substr(connection.sent);
    ++syscalls_;
    const ssize_t n = ::send(connection.socket.get(), rest.data(), rest.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      connection.sent += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {};  // the EPOLLOUT edge resumes it
    return syscall_failed_on(index, "send");
  }
  connection.state = Connection::State::receiving;
  if (--unsent_ == 0) stamp(&http::Timeline::request_sent);
  return {};
}

Status EpollInflight::receive(std::size_t index) {
  Connection& connection = connections_[index];
  http::ResponseReceiver& receiver = connection.receiver;
  while (true) {
    auto window = receiver.window();
    if (!window) return exchange_failed(index, std::move(window.error()));
    ++syscalls_;
    const ssize_t n = ::recv(connection.socket.get(), window->bytes.data(), window->bytes.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return {};  // ran dry: the next EPOLLIN edge goes on
      return syscall_failed_on(index, "recv");
    }
    const bool peer_closed = n == 0;
    auto done = peer_closed ? receiver.closed() : receiver.received(static_cast<std::size_t>(n));
    if (!done) return exchange_failed(index, std::move(done.error()));
    if (!*done) continue;
    // Complete. Bytes after it would be an answer to no request (nothing is pipelined): not read here.
    --missing_;
    const bool fresh = config().connection == strategies::Connection::fresh;
    if (peer_closed || !receiver.keep_alive() || receiver.close_delimited() || fresh) close(connection);
    connection.state = Connection::State::complete;
    if (receiver.status() != 200) [[unlikely]] {
      return failed_on(index, "status " + std::to_string(receiver.status()) + " from " + target_.peer_text);
    }
    return {};
  }
}

Status EpollInflight::on_ready(std::size_t index, uint32_t events) {
  Connection& connection = connections_[index];
  if (connection.state == Connection::State::connecting && (events & kWritable) != 0) {
    if (auto done = connect_done(index); !done) return done;
  }
  if (connection.state == Connection::State::sending && (events & kWritable) != 0) {
    if (auto sent = send_request(index); !sent) return sent;
  }
  if (connection.state == Connection::State::receiving && (events & kReadable) != 0) return receive(index);
  return {};  // nothing this connection waits for (a report of a socket already done, a stale edge)
}

Result<Outcome> EpollInflight::round(http::Timeline* timeline, Check check) {
  timeline_ = timeline != nullptr && config().ticks != nullptr ? timeline : nullptr;
  stamp(&http::Timeline::start);
  unsent_ = count_;
  connecting_ = 0;
  missing_ = count_;
  opened_ = false;

  uint64_t copied_before = 0;
  for (std::size_t i = 0; i < count_; ++i) copied_before += connections_[i].sink.copied_bytes();
  // Every request goes out before any response is awaited.
  for (std::size_t i = 0; i < count_; ++i) {
    Connection& connection = connections_[i];
    connection.stamps = {};
    connection.receiver.start(connection.sink, timeline_ != nullptr ? &connection.stamps : nullptr, config().ticks);
    connection.sent = 0;
    connection.state = Connection::State::sending;
    if (!connection.socket.valid()) {
      if (auto opened = open(i); !opened) return std::unexpected(std::move(opened.error()));
    }
    if (connection.state == Connection::State::sending) {
      if (auto sent = send_request(i); !sent) return std::unexpected(std::move(sent.error()));
    }
  }
  if (opened_ && connecting_ == 0) stamp(&http::Timeline::connected);

  const int capacity = static_cast<int>(count_);
  while (missing_ > 0) {
    ++syscalls_;
    const int ready = ::epoll_wait(epoll_.get(), events_.get(), capacity, timeout_ms(config()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return fail(label(), syscall_failed("epoll_wait", target_.peer_text).error().message());
    }
    if (ready == 0) [[unlikely]] {
      return fail(label(), std::to_string(missing_) + " of " + std::to_string(count_) +
                               " responses missing when the deadline passed: " +
                               net::Error{"epoll_wait", ETIMEDOUT, target_.peer_text}.message());
    }
    for (int e = 0; e < ready; ++e) {
      const auto index = static_cast<std::size_t>(events_[e].data.u64);
      if (auto moved = on_ready(index, events_[e].events); !moved) return std::unexpected(std::move(moved.error()));
    }
  }
  if (timeline_ != nullptr) {
    stamp_round(*timeline_, count_, [this](std::size_t i) -> const http::Timeline& { return connections_[i].stamps; });
  }
  uint64_t body_bytes = 0;
  uint64_t copied_after = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    body_bytes += connections_[i].receiver.body_bytes();
    copied_after += connections_[i].sink.copied_bytes();
  }
  copies_.received(body_bytes, copied_before, copied_after);

  // All N are in: each body into its own models, the folds folded in connection order.
  auto consumed = fold_round(count_, [this](std::size_t i) -> Result<uint64_t> {
    Connection& connection = connections_[i];
    const auto folded = connection.models.parse(config().payload, parser(), json::padded_view(connection.body));
    if (!folded) [[unlikely]] {
      return failed_on(i, describe(folded.error()));
    }
    return *folded;
  });
  if (!consumed) [[unlikely]] {
    return std::unexpected(std::move(consumed.error()));
  }
  stamp(&http::Timeline::deserialized);
  return conclude_round(label(), config(), expected(), *consumed, check, count_,
                        [this](std::size_t i) { return connections_[i].models.checksum(config().payload); });
}

}  // namespace

std::unique_ptr<Strategy> make_epoll_inflight(const Recipe& recipe) {
  return std::make_unique<EpollInflight>(recipe.name);
}

}  // namespace ringlab::strategies::detail
