#include "ringlab/net/endpoint.hpp"

#include <doctest/doctest.h>
#include <netinet/in.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "../support/net.hpp"

using ringlab::net::Endpoint;

TEST_CASE("Endpoint::parse accepts numeric IPv4, IPv6 and localhost") {
  struct Row {
    std::string_view host;
    uint16_t port;
    int family;
    const char* text;
  };
  const Row rows[] = {
      {"127.0.0.1", 8080, AF_INET, "127.0.0.1:8080"},
      {"0.0.0.0", 0, AF_INET, "0.0.0.0:0"},
      {"localhost", 1, AF_INET, "127.0.0.1:1"},
      {"::1", 80, AF_INET6, "[::1]:80"},
      {"[::1]", 443, AF_INET6, "[::1]:443"},
      {"::", 65535, AF_INET6, "[::]:65535"},
      {"::ffff:127.0.0.1", 9, AF_INET6, "[::ffff:127.0.0.1]:9"},
  };
  for (const Row& row : rows) {
    INFO("host ", row.host, " port ", row.port);
    auto endpoint = Endpoint::parse(row.host, row.port);
    REQUIRE(endpoint);
    CHECK(endpoint->family() == row.family);
    CHECK(endpoint->port() == row.port);
    CHECK(endpoint->to_string() == row.text);
    CHECK(endpoint->length == (row.family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6)));
  }
}

TEST_CASE("Endpoint::parse refuses names, malformed addresses and junk with EINVAL") {
  using namespace std::string_view_literals;
  const std::string_view rows[] = {
      ""sv,          "example.com"sv, "256.0.0.1"sv, "127.0.0.1 "sv, " 127.0.0.1"sv, "1.2.3"sv,
      "127.0.0.1:80"sv, "[::1"sv,     "::1]"sv,      "::g"sv,        "fe80::1%lo"sv, "127.0.0.1\0x"sv,
      "LOCALHOST"sv, "[]"sv,          std::string_view("0123456789012345678901234567890123456789012345678")};
  for (std::string_view host : rows) {
    INFO("host '", std::string(host), "'");
    auto endpoint = Endpoint::parse(host, 80);
    REQUIRE_FALSE(endpoint);
    CHECK(std::string(endpoint.error().op) == "resolve");
    CHECK(endpoint.error().code == EINVAL);
    CHECK(endpoint.error().message().find("resolve") == 0);
  }
}

TEST_CASE("Endpoint::local_of reports the port the kernel picked") {
  auto listener = ringlab::net::testing::listen_loopback();
  CHECK(listener.endpoint.port() != 0);
  CHECK(listener.endpoint.family() == AF_INET);
  CHECK(listener.endpoint.to_string().find("127.0.0.1:") == 0);
}

TEST_CASE("Endpoint::local_of on a bad descriptor is an error, not a zero address") {
  auto endpoint = Endpoint::local_of(-1);
  REQUIRE_FALSE(endpoint);
  CHECK(std::string(endpoint.error().op) == "getsockname");
  CHECK(endpoint.error().code == EBADF);
}

TEST_CASE("A default Endpoint has no address and says so") {
  const Endpoint endpoint;
  CHECK(endpoint.port() == 0);
  CHECK(endpoint.to_string() == "(no address)");
}
