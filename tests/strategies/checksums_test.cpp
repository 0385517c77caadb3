// Every registered strategy, against the real server binary, for every payload and sizes 0, 1, 10 and
// 1000 (and weather and jos in the seed server mode): its checksum equals the generator's ground truth and string_copy's (send_copy's for POST), on
// the first response (setup) and on every run after it. The strategies that need a kernel feature are
// covered by feature-gated cases (fixtures.hpp's strategies()): where the kernel lacks it, ctest shows
// the case as skipped, with the strategy's reason.
#include <doctest/doctest.h>

#include <array>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common.hpp"
#include "fixtures.hpp"
#include "ringlab/json/checksum.hpp"
#include "../support/feature_gate.hpp"
#include "../support/generated_bodies.hpp"
#include "../../bench/src/seeds/nikouu.hpp"

namespace ringlab::strategies::testing {
namespace {

constexpr unsigned kRuns = 3;

// What `descriptor`'s verified runs prove: the full records, or, for three_fields (jos's Version 8), the
// three fields it reads.
uint64_t ground_truth(const Descriptor& descriptor, Payload payload, std::size_t count) {
  if (descriptor.name == "three_fields") {
    return payload == Payload::repos ? json::checksum_repos_three_fields(count)
                                     : json::checksum_github_three_fields(count);
  }
  return ringlab::testing::generated_checksum(payload, count);
}

// The bodies every strategy reads: the four payloads at sizes 0, 1, 10 and 1000 from the server's cache, and
// weather and profiles at 10 and 1000 in the seed server mode (serialized per request and sent a chunk at a time
// as the server's 16 KiB serializer buffer reaches 90 %: 10 weather records are one chunk, 1000 records
// (77 KB) six; 1000 profile records 60). On /profiles every
// strategy reads jos's 3-field DTO, so its checksum is json::checksum_profiles and equals string_copy's.
struct Body {
  Payload payload;
  std::size_t count;
  ServerMode mode = ServerMode::cached;
  friend auto operator<=>(const Body&, const Body&) = default;
};

std::vector<Body> bodies() {
  std::vector<Body> out;
  for (const Payload payload : {Payload::weather, Payload::repos, Payload::github, Payload::profiles}) {
    for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{10}, std::size_t{1000}}) {
      out.push_back({payload, count});
    }
  }
  for (const Payload payload : {Payload::weather, Payload::profiles}) {
    out.push_back({payload, 10, ServerMode::seed});
    out.push_back({payload, 1000, ServerMode::seed});
  }
  return out;
}

// (method, body) -> the baseline's checksum
using Baselines = std::map<std::pair<Method, Body>, uint64_t>;

// The records of every body, read by each strategy of `group`, against the ground truth and, with
// `baselines`, against the baseline of the strategy's method.
void check_records(Needs group, Baselines* baselines) {
  ServerProcess server;
  for (const Descriptor* strategy : strategies(group)) {
    const Descriptor& descriptor = *strategy;
    // No records: the proxy and echo tests below.
    if (descriptor.method == Method::proxy || descriptor.method == Method::echo) continue;
    for (const Body& body : bodies()) {
      CaseConfig config;
      config.port = server.port();
      config.payload = body.payload;
      config.count = body.count;
      config.server_mode = body.mode;
      INFO("strategy " << descriptor.name << ", " << payload_name(body.payload) << ", " << body.count
                       << " records, server mode " << server_mode_name(body.mode));
      const Outcome outcome = run_strategy(descriptor, config, kRuns);
      if (outcome.skipped) continue;  // a payload it has no way to read (skip_case)
      REQUIRE_MESSAGE(!outcome.error, outcome.error.value_or(""));
      REQUIRE(outcome.checksums.size() == kRuns);
      for (const uint64_t checksum : outcome.checksums) {
        CHECK(checksum == ground_truth(descriptor, body.payload, body.count));
      }
      if (baselines == nullptr) continue;
      const auto key = std::make_pair(descriptor.method, body);
      if (descriptor.baseline) {
        (*baselines)[key] = outcome.checksums.front();
      } else if (descriptor.name != "three_fields") {  // proves three fields, not the baseline's 22
        REQUIRE_MESSAGE(baselines->contains(key), "the registry lists the baseline first");
        CHECK(outcome.checksums.front() == (*baselines)[key]);
      }
    }
  }
}

