#include "ringlab/net/socket.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <string>

#include "../support/net.hpp"

using namespace ringlab::net;

namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

// A numeric address the test names; it must parse.
Endpoint endpoint(const char* host, uint16_t port) {
  auto parsed = Endpoint::parse(host, port);
  REQUIRE(parsed);
  return *parsed;
}

// The int value of a socket option; reading it must succeed.
int int_option(const Fd& fd, int level, int name) {
  int value = 0;
  socklen_t len = sizeof(value);
  REQUIRE(::getsockopt(fd.get(), level, name, &value, &len) == 0);
  return value;
}

}  // namespace

TEST_CASE("Fd closes its descriptor on destruction and on reset") {
  int raw = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(raw >= 0);
  {
    Fd fd(raw);
    CHECK(fd.valid());
    CHECK(is_open(raw));
  }
  CHECK_FALSE(is_open(raw));

  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  raw = fd.get();
  fd.reset();
  CHECK_FALSE(fd.valid());
  CHECK_FALSE(is_open(raw));
  fd.reset();  // twice is harmless
}

TEST_CASE("Fd moves ownership and release() gives it up") {
  Fd a(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int raw = a.get();
  Fd b(std::move(a));
  CHECK_FALSE(a.valid());
  CHECK(b.get() == raw);

  Fd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int replaced = c.get();
  c = std::move(b);
  CHECK(c.get() == raw);
  CHECK_FALSE(is_open(replaced));  // the descriptor c held before was closed

  const int released = c.release();
  CHECK(released == raw);
  CHECK_FALSE(c.valid());
  CHECK(is_open(raw));
  Fd owner(released);  // closes it
}

TEST_CASE("listen_tcp on port 0 listens on a free port, IPv4 and IPv6") {
  for (const char* host : {"127.0.0.1", "::1"}) {
    INFO(host);
    auto fd = listen_tcp(endpoint(host, 0));
    REQUIRE_MESSAGE(fd, (fd ? "" : fd.error().message()));
    CHECK(int_option(*fd, SOL_SOCKET, SO_ACCEPTCONN) == 1);
    auto local = Endpoint::local_of(fd->get());
    REQUIRE(local);
    CHECK(local->port() != 0);
  }
}

TEST_CASE("listen_tcp on a port in use without SO_REUSEPORT fails at bind with the peer named") {
  auto first = ringlab::net::testing::listen_loopback();
  auto second = listen_tcp(first.endpoint, ListenOptions{.backlog = 4, .reuse_port = false});
  REQUIRE_FALSE(second);
  CHECK(std::string(second.error().op) == "bind");
  CHECK(second.error().code == EADDRINUSE);
  CHECK(second.error().peer == first.endpoint.to_string());
}

TEST_CASE("listen_tcp with SO_REUSEPORT lets two listeners share a port") {
  auto first = listen_tcp(endpoint("127.0.0.1", 0));
  REQUIRE(first);
  auto local = Endpoint::local_of(first->get());
  REQUIRE(local);
  auto second = listen_tcp(*local);
  CHECK_MESSAGE(second, (second ? "" : second.error().message()));
}

TEST_CASE("tcp_socket_for opens a socket of the peer's family with TCP_NODELAY") {
  for (const char* host : {"127.0.0.1", "::1"}) {
    INFO(host);
    const Endpoint peer = endpoint(host, 80);
    auto fd = tcp_socket_for(peer);
    REQUIRE(fd);
    CHECK(int_option(*fd, SOL_SOCKET, SO_DOMAIN) == peer.family());
    CHECK(int_option(*fd, IPPROTO_TCP, TCP_NODELAY) == 1);
  }
}

TEST_CASE("set_nodelay on something that is not a socket reports the setsockopt") {
  auto status = set_nodelay(-1);
  REQUIRE_FALSE(status);
  CHECK(std::string(status.error().op).find("setsockopt") == 0);
  CHECK(status.error().code == EBADF);
}
