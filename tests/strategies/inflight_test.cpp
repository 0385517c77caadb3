// The many-in-flight strategies of ringlab's own stack (strategies/src/inflight_recipe.hpp, and the
// streaming rows' in streaming_sink.hpp) against the real server: N connections, one request in flight
// on each, every body checksummed, the round's fold that of one request's folded N times.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <string_view>

#include "../support/generated_bodies.hpp"
#include "common.hpp"
#include "fixtures.hpp"
#include "inflight_fixtures.hpp"
#include "ringlab/json/models.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies::testing {
namespace {

// The rows of ringlab's stack that run with N in flight, and one that does not (single_enter: one
// enter per request has no meaning for a round).
constexpr const char* kInflightRows[] = {"string_copy", "presized", "views"};

// The streaming rows: a streaming sink per connection.
constexpr const char* kStreamingRows[] = {"streaming", "streaming_array", "streaming_array_fresh"};

struct Rounds {
  uint64_t consumed = 0;
  IoCounters after_setup{};
  IoCounters after{};
  HeldMemory held{};  // after the last round, the connections idle
  std::string notes;
};

// Sets `name`'s many-in-flight strategy up for N connections, then runs verified and timed rounds.
Rounds run_rounds(std::string_view name, const CaseConfig& config, int rounds) {
  const Descriptor* descriptor = find(name);
  REQUIRE(descriptor != nullptr);
  REQUIRE_MESSAGE(static_cast<bool>(descriptor->make_inflight), std::string(name) << " has no many-in-flight strategy");
  std::unique_ptr<Strategy> strategy = descriptor->make_inflight();
  REQUIRE(strategy != nullptr);
  const auto set_up = strategy->setup(config);
  REQUIRE_MESSAGE(set_up.has_value(), (set_up ? "" : set_up.error().message));
  Rounds out;
  out.after_setup = strategy->io_counters();
  for (int i = 0; i < rounds; ++i) {
    const Check check = i % 2 == 0 ? Check::verify : Check::consume;
    auto outcome = strategy->run(nullptr, check);
    REQUIRE_MESSAGE(outcome.has_value(), (outcome ? "" : outcome.error().message));
    if (i == 0) out.consumed = outcome->consumed;
    CHECK(outcome->consumed == out.consumed);  // every round reads the same N bodies
    if (check == Check::verify) CHECK(outcome->checksum == detail::expected_checksum(config));
  }
  out.after = strategy->io_counters();
  out.held = strategy->held_memory();
  out.notes = strategy->notes();
  strategy->teardown();
  return out;
}

// `name` at N = 1, 4 and 64, 10 and 1,000 weather records: four rounds each (verified and timed in
// turn), every connection kept alive, the fold that of the row's one request folded N times; then
// `check_held` on what the strategy holds with its connections idle.
template <class CheckHeld>
void rounds_at_1_4_64(const ServerProcess& server, std::string_view name, CheckHeld check_held) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{4}, std::size_t{64}}) {
    for (const std::size_t count : {std::size_t{10}, std::size_t{1000}}) {
      INFO(name << " x" << n << " at " << count << " records");
      CaseConfig config = case_at(server.port(), count, n);
      const Rounds r = run_rounds(name, config, 4);
      CHECK(r.consumed == folded(one_request_consumed(name, config), n));
      CHECK(r.after_setup.connections_opened == n);
      CHECK(r.after.connections_opened == n);
      CHECK(r.after.sqes_submitted - r.after_setup.sqes_submitted >= 4 * 2 * n);
      CHECK(r.held.connections == n);
      CHECK(r.held.receive_bytes == n * 64 * 1024);  // the receivers' own head buffers (InflightOptions)
      check_held(r, n, count);
    }
  }
}

}  // namespace

TEST_CASE("N in flight: every body of every round is the generator's, on N kept-alive connections") {
  ServerProcess server;
  for (const std::size_t n : {std::size_t{1}, std::size_t{4}, std::size_t{16}}) {
    for (const std::size_t count : {std::size_t{10}, std::size_t{1000}}) {
      for (const char* name : kInflightRows) {
        INFO(name << " x" << n << " at " << count << " records");
        CaseConfig config = case_at(server.port(), count, n);
        const Rounds r = run_rounds(name, config, 6);
        // Kept alive: setup's connections serve every round.
        CHECK(r.after.connections_opened == n);
        CHECK(r.after_setup.connections_opened == n);
        // io_uring: N sends and N receives at least per round, in fewer enters than requests once
        // N > 1 (the sends of a round go to the kernel together).
        const uint64_t sqes = r.after.sqes_submitted - r.after_setup.sqes_submitted;
        const uint64_t enters = r.after.ring_enters - r.after_setup.ring_enters;
        CHECK(sqes >= 6 * 2 * n);
        CHECK(enters >= 6);
        if (n >= 16) CHECK(enters < 6 * 2 * n);
        CHECK(r.after.syscalls == r.after.ring_enters);
      }
    }
  }
}

