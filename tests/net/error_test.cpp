#include "ringlab/net/error.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <string>

using ringlab::net::Error;

TEST_CASE("Error::message names the operation, the peer, the description and the symbol") {
  const Error error{"connect", ECONNREFUSED, "127.0.0.1:8080"};
  CHECK(error.message() == "connect 127.0.0.1:8080: Connection refused (ECONNREFUSED)");
}

TEST_CASE("Error::message leaves the peer out when there is none") {
  const Error error{"io_uring_queue_init", ENOMEM, {}};
  CHECK(error.message() == "io_uring_queue_init: Cannot allocate memory (ENOMEM)");
}

TEST_CASE("Error::message survives an errno value nobody knows") {
  const Error error{"recv", 9999, {}};
  const std::string text = error.message();
  INFO(text);
  CHECK(text.find("recv: ") == 0);
  CHECK(text.find("(E?)") != std::string::npos);
}

TEST_CASE("fail() builds the error branch with op, code and peer") {
  ringlab::net::Result<int> result = ringlab::net::fail("send", EPIPE, "[::1]:80");
  REQUIRE_FALSE(result);
  CHECK(std::string(result.error().op) == "send");
  CHECK(result.error().code == EPIPE);
  CHECK(result.error().peer == "[::1]:80");
}
