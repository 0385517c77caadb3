// The many-in-flight strategies of ringlab's own stack (strategies/src/inflight_recipe.hpp) against the
// real server: N connections, one request in flight on each, every body checksummed.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <string_view>

#include "common.hpp"
#include "fixtures.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies::testing {
namespace {

// The rows of ringlab's stack that run with N in flight, and one that does not (single_enter: one
// enter per request has no meaning for a round).
constexpr const char* kInflightRows[] = {"string_copy", "presized", "views"};

struct Rounds {
  uint64_t consumed = 0;
  IoCounters after_setup{};
  IoCounters after{};
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
  strategy->teardown();
  return out;
}

}  // namespace

TEST_CASE("N in flight: every body of every round is the generator's, on N kept-alive connections") {
  ServerProcess server;
  for (const std::size_t n : {std::size_t{1}, std::size_t{4}, std::size_t{16}}) {
    for (const std::size_t count : {std::size_t{10}, std::size_t{1000}}) {
      for (const char* name : kInflightRows) {
        INFO(name << " x" << n << " at " << count << " records");
        CaseConfig config;
        config.port = server.port();
        config.count = count;
        config.inflight = n;
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
  auto ring = net::Ring::create();
  REQUIRE(ring.has_value());
  if (!ringlab::testing::feature_available("buffer_rings", (*ring)->features().provided_buffer_ring,
                                           "the kernel has no provided-buffer rings")) {
    return;
  }
  ServerProcess server;
  for (const std::size_t n : {std::size_t{4}, std::size_t{64}}) {
    INFO("provided_buffers x" << n);
    CaseConfig config;
    config.port = server.port();
    config.count = 1000;
    config.inflight = n;
    const Rounds r = run_rounds("provided_buffers", config, 4);
    CHECK(r.after.connections_opened == n);
  }
}

TEST_CASE("rows that cannot run N in flight have no many-in-flight strategy") {
  for (const char* name : {"single_enter", "fresh_connection", "fixed_buffers", "streaming", "floor_parse"}) {
    INFO(name);
    const Descriptor* descriptor = find(name);
    REQUIRE(descriptor != nullptr);
    CHECK_FALSE(static_cast<bool>(descriptor->make_inflight));
  }
}

TEST_CASE("a server that never answers fails the round at the deadline, naming the case; another case runs on") {
  ServerProcess server;
  CaseConfig config;
  config.port = server.port();
  config.count = 10;
  config.inflight = 4;
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
