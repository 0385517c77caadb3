#pragma once
// SocketPeer: the frame of a peer that drives one TCP socket with plain system calls (blocking_sockets;
// the epoll row has one strategy for one request and for N, epoll_inflight.cpp, on the same terms) and
// receives through http::ResponseReceiver, the exchange http::Client drives too (the same framing, sinks
// and stamps; only the system calls differ). A peer says how it waits: open_connection(), send_all() and
// receive(), each counting its system calls. The rest is the frame's, so that the peer compares with
// ringlab's own strategies on equal terms: one kept-alive connection, the request head serialized once
// at setup (http::serialize), the body received in place into a presized padded buffer
// (http::PresizedSink) and parsed into reused owning models, consumed, and on verified runs checksummed
// against the generator's.
//
// Errors name the case, the operation, the peer and errno ("blocking_sockets weather 10: recv
// 127.0.0.1:8080: Connection reset by peer (ECONNRESET)"). After any error the socket is closed; the
// next run() connects again. Nothing is retried.
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "case_strategy.hpp"
#include "common.hpp"
#include "recipe.hpp"
#include "ringlab/http/response_receiver.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/net/endpoint.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/net/socket.hpp"

namespace ringlab::strategies::detail {

// The receiver's own buffer: the head, and body bytes when the sink offers no window.
inline constexpr std::size_t kReceiveBufferBytes = 64 * 1024;

// Where a socket peer's requests go, made once at setup: the server's address, its text for errors, and
// the whole GET request of the case (http::serialize, common.hpp's get_target; Connection: close when
// the case's connections are fresh).
struct SocketTarget {
  net::Endpoint peer;
  std::string peer_text;
  std::string request;
};
// `config`'s SocketTarget, `extra_query` appended to the target (get_target); errors start with `label`.
[[nodiscard]] Result<SocketTarget> socket_target(const CaseConfig& config, std::string_view label,
                                                 std::string_view extra_query = {});
// The case's deadline in whole milliseconds, at least 1 (epoll_wait, SO_RCVTIMEO).
[[nodiscard]] int timeout_ms(const CaseConfig& config) noexcept;

class SocketPeer : public CaseStrategy {
 public:
  using CaseStrategy::CaseStrategy;
  [[nodiscard]] IoCounters io_counters() const final;
  void drop_connection() final { close_connection(); }
  // Its one connection's: the receiver's buffer, the presized body buffer (with its padding) and the
  // models' record vectors.
  [[nodiscard]] HeldMemory held_memory() const final;

 protected:
  // Makes socket_ a connected socket to peer().
  virtual net::Status open_connection() = 0;
  // Sends every byte.
  virtual net::Status send_all(std::string_view bytes) = 0;
  // One receive into `into` (never empty): bytes received, 0 when the peer closed.
  virtual net::Result<std::size_t> receive(std::span<char> into) = 0;

  [[nodiscard]] const net::Endpoint& peer() const noexcept { return target_.peer; }
  [[nodiscard]] const std::string& peer_text() const noexcept { return target_.peer_text; }
  // The case's deadline in whole milliseconds, at least 1 (SO_RCVTIMEO).
  [[nodiscard]] int timeout_ms() const noexcept { return detail::timeout_ms(config()); }
  void count_syscall() noexcept { ++syscalls_; }
  [[nodiscard]] uint64_t& syscall_count() noexcept { return syscalls_; }
  void close_connection() noexcept;

  net::Fd socket_;

 private:
  Status open_case() final;
  Result<Outcome> run_case(http::Timeline* timeline, Check check) final;
  void close_case() final;
  Result<Outcome> exchange(http::Timeline* timeline, Check check);

  SocketTarget target_;
  http::ResponseReceiver receiver_{http::ParserLimits{}, kReceiveBufferBytes};
  base::PaddedBuffer body_;
  http::PresizedSink sink_{body_};
  OwningModels models_;
  uint64_t syscalls_ = 0;
  uint64_t connections_opened_ = 0;
  BodyCopies copies_;
};

// A net::Error for the failed system call just made (reads errno).
[[nodiscard]] std::unexpected<net::Error> syscall_failed(const char* op, const std::string& peer);

// What a socket row stamps on the case's timeline: nothing without a timeline or a tick source.
struct Stamper {
  http::Timeline* timeline = nullptr;
  http::TickSource ticks = nullptr;
  void operator()(uint64_t http::Timeline::*phase) const noexcept {
    if (timeline != nullptr && ticks != nullptr) timeline->*phase = ticks();
  }
};

// A blocking socket's operations (blocking_sockets, mapped), each adding the system calls it makes to
// `syscalls`. Errors name the operation and `peer_text`; a deadline that passed is ETIMEDOUT.
// A connected blocking TCP socket to `peer`: SO_RCVTIMEO and SO_SNDTIMEO at `timeout_ms` (they bound the
// connect too), TCP_NODELAY, and TCP_MAXSEG at `max_segment` when it is above 0.
[[nodiscard]] net::Result<net::Fd> open_blocking(const net::Endpoint& peer, const std::string& peer_text,
                                                 int timeout_ms, int max_segment, uint64_t& syscalls);
// Sends every byte of `bytes`.
[[nodiscard]] net::Status send_blocking(int socket, std::string_view bytes, const std::string& peer_text,
                                        uint64_t& syscalls);
// One recv into `into` with `flags` (MSG_PEEK...): the bytes received, 0 when the peer closed.
[[nodiscard]] net::Result<std::size_t> receive_blocking(int socket, std::span<char> into, int flags,
                                                        const std::string& peer_text, uint64_t& syscalls);

// The blocking_sockets row (peer_recipes.hpp, blocking_sockets.cpp).
std::unique_ptr<Strategy> make_blocking_sockets(const Recipe& recipe);
// The mapped row (mapped.cpp): a blocking socket whose body pages the kernel maps (TCP_ZEROCOPY_RECEIVE).
std::unique_ptr<Strategy> make_mapped(const Recipe& recipe);
// The epoll row's strategy, for one request and for N in flight (Recipe::make and make_inflight): N
// connections on one epoll instance, not built on SocketPeer, which drives one socket (epoll_inflight.cpp).
std::unique_ptr<Strategy> make_epoll_inflight(const Recipe& recipe);
// The blocking_sockets row's (Recipe::make_inflight): N worker threads, each running the row's one-socket
// strategy on a connection of its own (blocking_inflight.cpp).
std::unique_ptr<Strategy> make_blocking_sockets_inflight(const Recipe& recipe);

}  // namespace ringlab::strategies::detail
