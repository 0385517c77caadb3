// What a strategy keeps per connection while its connections wait (Strategy::held_memory), against the
// real server: presized keeps a padded buffer of the largest body seen per connection, provided_buffers'
// many-in-flight form keeps no body (its share of the one ring and of one set of models only).
#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "../support/generated_bodies.hpp"
#include "../support/net.hpp"
#include "fixtures.hpp"
#include "ringlab/json/profiles.hpp"
#include "ringlab/json/models.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies::testing {
namespace {

constexpr std::size_t kRecords = 5000;

// Bytes of the body the server sends for `records` weather records.
std::size_t weather_body_bytes(std::size_t records) {
  return ringlab::testing::generated_body(Payload::weather, records).size();
}

// `name`'s many-in-flight strategy set up for `n` connections to `port`, then `rounds` rounds (setup
// made one verified round already): what it holds afterwards, the connections idle.
HeldMemory held_after_rounds(std::string_view name, uint16_t port, std::size_t n, std::size_t records, int rounds,
                             Payload payload = Payload::weather, RingGeometry ring = {}) {
  const Descriptor* descriptor = find(name);
  REQUIRE(descriptor != nullptr);
  REQUIRE(static_cast<bool>(descriptor->make_inflight));
  std::unique_ptr<Strategy> strategy = descriptor->make_inflight();
  CaseConfig config = case_at(port, records, n, payload);
  config.ring = ring;
  const auto set_up = strategy->setup(config);
  REQUIRE_MESSAGE(set_up.has_value(), (set_up ? "" : set_up.error().message));
  for (int i = 0; i < rounds; ++i) {
    const auto outcome = strategy->run(nullptr, i % 2 == 0 ? Check::consume : Check::verify);
    REQUIRE_MESSAGE(outcome.has_value(), (outcome ? "" : outcome.error().message));
  }
  const HeldMemory held = strategy->held_memory();
  strategy->teardown();
  return held;
}

bool provided_rings_available() {
  auto ring = net::Ring::create();
  REQUIRE(ring.has_value());
  return net::testing::has_provided_buffer_ring(**ring);
}

}  // namespace

TEST_CASE("presized holds a body's size per idle connection, provided_buffers less and no body" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  if (!provided_rings_available()) return;
  ServerProcess server;
  const std::size_t body = weather_body_bytes(kRecords);
  constexpr std::size_t kConnections = 8;

  const HeldMemory presized = held_after_rounds("presized", server.port(), kConnections, kRecords, 2);
  CHECK(presized.connections == kConnections);
  // Each connection's padded buffer kept the body's Content-Length (and its padding).
  CHECK(presized.body_bytes >= kConnections * body);
  CHECK(presized.model_bytes >= kConnections * kRecords * sizeof(json::WeatherForecast));
  CHECK(presized.per_connection() >= static_cast<double>(body));

  const HeldMemory provided = held_after_rounds("provided_buffers", server.port(), kConnections, kRecords, 2);
  INFO("presized " << presized.per_connection() << " B/connection, provided_buffers " << provided.per_connection());
  CHECK(provided.connections == kConnections);
  CHECK(provided.body_bytes == 0);  // every body freed after its parse
  // One set of models for the N connections, and the one ring (its buffers counted once).
  CHECK(provided.model_bytes >= kRecords * sizeof(json::WeatherForecast));
  CHECK(provided.model_bytes < presized.model_bytes);
  CHECK(provided.receive_bytes > 0);
  CHECK(provided.per_connection() < presized.per_connection());
}

