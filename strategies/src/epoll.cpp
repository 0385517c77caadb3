// epoll (peer): the readiness model of most event-loop clients. One kept-alive non-blocking TCP socket,
// registered with an epoll instance made at setup (level-triggered). Connect returns EINPROGRESS and
// completes when epoll says writable; a send that would block waits for EPOLLOUT; receiving waits for
// EPOLLIN, then reads until EAGAIN or the end of the response. Per request, in steady state: one send,
// one epoll_wait per time the socket ran dry, and the recv calls (into the presized buffer, in place).
// Every epoll_wait is bounded by the case's deadline. socket_peer.hpp has the rest.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>

#include "socket_peer.hpp"

namespace ringlab::strategies::detail {
namespace {

class Epoll final : public SocketPeer {
  using SocketPeer::SocketPeer;

  // Waits until the socket is ready for `events`: ok, ETIMEDOUT when the deadline passes.
  net::Status wait_for(uint32_t events, const char* op) {
    if (!epoll_.valid()) {
      epoll_ = net::Fd(::epoll_create1(EPOLL_CLOEXEC));
      count_syscall();
      if (!epoll_.valid()) return syscall_failed("epoll_create1", peer_text());
    }
    if (registered_fd_ != socket_.get()) {
      epoll_event interest{.events = events, .data = {.fd = socket_.get()}};
      count_syscall();
      if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, socket_.get(), &interest) != 0) {
        return syscall_failed("epoll_ctl", peer_text());
      }
      registered_fd_ = socket_.get();
      interest_ = events;
    } else if (interest_ != events) {
      epoll_event interest{.events = events, .data = {.fd = socket_.get()}};
      count_syscall();
      if (::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, socket_.get(), &interest) != 0) {
        return syscall_failed("epoll_ctl", peer_text());
      }
      interest_ = events;
    }
    epoll_event ready{};
    while (true) {
      count_syscall();
      const int n = ::epoll_wait(epoll_.get(), &ready, 1, timeout_ms());
      if (n > 0) return {};
      if (n == 0) return net::fail(op, ETIMEDOUT, peer_text());
      if (errno != EINTR) return syscall_failed("epoll_wait", peer_text());
    }
  }

  net::Status open_connection() override {
    // A closed socket left the epoll set by itself; its number may come back for the new one.
    registered_fd_ = -1;
    auto socket = net::tcp_socket_for(peer(), /*nonblocking=*/true);
    count_syscall();  // socket
    count_syscall();  // setsockopt TCP_NODELAY
    if (!socket) return std::unexpected(std::move(socket.error()));
    net::Fd fd = std::move(*socket);
    count_syscall();
    if (::connect(fd.get(), peer().addr(), peer().length) != 0) {
      if (errno != EINPROGRESS) return syscall_failed("connect", peer_text());
      socket_ = std::move(fd);
      if (auto writable = wait_for(EPOLLOUT, "connect"); !writable) return writable;
      int error = 0;
      socklen_t length = sizeof(error);
      count_syscall();
      if (::getsockopt(socket_.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
        return syscall_failed("getsockopt", peer_text());
      }
      if (error != 0) return net::fail("connect", error, peer_text());
      return {};
    }
    socket_ = std::move(fd);
    return {};
  }

  net::Status send_all(std::string_view bytes) override {
    while (!bytes.empty()) {
      const ssize_t n = send_once(bytes);
      if (n >= 0) {
        bytes.remove_prefix(static_cast<std::size_t>(n));
        continue;
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return syscall_failed("send", peer_text());
      if (auto writable = wait_for(EPOLLOUT, "send"); !writable) return writable;
    }
    must_wait_ = true;  // the answer is not there yet: its first receive waits for readiness
    return {};
  }

  net::Result<std::size_t> receive(std::span<char> into) override {
    // The first receive of a response waits for readiness; later ones read until the socket runs
    // dry (EAGAIN), and wait only then, as an event loop does.
    if (!must_wait_) {
      const ssize_t n = recv_once(into);
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return syscall_failed("recv", peer_text());
    }
    while (true) {
      if (auto readable = wait_for(EPOLLIN, "recv"); !readable) return std::unexpected(readable.error());
      const ssize_t n = recv_once(into);
      if (n >= 0) {
        must_wait_ = false;
        return static_cast<std::size_t>(n);
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return syscall_failed("recv", peer_text());
    }
  }

  net::Fd epoll_;
  int registered_fd_ = -1;
  uint32_t interest_ = 0;
  bool must_wait_ = true;
};

}  // namespace

std::unique_ptr<Strategy> make_epoll(const Recipe& recipe) { return std::make_unique<Epoll>(recipe.name); }

}  // namespace ringlab::strategies::detail
