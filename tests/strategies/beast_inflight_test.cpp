// The beast peer with N requests in flight (the beast row's Descriptor::make_inflight,
// strategies/src/beast_inflight.cpp): against the real server binary on loopback at N = 1, 4 and 64, every
// round's N responses carry the generator's records on every connection, the consumption is the one-
// connection row's folded N times, the connections stay alive and what an idle connection holds is
// reported; against raw-socket servers that stall, cut a response short, answer with an error status or
// close after each response, a round fails with an error that names the case and a connection, within
// the deadline, and the next round connects every connection again.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "fixtures.hpp"
#include "inflight_fixtures.hpp"
#include "../support/generated_bodies.hpp"
#include "ringlab/json/models.hpp"

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
    auto strategy = make_inflight("beast");
    auto set = strategy->setup(config);
    REQUIRE_MESSAGE(set.has_value(), (set ? "" : set.error().message));
    CHECK_FALSE(strategy->io_counters().counts_syscalls);  // asio's, unseen
    CHECK(strategy->io_counters().connections_opened == c.inflight);  // setup's verified round opened them all

    const uint64_t expected_consumed = folded(one_request_consumed("beast", config), c.inflight);
    const uint64_t expected_checksum = ringlab::testing::generated_checksum(c.payload, c.count);
    for (unsigned round = 0; round < kRounds; ++round) {
      for (const Check check : {Check::consume, Check::verify}) {
        auto ran = strategy->run(nullptr, check);
        REQUIRE_MESSAGE(ran.has_value(), (ran ? "" : ran.error().message));
        CHECK(ran->consumed == expected_consumed);
        // Verified: every connection's records checksummed and equal to the generator's.
        CHECK(ran->checksum == (check == Check::verify ? expected_checksum : 0));
      }
    }
    // Kept alive: no round after setup opened a connection.
    CHECK(strategy->io_counters().connections_opened == c.inflight);
    strategy->teardown();
  }
}

TEST_CASE("what each idle connection holds: its flat_buffer, a padded body of the largest seen, its models") {
  ServerProcess server;
  constexpr std::size_t kConnections = 8;
  constexpr std::size_t kRecords = 1000;
  CaseConfig config;
  config.port = server.port();
  config.count = kRecords;
  config.inflight = kConnections;
  auto strategy = make_inflight("beast");
  REQUIRE(strategy->setup(config).has_value());
  REQUIRE(strategy->run(nullptr, Check::consume).has_value());
  const HeldMemory held = strategy->held_memory();
  strategy->teardown();
  const std::size_t body = ringlab::testing::generated_body(Payload::weather, kRecords).size();
  INFO(held.per_connection() << " B per connection: body " << held.body_bytes << ", models " << held.model_bytes
                             << ", receive " << held.receive_bytes);
  CHECK(held.connections == kConnections);
  CHECK(held.body_bytes >= kConnections * body);  // each padded copy kept its capacity
  CHECK(held.model_bytes >= kConnections * kRecords * sizeof(json::WeatherForecast));
  // Each connection's flat_buffer, kept with it: used as Beast's examples use it, it stays at 512 bytes.
  CHECK(held.receive_bytes == kConnections * 512);
}

TEST_CASE("a timed round stamps its phases in order; connected only when the round connected") {
  ServerProcess server;
  CaseConfig config;
  config.port = server.port();
  config.count = 100;
  config.inflight = 8;
  config.ticks = &steady_ticks;
  auto strategy = make_inflight("beast");
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
    CHECK(t.first_byte != 0);
    CHECK(t.first_byte <= t.head_parsed);
    CHECK(t.head_parsed <= t.body_done);
    CHECK(t.request_sent <= t.body_done);  // the last body is complete after the last request went out
    CHECK(t.body_done <= t.deserialized);
  }
  strategy->teardown();
}

// "beast weather 3 x4: connection K of 4: ..." for some K in 1..4.
bool names_a_connection(const std::string& message) {
  constexpr std::string_view kPrefix = "beast weather 3 x4: connection ";
  if (!message.starts_with(kPrefix) || message.size() < kPrefix.size() + 7) return false;
  const char k = message[kPrefix.size()];
  return k >= '1' && k <= '4' && message.substr(kPrefix.size() + 1, 6) == " of 4:";
}

TEST_CASE("a server that never answers: the deadline fails the round, naming a connection") {
  CannedServer server("", false, true);
  const auto started = std::chrono::steady_clock::now();
  fails_every_round("beast", bad_server_case(server.port()), [](const std::string& message) {
    INFO(message);
    CHECK(names_a_connection(message));
    CHECK(message.find(": beast read head 127.0.0.1:") != std::string::npos);
    CHECK(message.find("timeout") != std::string::npos);
  });
  // Three rounds of one 200 ms deadline each, not a hang.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
}

TEST_CASE("a server that answers one connection only: one of the three others fails at the deadline") {
  // The canned server serves one connection at a time and keeps it: the three others are accepted by the
  // kernel, then never read.
  CannedServer server(weather_response(3), false);
  const auto started = std::chrono::steady_clock::now();
  fails_every_round("beast", bad_server_case(server.port()), [](const std::string& message) {
    INFO(message);
    CHECK(names_a_connection(message));
    CHECK(message.find("timeout") != std::string::npos);
  });
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
}

TEST_CASE("a server that closes mid-response: an error naming the connection and the cut body") {
  const std::string body = ringlab::testing::generated_body(Payload::weather, 3);
  const std::string cut = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                          body.substr(0, body.size() / 2);
  CannedServer server(cut);
  // A long deadline: the three connections the server never reads must not hold the round to it.
  CaseConfig config = bad_server_case(server.port());
  config.timeout = std::chrono::seconds(2);
  const auto started = std::chrono::steady_clock::now();
  fails_every_round("beast", config, [](const std::string& message) {
    INFO(message);
    CHECK(names_a_connection(message));
    CHECK(message.find(": beast read body 127.0.0.1:") != std::string::npos);
    CHECK(message.find("the connection closed before the body was whole") != std::string::npos);
  });
  // The failed chain stopped the round: three rounds took less than one deadline.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
}

TEST_CASE("a status other than 200 on a connection is an error naming it") {
  const std::string error = R"({"error":"boom"})";
  CannedServer server("HTTP/1.1 500 Internal Server Error\r\nContent-Length: " + std::to_string(error.size()) +
                      "\r\nConnection: close\r\n\r\n" + error);
  fails_every_round("beast", bad_server_case(server.port()), [](const std::string& message) {
    INFO(message);
    CHECK(names_a_connection(message));
    CHECK(message.find(" of 4: status 500 for /weather?count=3") != std::string::npos);
  });
}

TEST_CASE("responses with Connection: close: each closes its connection, and the next round connects it again") {
  reopens_after_each_close("beast");
}

TEST_CASE("refused: no request in flight, and run() before setup()") {
  refuses_early_run_and_no_request_in_flight("beast");
}

}  // namespace
}  // namespace ringlab::strategies::testing
