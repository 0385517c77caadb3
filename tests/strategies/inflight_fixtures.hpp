#pragma once
// What the tests of the strategies with N requests in flight share (epoll_inflight_test, beast_inflight_test,
// peers_inflight_test, inflight_test): a row's many-in-flight strategy, the fold a round of N must give (the
// row's one-request fold, folded N times in connection order by common.hpp's fold_connection, which every
// such strategy uses), a tick source for the timeline, and the raw-socket servers' canned answer and case.
// Test code only: every REQUIRE fails the calling test case.
#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common.hpp"
#include "fixtures.hpp"
#include "../support/generated_bodies.hpp"

namespace ringlab::strategies::testing {

// Row `name`'s strategy for more than one request in flight (Descriptor::make_inflight).
inline std::unique_ptr<Strategy> make_inflight(std::string_view name) {
  const Descriptor* descriptor = find(name);
  REQUIRE(descriptor != nullptr);
  REQUIRE((descriptor->make_inflight != nullptr));
  auto strategy = descriptor->make_inflight();
  REQUIRE(strategy != nullptr);
  return strategy;
}

inline uint64_t steady_ticks() noexcept {
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

// One connection's consumption fold: row `name`'s one-request strategy's, for the same case.
inline uint64_t one_request_consumed(std::string_view name, const CaseConfig& config) {
  CaseConfig one = config;
  one.inflight = 1;
  std::unique_ptr<Strategy> strategy = find(name)->make();
  const auto set_up = strategy->setup(one);
  REQUIRE_MESSAGE(set_up.has_value(), (set_up ? "" : set_up.error().message));
  auto ran = strategy->run(nullptr, Check::consume);
  REQUIRE_MESSAGE(ran.has_value(), (ran ? "" : ran.error().message));
  strategy->teardown();
  return ran->consumed;
}

// The fold of a round whose N connections each fold `each`.
inline uint64_t folded(uint64_t each, std::size_t n) {
  uint64_t fold = 0;
  for (std::size_t i = 0; i < n; ++i) fold = detail::fold_connection(fold, each);
  return fold;
}

// A whole response of `count` weather records with Content-Length, for the raw-socket servers.
inline std::string weather_response(std::size_t count, std::string_view extra_headers = {}) {
  const std::string body = ringlab::testing::generated_body(Payload::weather, count);
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n" + std::string(extra_headers) + "\r\n" + body;
}

// A case of 3 weather records with 4 in flight and a short deadline, against `port`.
inline CaseConfig bad_server_case(uint16_t port) {
  CaseConfig config;
  config.port = port;
  config.count = 3;
  config.inflight = 4;
  config.timeout = std::chrono::milliseconds(200);
  return config;
}

inline bool says_timeout(const std::string& message) {
  return message.find("ETIMEDOUT") != std::string::npos || message.find("timed out") != std::string::npos;
}

}  // namespace ringlab::strategies::testing