void check_fresh_connections(Needs group) {
  ServerProcess server;
  for (const Descriptor* strategy : strategies(group)) {
    const Descriptor& descriptor = *strategy;
    // The parse floors parse a body fetched once at setup: their runs make no request. A proxy op is N
    // requests.
    if (descriptor.name.starts_with("floor_parse") || descriptor.method == Method::proxy) continue;
    CaseConfig config;
    config.port = server.port();
    config.payload = Payload::github;  // the payload every GET and POST strategy reads
    config.count = 10;
    config.connection = Connection::fresh;
    INFO("strategy " << descriptor.name);
    const Outcome outcome = run_strategy(descriptor, config, kRuns);
    if (outcome.skipped) continue;  // a payload it has no way to read (skip_case)
    REQUIRE_MESSAGE(!outcome.error, outcome.error.value_or(""));
    const uint64_t expected = descriptor.method == Method::echo ? detail::echo_checksum(detail::kEchoBody)
                                                                : ground_truth(descriptor, Payload::github, 10);
    for (const uint64_t checksum : outcome.checksums) CHECK(checksum == expected);
    CHECK(outcome.counters.connections_opened - outcome.counters_after_setup.connections_opened == kRuns);
  }
}

TEST_CASE("a proxy op is N requests of /proxy, every one answered 200 with what its row says") {
  ServerProcess server;
  for (const Descriptor& descriptor : registry()) {
    if (descriptor.method != Method::proxy) continue;
    for (const std::size_t cycles : {std::size_t{1}, std::size_t{7}}) {
      CaseConfig config;
      config.port = server.port();
      config.count = cycles;
      INFO("strategy " << descriptor.name << ", " << cycles << " requests per op");
      const Outcome outcome = run_strategy(descriptor, config, kRuns);
      REQUIRE_MESSAGE(!outcome.error, outcome.error.value_or(""));
      REQUIRE(outcome.checksums.size() == kRuns);
      for (const uint64_t checksum : outcome.checksums) CHECK(checksum == cycles);
      // One kept-alive connection to the proxy, whatever the server does upstream.
      CHECK(outcome.counters.connections_opened == outcome.counters_after_setup.connections_opened);
      CHECK(outcome.notes.find("TIME_WAIT") != std::string::npos);
    }
  }
}

TEST_CASE("an echo op posts the 17-byte object and reads back exactly it, whatever the size") {
  ServerProcess server;
  const uint64_t expected = detail::echo_checksum(detail::kEchoBody);
  CHECK(detail::kEchoBody.size() == 17);
  CHECK(expected != detail::echo_checksum(R"({"lorem":"ipsuM"})"));
  CHECK(expected != detail::echo_checksum(std::string(detail::kEchoBody) + " "));
  int rows = 0;
  for (const Descriptor& descriptor : registry()) {
    if (descriptor.method != Method::echo) continue;
    ++rows;
    for (const std::size_t count : {std::size_t{1}, std::size_t{100}}) {
      CaseConfig config;
      config.port = server.port();
      config.count = count;
      INFO("strategy " << descriptor.name << ", size " << count);
      const Outcome outcome = run_strategy(descriptor, config, kRuns);
      REQUIRE_MESSAGE(!outcome.error, outcome.error.value_or(""));
      REQUIRE(outcome.checksums.size() == kRuns);
      for (const uint64_t checksum : outcome.checksums) CHECK(checksum == expected);
      const uint64_t opened = outcome.counters.connections_opened - outcome.counters_after_setup.connections_opened;
      if (descriptor.name == "cpprest_echo") {
        // The SDK hands a connection back to its pool from its own threads after the answer; a request
        // that starts before then opens another one (counted, and shown in connections/op).
        CHECK(opened <= kRuns);
      } else {
        CHECK(opened == (descriptor.name == "echo_fresh" ? kRuns : 0));
      }
    }
  }
  CHECK(rows == 8);  // echo, echo_fresh and the six client libraries' rows
}

void check_setup_again(Needs group) {
  ServerProcess server;
  for (const Descriptor* strategy_row : strategies(group)) {
    const Descriptor& descriptor = *strategy_row;
    // No records to set up for.
    if (descriptor.method == Method::proxy || descriptor.method == Method::echo) continue;
    INFO(descriptor.name);
    auto strategy = descriptor.make();
    CaseConfig config;
    config.port = server.port();
    config.count = 10;
    // Set up for the first payload it reads, then again for another size of github, which nearly every
    // GET strategy reads; one that does not (floor_parse_minimal: weather only) is set up again for
    // another size of its own payload.
    for (const Payload payload : {Payload::weather, Payload::repos, Payload::github, Payload::profiles}) {
      config.payload = payload;
      if (!strategy->skip_case(config)) break;
    }
    REQUIRE(strategy->setup(config));
    const Payload first = config.payload;
    config.payload = Payload::github;
    if (strategy->skip_case(config)) config.payload = first;
    config.count = 3;
    const auto again = strategy->setup(config);
    REQUIRE_MESSAGE(again, (again ? "" : again.error().message));
    const auto ran = strategy->run(nullptr, Check::verify);
    REQUIRE(ran);
    CHECK(ran->checksum == ground_truth(descriptor, config.payload, 3));
    strategy->teardown();
    strategy->teardown();
  }
}


