// The epoll peer with N requests in flight (the epoll row's Descriptor::make_inflight,
// strategies/src/epoll_inflight.cpp): against the real server binary on loopback at N = 1, 4 and 64, every
// round's N responses carry the generator's records, the consumption is the same at every op, the system
// calls are counted and the connections stay alive; against raw-socket servers that stall, answer one
// connection only, cut a response short or close after each response, a round fails with an error that
// names the case, the connection or the count of missing responses, and the next round opens every
// connection again.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "fixtures.hpp"
#include "inflight_fixtures.hpp"
#include "../support/generated_bodies.hpp"

namespace ringlab::strategies::testing {
namespace {

struct Case {
  std::size_t inflight;
  Payload payload;
  std::size_t count;
  ServerMode mode = ServerMode::cached;
};

TEST_CASE("N requests in flight against the real server: the generator's records on every connection") {
  ServerProcess server;
  const Case cases[] = {
      {1, Payload::weather, 10},
      {4, Payload::weather, 1000},
      {4, Payload::github, 10},
      {4, Payload::weather, 1000, ServerMode::seed},  // chunked bodies, serialized per request
      {64, Payload::weather, 10},
      {64, Payload::repos, 10},
  };
  constexpr unsigned kRounds = 3;
  for (const Case& c : cases) {
    CaseConfig config;
    config.port = server.port();
    config.payload = c.payload;
    config.count = c.count;
    config.server_mode = c.mode;
    config.inflight = c.inflight;
    INFO(c.inflight << " in flight, " << payload_name(c.payload) << " " << c.count << ", "
                    << server_mode_name(c.mode));
    auto strategy = make_inflight("epoll");
    auto set = strategy->setup(config);
    REQUIRE_MESSAGE(set.has_value(), (set ? "" : set.error().message));
    const IoCounters after_setup = strategy->io_counters();
    CHECK(after_setup.counts_syscalls);
    CHECK(after_setup.connections_opened == c.inflight);  // setup's verified round opened them all

    const uint64_t expected_consumed = folded(one_request_consumed("epoll", config), c.inflight);
    const uint64_t expected_checksum = ringlab::testing::generated_checksum(c.payload, c.count);
    for (unsigned round = 0; round < kRounds; ++round) {
      for (const Check check : {Check::consume, Check::verify}) {
        const uint64_t syscalls_before = strategy->io_counters().syscalls;
        auto ran = strategy->run(nullptr, check);
        REQUIRE_MESSAGE(ran.has_value(), (ran ? "" : ran.error().message));
        CHECK(ran->consumed == expected_consumed);
        CHECK(ran->checksum == (check == Check::verify ? expected_checksum : 0));
        // Per connection at least one send and one recv, and at least one epoll_wait for the round.
        CHECK(strategy->io_counters().syscalls - syscalls_before >= 2 * c.inflight + 1);
      }
    }
    // Kept alive: no round after setup opened a connection.
    CHECK(strategy->io_counters().connections_opened == c.inflight);
    strategy->teardown();
  }
}

TEST_CASE("a timed round stamps its phases in order; connected only when the round opened connections") {
  ServerProcess server;
  CaseConfig config;
  config.port = server.port();
  config.count = 100;
  config.inflight = 8;
  config.ticks = &steady_ticks;
  auto strategy = make_inflight("epoll");
  REQUIRE(strategy->setup(config).has_value());
  for (const bool reconnect : {false, true}) {
    INFO("connections dropped before the round: " << reconnect);
    if (reconnect) strategy->drop_connection();
    const uint64_t opened = strategy->io_counters().connections_opened;
    http::Timeline t;
    auto ran = strategy->run(&t, Check::consume);
    REQUIRE_MESSAGE(ran.has_value(), (ran ? "" : ran.error().message));
    CHECK(strategy->io_counters().connections_opened == opened + (reconnect ? 8 : 0));
    CHECK(t.start != 0);
    CHECK((t.connected != 0) == reconnect);
    if (reconnect) {
      CHECK(t.start <= t.connected);
      CHECK(t.connected <= t.request_sent);
    }
    CHECK(t.start <= t.request_sent);
    CHECK(t.request_sent <= t.body_done);  // every response is complete after every request went out
    CHECK(t.first_byte != 0);
    CHECK(t.first_byte <= t.head_parsed);
    CHECK(t.head_parsed <= t.body_done);
    CHECK(t.body_done <= t.deserialized);
  }
  strategy->teardown();
}

TEST_CASE("a server that never answers: the deadline fails the round, naming how many responses are missing") {
  CannedServer server("", false, true);
  const auto started = std::chrono::steady_clock::now();
  fails_every_round("epoll", bad_server_case(server.port()), [](const std::string& message) {
    INFO(message);
    CHECK(message.starts_with("epoll weather 3 x4: "));
    CHECK(message.find("4 of 4 responses missing") != std::string::npos);
    CHECK(says_timeout(message));
  });
  // Three rounds of one 200 ms deadline each, not a hang.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
}

TEST_CASE("a server that answers one connection only: the other three responses are counted missing") {
  // The canned server serves one connection at a time and keeps it: the three others are accepted by the
  // kernel, then never read.
  CannedServer server(weather_response(3), false);
  fails_every_round("epoll", bad_server_case(server.port()), [](const std::string& message) {
    INFO(message);
    CHECK(message.starts_with("epoll weather 3 x4: 3 of 4 responses missing"));
    CHECK(says_timeout(message));
  });
}

TEST_CASE("a server that closes mid-response: an error naming the connection and the truncation") {
  const std::string body = ringlab::testing::generated_body(Payload::weather, 3);
  const std::string cut = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                          body.substr(0, body.size() / 2);
  CannedServer server(cut);
  fails_every_round("epoll", bad_server_case(server.port()), [](const std::string& message) {
    INFO(message);
    CHECK(message.starts_with("epoll weather 3 x4: connection "));
    CHECK(message.find(" of 4: truncated ") != std::string::npos);
  });
}

TEST_CASE("a status other than 200 on a connection is an error naming it") {
  const std::string error = R"({"error":"boom"})";
  CannedServer server("HTTP/1.1 500 Internal Server Error\r\nContent-Length: " + std::to_string(error.size()) +
                      "\r\nConnection: close\r\n\r\n" + error);
  fails_every_round("epoll", bad_server_case(server.port()), [](const std::string& message) {
    INFO(message);
    CHECK(message.starts_with("epoll weather 3 x4: connection "));
    CHECK(message.find(" of 4: status 500 from 127.0.0.1:") != std::string::npos);
  });
}

TEST_CASE("responses with Connection: close: each closes its connection, and the next round opens it again") {
  reopens_after_each_close("epoll");
}

TEST_CASE("refused: no request in flight, and run() before setup()") {
  refuses_early_run_and_no_request_in_flight("epoll");
}

}  // namespace
}  // namespace ringlab::strategies::testing
