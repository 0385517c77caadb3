#pragma once
// Socket helpers: an owning file descriptor and listener set-up. Plain syscalls, done once at set-up.
#include <utility>

#include "ringlab/net/endpoint.hpp"
#include "ringlab/net/error.hpp"

namespace ringlab::net {

// Owns a file descriptor; closes it (synchronously) on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  // Gives up ownership (for an asynchronous close through the ring).
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  void reset() noexcept;

 private:
  int fd_ = -1;
};

struct ListenOptions {
  int backlog = 1024;
  bool reuse_port = true;  // SO_REUSEPORT: one listener per server thread
};

// socket + SO_REUSEADDR (+ SO_REUSEPORT) + bind + listen. Port 0 picks a free port (Endpoint::local_of).
Result<Fd> listen_tcp(const Endpoint& where, const ListenOptions& options = {});
// A TCP socket for connecting to `peer`'s family, with TCP_NODELAY set; with `nonblocking`, SOCK_NONBLOCK
// too (a readiness loop's socket). Two system calls: socket and setsockopt.
Result<Fd> tcp_socket_for(const Endpoint& peer, bool nonblocking = false);
// TCP_NODELAY on an accepted socket.
Status set_nodelay(int fd);

}  // namespace ringlab::net