// The checks above over the strategies of `group`, a subcase each. `baselines`: check_records'.
void check_group(Needs group, Baselines* baselines) {
  SUBCASE("the generator's records, for every payload, size and server mode") { check_records(group, baselines); }
  SUBCASE("with Connection::fresh, a connection per request, and still the records") {
    check_fresh_connections(group);
  }
  SUBCASE("setup() again starts over, and teardown() twice is harmless") { check_setup_again(group); }
}

TEST_CASE("every strategy reads the records, fresh or kept alive, and can be set up again") {
  Baselines baselines;
  check_group(Needs::nothing_of_the_kernel, &baselines);
}

TEST_CASE("every strategy that needs a kernel feature reads the records, fresh or kept alive, and can be set up "
          "again" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  // Held to the ground truth alone: the baselines need no kernel feature, and the plain case checked them
  // against it.
  check_group(Needs::a_kernel_feature, nullptr);
}

TEST_CASE("counters: ring strategies count io_uring_enter calls, peers their system calls") {
  ServerProcess server;
  CaseConfig config;
  config.port = server.port();
  config.count = 10;
  for (const char* name : {"presized", "blocking_sockets", "epoll"}) {
    INFO(std::string_view(name));
    const Descriptor* descriptor = find(name);
    REQUIRE(descriptor != nullptr);
    const Outcome outcome = run_strategy(*descriptor, config, 5);
    REQUIRE_MESSAGE(!outcome.error, outcome.error.value_or(""));
    // Kept alive: the connection of setup's first request serves the five runs.
    CHECK(outcome.counters.connections_opened == 1);
    CHECK(outcome.counters.syscalls >= outcome.counters_after_setup.syscalls + 5 * 2);
    if (std::string_view(name) == "presized") {
      CHECK(outcome.counters.ring_enters == outcome.counters.syscalls);
      CHECK(outcome.counters.sqes_submitted > outcome.counters_after_setup.sqes_submitted);
      CHECK(outcome.counters.cqes_reaped > outcome.counters_after_setup.cqes_reaped);
    }
  }
}

TEST_CASE("drop_connection: the next request opens a new connection, and reads the same records") {
  ServerProcess server;
  CaseConfig config;
  config.port = server.port();
  config.count = 10;
  // Not cpprest: its pool takes a connection back on the SDK's own thread after the body, so a request made
  // right after may find the pool empty and open another one; how many it opens is not fixed.
  for (const char* name : {"presized", "views", "blocking_sockets", "epoll", "libcurl", "libcurl_multi", "cpp_httplib",
                           "beast", "curlpp"}) {
    INFO(std::string_view(name));
    auto strategy = find(name)->make();
    REQUIRE(strategy->setup(config));
    const uint64_t opened = strategy->io_counters().connections_opened;
    REQUIRE(strategy->run(nullptr, Check::consume));
    CHECK(strategy->io_counters().connections_opened == opened);  // kept alive
    strategy->drop_connection();
    const auto again = strategy->run(nullptr, Check::verify);
    REQUIRE_MESSAGE(again, (again ? "" : again.error().message));
    CHECK(again->checksum == json::checksum_weather(10));
    // libcurl and the peers built on it keep their connection: libcurl checks a connection's liveness itself
    // before reusing it.
    const std::string_view peer(name);
    const bool keeps = peer == "libcurl" || peer == "libcurl_multi" || peer == "curlpp";
    const uint64_t expected = keeps ? opened : opened + 1;
    CHECK(strategy->io_counters().connections_opened == expected);
    strategy->teardown();
  }
}

TEST_CASE("fresh_connection opens a connection per request and reports TIME_WAIT sockets") {
  ServerProcess server;
  CaseConfig config;
  config.port = server.port();
  const Outcome outcome = run_strategy(*find("fresh_connection"), config, 4);
  REQUIRE_MESSAGE(!outcome.error, outcome.error.value_or(""));
  CHECK(outcome.counters.connections_opened == outcome.counters_after_setup.connections_opened + 4);
  INFO(outcome.notes);
  CHECK(outcome.notes.find("TIME_WAIT on port " + std::to_string(server.port())) != std::string::npos);
}

