// blocking_sockets (peer): the way most HTTP clients have always worked. One kept-alive TCP socket in
// blocking mode; connect, send and recv block the thread; SO_SNDTIMEO / SO_RCVTIMEO bound every call
// (and the connect) by the case's deadline. Per request, in steady state: one send and as many recv
// as the body needs (each into the presized buffer, in place), parsed with ringlab's ResponseParser.
// socket_peer.hpp has the rest.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>

#include "socket_peer.hpp"

namespace ringlab::strategies::detail {
namespace {

class BlockingSockets final : public SocketPeer {
  using SocketPeer::SocketPeer;

  net::Status open_connection() override {
    net::Fd fd(::socket(peer().family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
    count_syscall();
    if (!fd.valid()) return syscall_failed("socket", peer_text());
    const int ms = timeout_ms();
    const timeval deadline{.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    const int one = 1;
    count_syscall();
    count_syscall();
    count_syscall();
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof(deadline)) != 0 ||
        ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &deadline, sizeof(deadline)) != 0 ||
        ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
      return syscall_failed("setsockopt", peer_text());
    }
    // SO_SNDTIMEO bounds a blocking connect too (EINPROGRESS when it passes).
    int rc;
    do {
      count_syscall();
      rc = ::connect(fd.get(), peer().addr(), peer().length);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      if (errno == EINPROGRESS) return net::fail("connect", ETIMEDOUT, peer_text());
      return syscall_failed("connect", peer_text());
    }
    socket_ = std::move(fd);
    return {};
  }

  net::Status send_all(std::string_view bytes) override {
    while (!bytes.empty()) {
      const ssize_t n = send_once(bytes);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return net::fail("send", ETIMEDOUT, peer_text());
        return syscall_failed("send", peer_text());
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
  }

  net::Result<std::size_t> receive(std::span<char> into) override {
    while (true) {
      const ssize_t n = recv_once(into);
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return net::fail("recv", ETIMEDOUT, peer_text());
      return syscall_failed("recv", peer_text());
    }
  }
};

}  // namespace

std::unique_ptr<Strategy> make_blocking_sockets(const Recipe& recipe) {
  return std::make_unique<BlockingSockets>(recipe.name);
}

}  // namespace ringlab::strategies::detail
