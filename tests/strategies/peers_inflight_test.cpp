// The peers with N requests in flight besides epoll (their rows' Descriptor::make_inflight):
// libcurl_multi (N easy handles in one multi, strategies/src/libcurl_multi.cpp) and blocking_sockets (N
// worker threads, a blocking connection each, strategies/src/blocking_inflight.cpp). Against the real
// server binary on loopback at N = 1, 4 and 64, every round's N responses carry the generator's records
// (each connection's checksum verified), the consumption is the N one-request folds folded in connection
// order, and the connections stay alive across rounds; blocking_sockets' workers report their CPU time,
// which grows with the rounds. Against raw-socket servers that stall or cut a response short, a round
// fails within its deadline with an error that names the case and a connection, and the next round tries
// again; against one that closes after each response, every round opens its connections again.
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

constexpr std::string_view kPeers[] = {"libcurl_multi", "blocking_sockets"};

uint64_t worker_cpu_ns(const IoCounters& counters) { return counters.worker_user_ns + counters.worker_system_ns; }

TEST_CASE("N requests in flight against the real server: the generator's records on every connection") {
  ServerProcess server;
  for (const std::string_view name : kPeers) {
    const bool workers = name == "blocking_sockets";
    serves_generator_records(
        name, server,
        /*counts_syscalls=*/workers,  // libcurl's are its own, unseen
        [&](const InflightCase& c, const IoCounters& before, const IoCounters& after) {
          if (workers) {
            // Per connection at least one send and one recv, made on its worker.
            CHECK(after.syscalls - before.syscalls >= 2 * c.inflight);
          } else {
            CHECK(after.worker_user_ns == 0);  // no threads of its own
            CHECK(after.worker_system_ns == 0);
          }
        });
  }
}

TEST_CASE("blocking_sockets' workers report their CPU time and page faults, and it grows with the rounds") {
  ServerProcess server;
  CaseConfig config = case_at(server.port(), 1000, 4);
  auto strategy = make_inflight("blocking_sockets");
  REQUIRE(strategy->setup(config).has_value());
  const IoCounters before = strategy->io_counters();
  CHECK(worker_cpu_ns(before) > 0);  // setup's round ran on the workers
  CHECK(before.worker_minor_faults > 0);  // the workers touched their stacks and bodies at least
  for (int round = 0; round < 20; ++round) REQUIRE(strategy->run(nullptr, Check::consume).has_value());
  const IoCounters after = strategy->io_counters();
  // 80 responses of 1,000 records parsed on the workers: far more than a clock tick of CPU in all.
  CHECK(worker_cpu_ns(after) > worker_cpu_ns(before));
  CHECK(after.worker_minor_faults >= before.worker_minor_faults);
  strategy->teardown();
  // Torn down (each worker closed its connection, then was joined), the workers' counters stay: bench may
  // read them after the case.
  CHECK(worker_cpu_ns(strategy->io_counters()) >= worker_cpu_ns(after));
}

TEST_CASE("a timed round stamps its phases in order") {
  ServerProcess server;
  for (const std::string_view name : kPeers) stamps_phases_in_order(name, server, /*drops_connections=*/false);
}

TEST_CASE("a server that never answers: the deadline fails the round, naming a connection") {
  for (const std::string_view name : kPeers) {
    INFO(name);
    CannedServer server("", false, true);
    const auto started = std::chrono::steady_clock::now();
    fails_every_round(name, bad_server_case(server.port()),
        says(std::string(name) + " weather 3 x4: connection ", {" of 4: "}, /*timed_out=*/true));
    // Three rounds of one 200 ms deadline each (the N requests wait at once), not a hang.
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
  }
}

TEST_CASE("a server that closes mid-response: an error naming the connection") {
  const std::string cut = truncated_response();
  for (const std::string_view name : kPeers) {
    INFO(name);
    CannedServer server(cut);
    const auto started = std::chrono::steady_clock::now();
    fails_every_round(name, bad_server_case(server.port()), [name](const std::string& message) {
      INFO(message);
      CHECK(message.starts_with(std::string(name) + " weather 3 x4: connection "));
      CHECK(message.find(" of 4: ") != std::string::npos);
      // ringlab's receiver says "truncated"; libcurl, that bytes were left to read.
      CHECK((message.find("truncated") != std::string::npos || message.find("remaining") != std::string::npos));
    });
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(3));
  }
}

TEST_CASE("responses with Connection: close: each closes its connection, and the next round opens it again") {
  for (const std::string_view name : kPeers) {
    INFO(name);
    reopens_after_each_close(name);
  }
}

TEST_CASE("refused: no request in flight, and run() before setup(); destroyed without teardown, no hang") {
  for (const std::string_view name : kPeers) {
    INFO(name);
    refuses_early_run_and_no_request_in_flight(name);
  }
  ServerProcess server;
  CaseConfig config;
  config.port = server.port();
  config.inflight = 4;
  for (const std::string_view name : kPeers) {
    auto strategy = make_inflight(name);
    REQUIRE(strategy->setup(config).has_value());
    // The destructor tears down (blocking_sockets: every worker's connection on its thread, then joins).
  }
}

}  // namespace
}  // namespace ringlab::strategies::testing
