#include "ringlab/net/socket.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace ringlab::net {

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Fd::~Fd() { reset(); }

void Fd::reset() noexcept {
  // close(2) releases the descriptor even when it reports EINTR or EIO: never close twice.
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

namespace {

Status set_option(int fd, int level, int name, const char* op, const std::string& peer) {
  int one = 1;
  if (::setsockopt(fd, level, name, &one, sizeof(one)) != 0) return fail(op, errno, peer);
  return {};
}

}  // namespace

Result<Fd> listen_tcp(const Endpoint& where, const ListenOptions& options) {
  const std::string peer = where.to_string();
  Fd fd(::socket(where.family(), SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP));
  if (!fd.valid()) return fail("socket", errno, peer);
  if (auto ok = set_option(fd.get(), SOL_SOCKET, SO_REUSEADDR, "setsockopt SO_REUSEADDR", peer); !ok) {
    return std::unexpected(ok.error());
  }
  if (options.reuse_port) {
    if (auto ok = set_option(fd.get(), SOL_SOCKET, SO_REUSEPORT, "setsockopt SO_REUSEPORT", peer); !ok) {
      return std::unexpected(ok.error());
    }
  }
  if (::bind(fd.get(), where.addr(), where.length) != 0) return fail("bind", errno, peer);
  if (::listen(fd.get(), options.backlog) != 0) return fail("listen", errno, peer);
  return fd;
}

Result<Fd> tcp_socket_for(const Endpoint& peer, bool nonblocking) {
  Fd fd(::socket(peer.family(), SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), IPPROTO_TCP));
  if (!fd.valid()) return fail("socket", errno, peer.to_string());
  if (auto ok = set_nodelay(fd.get()); !ok) {
    Error error = ok.error();
    error.peer = peer.to_string();
    return std::unexpected(std::move(error));
  }
  return fd;
}

Status set_nodelay(int fd) {
  // Requests and responses are written whole; Nagle would only delay the last segment of each.
  return set_option(fd, IPPROTO_TCP, TCP_NODELAY, "setsockopt TCP_NODELAY", {});
}

}  // namespace ringlab::net
