#pragma once
// What the tests of the strategies with N requests in flight share (epoll_inflight_test, beast_inflight_test,
// peers_inflight_test, inflight_test): a row's many-in-flight strategy, the fold a round of N must give (the
// row's one-request fold, folded N times in connection order by common.hpp's fold_connection, which every
// such strategy uses), a tick source for the timeline, the raw-socket servers' canned answers and case, and
// the checks every such row passes the same way: the real server's records on every connection of every
// round, a timed round's phases in order, a bad server fails every round (with a message check built by
// says()), Connection: close reopens every connection, an early run() and no request in flight are refused.
// Test code only: every REQUIRE fails the calling test case.
#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common.hpp"
#include "fixtures.hpp"
#include "ringlab/net/ring.hpp"
#include "../support/generated_bodies.hpp"

namespace ringlab::strategies::testing {

// Whether this kernel's rings have the feature `member` of RingFeatures; where not, a named skip
// (feature_gate.hpp) and false.
inline bool ring_has(std::string_view name, bool net::RingFeatures::*member, std::string_view why) {
  auto ring = net::Ring::create();
  REQUIRE(ring.has_value());
  return ringlab::testing::feature_available(name, (*ring)->features().*member, why);
}

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

// A response that promises a body of 3 weather records and closes after half of it.
inline std::string truncated_response() {
  const std::string body = ringlab::testing::generated_body(Payload::weather, 3);
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
         body.substr(0, body.size() / 2);
}

// A 500 with a small JSON body, closing the connection after it.
inline std::string error_status_response() {
  const std::string error = R"({"error":"boom"})";
  return "HTTP/1.1 500 Internal Server Error\r\nContent-Length: " + std::to_string(error.size()) +
         "\r\nConnection: close\r\n\r\n" + error;
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

// One case of the real server's rounds: N in flight, a payload and count, the server's mode.
struct InflightCase {
  std::size_t inflight;
  Payload payload;
  std::size_t count;
  ServerMode mode = ServerMode::cached;
};

// The cases every many-in-flight row runs against the real server: one to 64 in flight, the three
// payloads, and the seed server's chunked bodies, serialized per request.
inline constexpr InflightCase kRealServerCases[] = {
    {1, Payload::weather, 10},
    {4, Payload::weather, 1000},
    {4, Payload::github, 10},
    {4, Payload::weather, 1000, ServerMode::seed},
    {64, Payload::weather, 10},
    {64, Payload::repos, 10},
};

// Row `name`'s many-in-flight strategy against the real server for each of kRealServerCases: setup's verified round
// opens the N connections; three rounds each timed and verified give the row's one-request fold folded N
// times and, verified, the generator's checksum; no round after setup opens a connection (kept alive).
// `counts_syscalls`: whether the row counts its system calls (IoCounters); `check_round(case, before,
// after)` checks a round's counters.
template <class CheckRound>
void serves_generator_records(std::string_view name, const ServerProcess& server, bool counts_syscalls,
                              CheckRound check_round) {
  constexpr unsigned kRounds = 3;
  for (const InflightCase& c : kRealServerCases) {
    CaseConfig config;
    config.port = server.port();
    config.payload = c.payload;
    config.count = c.count;
    config.server_mode = c.mode;
    config.inflight = c.inflight;
    INFO(name << ": " << c.inflight << " in flight, " << payload_name(c.payload) << " " << c.count << ", "
              << server_mode_name(c.mode));
    auto strategy = make_inflight(name);
    auto set = strategy->setup(config);
    REQUIRE_MESSAGE(set.has_value(), (set ? "" : set.error().message));
    CHECK(strategy->io_counters().connections_opened == c.inflight);  // setup's verified round opened them all
    CHECK(strategy->io_counters().counts_syscalls == counts_syscalls);

    const uint64_t expected_consumed = folded(one_request_consumed(name, config), c.inflight);
    const uint64_t expected_checksum = ringlab::testing::generated_checksum(c.payload, c.count);
    for (unsigned round = 0; round < kRounds; ++round) {
      for (const Check check : {Check::consume, Check::verify}) {
        const IoCounters before = strategy->io_counters();
        auto ran = strategy->run(nullptr, check);
        REQUIRE_MESSAGE(ran.has_value(), (ran ? "" : ran.error().message));
        CHECK(ran->consumed == expected_consumed);
        // Verified: every connection's records checksummed and equal to the generator's.
        CHECK(ran->checksum == (check == Check::verify ? expected_checksum : 0));
        check_round(c, before, strategy->io_counters());
      }
    }
    // Kept alive: no round after setup opened a connection.
    CHECK(strategy->io_counters().connections_opened == c.inflight);
    strategy->teardown();
  }
}

// A timed round of 8 in flight stamps its phases in order. With `drops_connections`, a second round
// after drop_connection() stamps `connected`, which a round on kept-alive connections leaves at 0.
inline void stamps_phases_in_order(std::string_view name, const ServerProcess& server, bool drops_connections) {
  CaseConfig config;
  config.port = server.port();
  config.count = 100;
  config.inflight = 8;
  config.ticks = &steady_ticks;
  auto strategy = make_inflight(name);
  REQUIRE(strategy->setup(config).has_value());
  for (const bool reconnect : {false, true}) {
    if (reconnect && !drops_connections) break;
    INFO(name << ": connections dropped before the round: " << reconnect);
    if (reconnect) strategy->drop_connection();
    const uint64_t opened = strategy->io_counters().connections_opened;
    http::Timeline t;
    auto ran = strategy->run(&t, Check::consume);
    REQUIRE_MESSAGE(ran.has_value(), (ran ? "" : ran.error().message));
    CHECK(t.start != 0);
    CHECK(t.first_byte != 0);
    CHECK(t.start <= t.first_byte);
    CHECK(t.first_byte <= t.head_parsed);
    CHECK(t.head_parsed <= t.body_done);
    CHECK(t.body_done <= t.deserialized);
    if (!drops_connections) continue;
    CHECK(strategy->io_counters().connections_opened == opened + (reconnect ? 8 : 0));
    CHECK((t.connected != 0) == reconnect);
    if (reconnect) {
      CHECK(t.start <= t.connected);
      CHECK(t.connected <= t.request_sent);
    }
    CHECK(t.start <= t.request_sent);
    CHECK(t.request_sent <= t.body_done);  // the last body is complete after the last request went out
  }
  strategy->teardown();
}

// A check of a failed round's message: it starts with `prefix` and holds each of `parts`; with
// `timed_out`, it says the deadline passed.
inline auto says(std::string prefix, std::vector<std::string> parts, bool timed_out = false) {
  return [prefix = std::move(prefix), parts = std::move(parts), timed_out](const std::string& message) {
    INFO(message);
    CHECK(message.starts_with(prefix));
    for (const std::string& part : parts) CHECK(message.find(part) != std::string::npos);
    if (timed_out) CHECK(says_timeout(message));
  };
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
