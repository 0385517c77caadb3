#pragma once
// A loopback TCP listener on a free port, made with plain blocking sockets, whose accept loop runs on
// its own std::thread and hands each connection's descriptor to the owner: the base of the test
// servers that must share no code with the client they test. The loop polls in 20 ms steps, so
// stop() (and the destructor) end it within that.
//
// Threads: on_accept, and wait_readable() from it, run on the acceptor thread; the rest on the owner's.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>

namespace ringlab::testing {

class LoopbackAcceptor {
 public:
  // Receives each accepted descriptor, owning it from then on.
  using OnAccept = std::function<void(int fd)>;

  explicit LoopbackAcceptor(OnAccept on_accept) : on_accept_(std::move(on_accept)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listener_ >= 0);
    const int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0);
    REQUIRE(::listen(listener_, 64) == 0);
    socklen_t length = sizeof(address);
    REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { accept_loop(); });
  }
  ~LoopbackAcceptor() {
    stop();
    ::close(listener_);
  }
  LoopbackAcceptor(const LoopbackAcceptor&) = delete;
  LoopbackAcceptor& operator=(const LoopbackAcceptor&) = delete;

  // Ends the accept loop and waits for it (and so for an on_accept in progress).
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  [[nodiscard]] uint16_t port() const noexcept { return port_; }

  // Polls `fd` in 20 ms steps: true once it is readable, false once stop() was called.
  bool wait_readable(int fd) const {
    while (!stop_.load()) {
      pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
      if (::poll(&p, 1, 20) > 0) return true;
    }
    return false;
  }

 private:
  void accept_loop() {
    while (wait_readable(listener_)) {
      const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      on_accept_(fd);
    }
  }

  OnAccept on_accept_;
  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ringlab::testing
