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

TEST_CASE("N requests in flight against the real server: the generator's records on every connection") {
  ServerProcess server;
  serves_generator_records(
      "epoll", server,
      /*counts_syscalls=*/true,
      [](const InflightCase& c, const IoCounters& before, const IoCounters& after) {
        // Per connection at least one send and one recv, and at least one epoll_wait for the round.
        CHECK(after.syscalls - before.syscalls >= 2 * c.inflight + 1);
      });
}

TEST_CASE("a timed round stamps its phases in order; connected only when the round opened connections") {
  ServerProcess server;
  stamps_phases_in_order("epoll", server, /*drops_connections=*/true);
}

TEST_CASE("a server that never answers: the deadline fails the round, naming how many responses are missing") {
  CannedServer server("", false, true);
  const auto started = std::chrono::steady_clock::now();
  fails_every_round("epoll", bad_server_case(server.port()),
      says("epoll weather 3 x4: ", {"4 of 4 responses missing"}, /*timed_out=*/true));
  // Three rounds of one 200 ms deadline each, not a hang.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
}

TEST_CASE("a server that answers one connection only: the other three responses are counted missing") {
  // The canned server serves one connection at a time and keeps it: the three others are accepted by the
  // kernel, then never read.
  CannedServer server(weather_response(3), false);
  fails_every_round("epoll", bad_server_case(server.port()),
      says("epoll weather 3 x4: 3 of 4 responses missing", {}, /*timed_out=*/true));
}

TEST_CASE("a server that closes mid-response: an error naming the connection and the truncation") {
  CannedServer server(truncated_response());
  fails_every_round("epoll", bad_server_case(server.port()),
      says("epoll weather 3 x4: connection ", {" of 4: truncated "}));
}

TEST_CASE("a status other than 200 on a connection is an error naming it") {
  CannedServer server(error_status_response());
  fails_every_round("epoll", bad_server_case(server.port()),
      says("epoll weather 3 x4: connection ", {" of 4: status 500 from 127.0.0.1:"}));
}

TEST_CASE("responses with Connection: close: each closes its connection, and the next round opens it again") {
  reopens_after_each_close("epoll");
}

TEST_CASE("refused: no request in flight, and run() before setup()") {
  refuses_early_run_and_no_request_in_flight("epoll");
}

}  // namespace
}  // namespace ringlab::strategies::testing