TEST_CASE("send_zc counts one zero-copy send per request and how many the kernel copied" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  ServerProcess server;
  CaseConfig config;
  config.port = server.port();
  config.count = 1000;
  const Descriptor* descriptor = find("send_zc");
  REQUIRE(descriptor != nullptr);
  const Outcome outcome = run_strategy(*descriptor, config, 3);
  if (!ringlab::testing::feature_available("send_zc", !outcome.skipped, outcome.skipped.value_or(""))) return;
  REQUIRE_MESSAGE(!outcome.error, outcome.error.value_or(""));
  const uint64_t sends = outcome.counters.zero_copy_sends - outcome.counters_after_setup.zero_copy_sends;
  const uint64_t copied = outcome.counters.zero_copy_copied - outcome.counters_after_setup.zero_copy_copied;
  CHECK(sends >= 3);
  CHECK(copied <= sends);
  MESSAGE("send_zc over loopback: " << copied << " of " << sends << " zero-copy sends copied by the kernel");
}

// The rows that map nikouu's nine methods (bench/src/seeds/nikouu.hpp), at every size the seed ran, in
// both server modes: the seed's (serialized per request and sent as serialized: 10,000 records take 53
// chunks of about 14.7 KB) and the cached one (Content-Length). Each checksum equals string_copy's for the same body.
TEST_CASE("the nikouu seed's rows read chunked and sized answers at every size the seed ran, as string_copy") {
  ServerProcess server;
  // nikouu's sizes (seed_table.cpp's Seed of nikouu.hpp's rows).
  constexpr std::array<std::size_t, 4> kSizes{10, 100, 1000, 10000};
  for (const ServerMode mode : {ServerMode::seed, ServerMode::cached}) {
    for (const std::size_t count : kSizes) {
      CaseConfig config;
      config.port = server.port();
      config.count = count;
      config.server_mode = mode;
      INFO(count << " weather records, server mode " << server_mode_name(mode));
      const Outcome baseline = run_strategy(*find("string_copy"), config, 1);
      REQUIRE_MESSAGE(!baseline.error, baseline.error.value_or(""));
      REQUIRE(baseline.checksums.size() == 1);
      CHECK(baseline.checksums.front() == json::checksum_weather(count));
      std::set<std::string_view> run;
      for (const bench::seeds::SeedRow& row : bench::seeds::kNikouuRows) {
        if (!run.insert(row.strategy).second) continue;
        INFO("strategy " << row.strategy << " (" << row.method << ")");
        const Descriptor* descriptor = find(row.strategy);
        REQUIRE(descriptor != nullptr);
        const Outcome outcome = run_strategy(*descriptor, config, 2);
        REQUIRE_MESSAGE(!outcome.error, outcome.error.value_or(""));
        REQUIRE(outcome.checksums.size() == 2);
        for (const uint64_t checksum : outcome.checksums) CHECK(checksum == baseline.checksums.front());
      }
    }
  }
}

TEST_CASE("the streaming strategies say how many records they parsed before the body was complete") {
  ServerProcess server;
  CaseConfig config;
  config.port = server.port();
  config.payload = Payload::repos;
  config.count = 1000;
  for (const char* name : {"streaming", "streaming_array"}) {
    INFO(std::string_view(name));
    const Outcome outcome = run_strategy(*find(name), config, 1);
    REQUIRE_MESSAGE(!outcome.error, outcome.error.value_or(""));
    // Informative only: how much overlap there is depends on how the kernel hands out the bytes.
    MESSAGE(std::string_view(name) << " repos 1000: " << outcome.notes);
    CHECK(outcome.notes.find("of 1000 records") != std::string::npos);
  }
}

}  // namespace
}  // namespace ringlab::strategies::testing

namespace ringlab::strategies::testing {
namespace {

TEST_CASE("single_enter: one io_uring_enter per kept-alive request whose response fits one receive") {
  ServerProcess server;
  constexpr unsigned kRunsMeasured = 20;
  for (const Payload payload : {Payload::weather, Payload::repos}) {
    CaseConfig config;
    config.port = server.port();
    config.payload = payload;
    config.count = 10;
    INFO(payload_name(payload));
    for (const char* name : {"presized", "single_enter"}) {
      INFO(std::string_view(name));
      const Outcome outcome = run_strategy(*find(name), config, kRunsMeasured);
      REQUIRE_MESSAGE(!outcome.error, outcome.error.value_or(""));
      CHECK(outcome.counters.connections_opened == 1);
      const uint64_t enters = outcome.counters.ring_enters - outcome.counters_after_setup.ring_enters;
      // presized sends, then waits: two. single_enter does both in one.
      CHECK(enters == (std::string_view(name) == "single_enter" ? 1u : 2u) * kRunsMeasured);
      CHECK(outcome.counters.syscalls == outcome.counters.ring_enters);
    }
  }
}

}  // namespace
}  // namespace ringlab::strategies::testing