TEST_CASE("provided_incremental holds its ring, provided_buffers' bytes in fewer, larger buffers, and no body" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  auto ring = net::Ring::create();
  REQUIRE(ring.has_value());
  if (!net::testing::has_incremental_rings(**ring)) return;
  ServerProcess server;
  constexpr std::size_t kConnections = 8;
  const HeldMemory provided = held_after_rounds("provided_buffers", server.port(), kConnections, kRecords, 2);
  const HeldMemory incremental = held_after_rounds("provided_incremental", server.port(), kConnections, kRecords, 2);
  // 16 buffers of 256 KiB (registry.cpp): the 4 MiB of provided_buffers' 64 x 64 KiB, counted once, and
  // the page of entries the kernel reads them from (provided_buffers' 64 entries fit one page too).
  constexpr std::size_t kEntriesPage = 4096;
  CHECK(incremental.receive_bytes == std::size_t{16} * 256 * 1024 + kEntriesPage);
  CHECK(incremental.receive_bytes == provided.receive_bytes);
  CHECK(incremental.connections == kConnections);
  CHECK(incremental.body_bytes > 0);  // the carries: a few records each, reserved from the first body
  CHECK(incremental.body_bytes < kConnections * 4096);

  // A case may ask for another ring (bench --ring-buffers, --ring-buffer-bytes), field by field.
  const HeldMemory asked = held_after_rounds("provided_incremental", server.port(), kConnections, kRecords, 1,
                                             Payload::weather, RingGeometry{.buffers = 64, .buffer_bytes = 65536});
  CHECK(asked.receive_bytes == std::size_t{64} * 65536 + kEntriesPage);
  const HeldMemory count_only = held_after_rounds("provided_buffers", server.port(), kConnections, kRecords, 1,
                                                  Payload::weather, RingGeometry{.buffers = 16});
  CHECK(count_only.receive_bytes == std::size_t{16} * 65536 + kEntriesPage);

  // A ring for each connection (provided_incremental_own): 2 buffers of 1 MiB / N each (128 KiB at 8
  // connections) and a page of entries, per connection; at 256 connections a page a buffer.
  const HeldMemory own = held_after_rounds("provided_incremental_own", server.port(), kConnections, kRecords, 2);
  CHECK(own.connections == kConnections);
  CHECK(own.receive_bytes == kConnections * (std::size_t{2} * 128 * 1024 + kEntriesPage));
  CHECK(own.body_bytes < kConnections * 4096);  // the carries, kept for a cut it cannot keep in place
  const HeldMemory own_many = held_after_rounds("provided_incremental_own", server.port(), 256, 10, 1);
  CHECK(own_many.receive_bytes == std::size_t{256} * (2 * 4096 + kEntriesPage));
}

TEST_CASE("the held memory grows with the body seen: presized after a small body holds less than after a large") {
  ServerProcess server;
  const HeldMemory small = held_after_rounds("presized", server.port(), 4, 10, 1);
  const HeldMemory large = held_after_rounds("presized", server.port(), 4, kRecords, 1);
  CHECK(small.body_bytes >= 4 * weather_body_bytes(10));
  CHECK(small.body_bytes < 4 * weather_body_bytes(kRecords));
  CHECK(large.per_connection() > small.per_connection());
}

TEST_CASE("a strategy that is not set up, or does not say, reports no connections and no bytes") {
  std::unique_ptr<Strategy> unset = find("presized")->make_inflight();
  const HeldMemory before = unset->held_memory();
  CHECK(before.connections == 0);
  CHECK(before.per_connection() == 0.0);  // not reported: no division by zero connections

  // After a setup that failed (a server that never answers): held for the case's N connections, and no
  // body, since none arrived.
  CannedServer stalled("", /*close_after=*/false, /*stall=*/true);
  CaseConfig config;
  config.port = stalled.port();
  config.inflight = 4;
  config.timeout = std::chrono::milliseconds(300);
  std::unique_ptr<Strategy> failed = find("presized")->make_inflight();
  REQUIRE_FALSE(failed->setup(config).has_value());
  const HeldMemory after_failure = failed->held_memory();
  CHECK(after_failure.connections == 4);
  CHECK(after_failure.body_bytes == 0);

  // A row without a report of its own (a client library) says nothing rather than zero bytes.
  const Descriptor* library = find("libcurl");
  REQUIRE(library != nullptr);
  CHECK(library->make()->held_memory().connections == 0);
}

}  // namespace ringlab::strategies::testing

namespace ringlab::strategies::testing {

// Every payload's record vector counts in the models held: jos's too (its vector was once left out).
TEST_CASE("the models held count the record vector of every payload, jos's included") {
  ServerProcess server;
  constexpr std::size_t kConnections = 4;
  constexpr std::size_t kProfileRecords = 1000;
  const HeldMemory presized = held_after_rounds("presized", server.port(), kConnections, kProfileRecords, 2, Payload::profiles);
  const HeldMemory views = held_after_rounds("views", server.port(), kConnections, kProfileRecords, 2, Payload::profiles);
  INFO("presized models " << presized.model_bytes << " B, views models " << views.model_bytes << " B");
  CHECK(presized.model_bytes >= kConnections * kProfileRecords * sizeof(json::ProfileStars));
  CHECK(views.model_bytes >= kConnections * kProfileRecords * sizeof(json::ProfileStarsView));
}

}  // namespace ringlab::strategies::testing
