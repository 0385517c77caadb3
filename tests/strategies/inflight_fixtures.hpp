#pragma once
// What the tests of the strategies with N requests in flight share (epoll_inflight_test, beast_inflight_test,
// peers_inflight_test, inflight_test): a row's many-in-flight strategy, the fold a round of N must give (the
// row's one-request fold, folded N times in connection order by common.hpp's fold_connection, which every
// such strategy uses), a tick source for the timeline, the raw-socket servers' canned answer and case, and
// the checks every such row passes the same way: a bad server fails every round, Connection: close
// reopens every connection, an early run() and no request in flight are refused.
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

// Row `name`'s setup round against `config` fails with an error `check` accepts; so does each of two
// rounds after it, and each opens every connection again.
template <class Expect>
void fails_every_round(std::string_view name, const CaseConfig& config, Expect&& check) {
  auto strategy = make_inflight(name);
  auto set = strategy->setup(config);
  REQUIRE_FALSE(set);
  check(set.error().message);
  for (int round = 0; round < 2; ++round) {
    const uint64_t opened = strategy->io_counters().connections_opened;
    auto ran = strategy->run(nullptr, Check::verify);
    REQUIRE_FALSE(ran);
    check(ran.error().message);
    CHECK(strategy->io_counters().connections_opened == opened + config.inflight);
  }
  strategy->teardown();
}

// A server that answers each connection once with Connection: close, then closes it: setup's round and
// two more all verify, and each round opens every connection again.
inline void reopens_after_each_close(std::string_view name) {
  CannedServer server(weather_response(3, "Connection: close\r\n"));
  CaseConfig config = bad_server_case(server.port());
  config.timeout = std::chrono::seconds(5);
  auto strategy = make_inflight(name);
  auto set = strategy->setup(config);
  REQUIRE_MESSAGE(set.has_value(), (set ? "" : set.error().message));
  for (int round = 0; round < 2; ++round) {
    const uint64_t opened = strategy->io_counters().connections_opened;
    auto ran = strategy->run(nullptr, Check::verify);
    REQUIRE_MESSAGE(ran.has_value(), (ran ? "" : ran.error().message));
    CHECK(ran->checksum == ringlab::testing::generated_checksum(Payload::weather, 3));
    CHECK(strategy->io_counters().connections_opened == opened + 4);
  }
  strategy->teardown();
  CHECK(server.requests() == 12);  // setup's round and two more, four requests each
}

// run() before setup() is refused, and so is a case of no request in flight.
inline void refuses_early_run_and_no_request_in_flight(std::string_view name) {
  auto strategy = make_inflight(name);
  auto early = strategy->run(nullptr, Check::consume);
  REQUIRE_FALSE(early);
  CHECK(early.error().message.find("setup") != std::string::npos);
  CaseConfig config;
  config.port = 1;
  config.inflight = 0;
  auto set = strategy->setup(config);
  REQUIRE_FALSE(set);
  CHECK(set.error().message.find("inflight is 0") != std::string::npos);
}

}  // namespace ringlab::strategies::testing
