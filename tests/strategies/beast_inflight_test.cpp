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

TEST_CASE("N requests in flight against the real server: the generator's records on every connection") {
  ServerProcess server;
  serves_generator_records(
      "beast", server,
      /*counts_syscalls=*/false,  // asio's, unseen
      [](const InflightCase&, const IoCounters&, const IoCounters&) {});
}

TEST_CASE("what each idle connection holds: its flat_buffer, a padded body of the largest seen, its models") {
  ServerProcess server;
  constexpr std::size_t kConnections = 8;
  constexpr std::size_t kRecords = 1000;
  CaseConfig config = case_at(server.port(), kRecords, kConnections);
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
  stamps_phases_in_order("beast", server, /*drops_connections=*/true);
}

// "beast weather 3 x4: connection K of 4: ..." for some K in 1..4, holding each of `parts`.
auto names_a_connection(std::vector<std::string> parts) {
  return [parts = std::move(parts)](const std::string& message) {
    INFO(message);
    constexpr std::string_view kPrefix = "beast weather 3 x4: connection ";
    REQUIRE(message.starts_with(kPrefix));
    REQUIRE(message.size() >= kPrefix.size() + 7);
    const char k = message[kPrefix.size()];
    CHECK((k >= '1' && k <= '4'));
    CHECK(message.substr(kPrefix.size() + 1, 6) == " of 4:");
    for (const std::string& part : parts) CHECK(message.find(part) != std::string::npos);
  };
}

TEST_CASE("a server that never answers: the deadline fails the round, naming a connection") {
  CannedServer server("", false, true);
  const auto started = std::chrono::steady_clock::now();
  fails_every_round("beast", bad_server_case(server.port()),
      names_a_connection({": beast read head 127.0.0.1:", "timeout"}));
  // Three rounds of one 200 ms deadline each, not a hang.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
}

TEST_CASE("a server that answers one connection only: one of the three others fails at the deadline") {
  // The canned server serves one connection at a time and keeps it: the three others are accepted by the
  // kernel, then never read.
  CannedServer server(weather_response(3), false);
  const auto started = std::chrono::steady_clock::now();
  fails_every_round("beast", bad_server_case(server.port()), names_a_connection({"timeout"}));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
}

TEST_CASE("a server that closes mid-response: an error naming the connection and the cut body") {
  CannedServer server(truncated_response());
  // A long deadline: the three connections the server never reads must not hold the round to it.
  CaseConfig config = bad_server_case(server.port());
  config.timeout = std::chrono::seconds(2);
  const auto started = std::chrono::steady_clock::now();
  fails_every_round("beast", config,
      names_a_connection({": beast read body 127.0.0.1:", "the connection closed before the body was whole"}));
  // The failed chain stopped the round: three rounds took less than one deadline.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
}

TEST_CASE("a status other than 200 on a connection is an error naming it") {
  CannedServer server(error_status_response());
  fails_every_round("beast", bad_server_case(server.port()),
      names_a_connection({" of 4: status 500 for /weather?count=3"}));
}

TEST_CASE("responses with Connection: close: each closes its connection, and the next round connects it again") {
  reopens_after_each_close("beast");
}

TEST_CASE("refused: no request in flight, and run() before setup()") {
  refuses_early_run_and_no_request_in_flight("beast");
}

}  // namespace
}  // namespace ringlab::strategies::testing