TEST_CASE("N in flight on one shared provided-buffer ring" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  if (!ring_has("buffer_rings", &net::RingFeatures::provided_buffer_ring, "the kernel has no provided-buffer rings")) {
    return;
  }
  ServerProcess server;
  for (const std::size_t n : {std::size_t{4}, std::size_t{64}}) {
    INFO("provided_buffers x" << n);
    CaseConfig config = case_at(server.port(), 1000, n);
    const Rounds r = run_rounds("provided_buffers", config, 4);
    CHECK(r.after.connections_opened == n);
  }
}

TEST_CASE("N in flight on one shared provided-buffer ring, receiving bundles" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  if (!ring_has("buffer_rings", &net::RingFeatures::provided_buffer_ring, "the kernel has no provided-buffer rings") ||
      !ring_has("recv_bundle", &net::RingFeatures::recv_bundle, "the kernel has no bundle receives")) {
    return;
  }
  ServerProcess server;
  for (const std::size_t n : {std::size_t{4}, std::size_t{16}}) {
    INFO("provided_bundles x" << n);
    CaseConfig config = case_at(server.port(), 10'000, n);
    const Rounds r = run_rounds("provided_bundles", config, 4);
    CHECK(r.after.connections_opened == n);
  }
}

TEST_CASE("fixed_buffers: N in flight, each body by READ_FIXED into its connection's registered buffer" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  if (!ring_has("fixed_buffers", &net::RingFeatures::fixed_buffers, "the kernel has no registered buffers")) return;
  ServerProcess server;
  rounds_at_1_4_64(server, "fixed_buffers", [](const Rounds& r, std::size_t n, std::size_t count) {
    // One registered buffer per connection, the body's size rounded up to whole pages, counted as body.
    const std::size_t body = ringlab::testing::generated_body(Payload::weather, count).size();
    const std::size_t registered = (body + 4095) / 4096 * 4096;
    CHECK(r.held.body_bytes == n * registered);
    CHECK(r.held.model_bytes >= n * count * sizeof(json::WeatherForecast));
  });
}

TEST_CASE("the streaming rows: N in flight, each connection's records parsed by its own sink as its bytes arrive") {
  ServerProcess server;
  for (const char* name : kStreamingRows) {
    rounds_at_1_4_64(server, name, [&](const Rounds& r, std::size_t n, std::size_t count) {
      // A padded body per connection; its records' vectors (views or owning records).
      CHECK(r.held.body_bytes >= n * (ringlab::testing::generated_body(Payload::weather, count).size() / 2));
      CHECK(r.held.model_bytes > 0);
      CHECK(r.notes.find(" of " + std::to_string(n * count) + " records over " + std::to_string(n) + " connections") !=
            std::string::npos);
    });
  }
}

TEST_CASE("a streaming round whose bodies do not parse fails, naming the case and the connection") {
  // Every connection gets the same broken record (the server answers them one after another, closing
  // each after its answer): each sink fails on its own bytes.
  const std::string body = "{\"date\":\n";
  CannedServer broken("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  for (const char* name : kStreamingRows) {
    INFO(name);
    CaseConfig config = case_at(broken.port(), 10, 4);
    config.timeout = std::chrono::seconds(2);
    std::unique_ptr<Strategy> strategy = find(name)->make_inflight();
    const auto failed = strategy->setup(config);
    REQUIRE_FALSE(failed.has_value());
    INFO(failed.error().message);
    CHECK(failed.error().message.find(std::string(name) + " weather 10 x4") == 0);
    CHECK(failed.error().message.find("connection 1 of 4: ") != std::string::npos);
    CHECK(failed.error().message.find("(4 of 4 connections failed)") != std::string::npos);
  }
}

TEST_CASE("rows that cannot run N in flight have no many-in-flight strategy") {
  for (const char* name : {"single_enter", "fresh_connection", "pooled_string", "three_fields", "floor_parse"}) {
    INFO(name);
    const Descriptor* descriptor = find(name);
    REQUIRE(descriptor != nullptr);
    CHECK_FALSE(static_cast<bool>(descriptor->make_inflight));
  }
}

TEST_CASE("a server that never answers fails the round at the deadline, naming the case; another case runs on") {
  ServerProcess server;
  CaseConfig config = case_at(server.port(), 10, 4);
  config.timeout = std::chrono::milliseconds(500);
  std::unique_ptr<Strategy> strategy = find("presized")->make_inflight();
  REQUIRE(strategy->setup(config).has_value());
  CannedServer stalled("", /*close_after=*/false, /*stall=*/true);
  CaseConfig stalled_config = config;
  stalled_config.port = stalled.port();
  std::unique_ptr<Strategy> waiting = find("presized")->make_inflight();
  const auto failed = waiting->setup(stalled_config);
  REQUIRE_FALSE(failed.has_value());
  INFO(failed.error().message);
  CHECK(failed.error().message.find("presized weather 10 x4") == 0);
  CHECK(failed.error().message.find("of 4") != std::string::npos);
  // The good one still runs.
  CHECK(strategy->run(nullptr, Check::verify).has_value());
}

}  // namespace ringlab::strategies::testing
