// Heap allocations per request, counted by bench's memory diagnoser (it interposes malloc and operator
// new in this executable), for every strategy after its setup and a warm-up. Printed for the reader;
// what holds by construction is checked: every strategy but those that mirror .NET's fresh objects
// (string_copy, exact_string, buffered_stream, presized_fresh, streaming_array_fresh, pooled_string: fresh
// models per request, and for the first three a fresh body buffer, for pooled_string a fresh string), nlohmann (a DOM per request), libcurl and the peers built on
// client libraries (their own state per transfer; cpp-httplib, Beast and cpprest also a body string per
// request), the proxy rows (a fresh string per answer) and streaming (simdjson's document_stream
// allocates per batch) takes nothing from the heap
// per request in steady state, whatever the record count; streaming's allocations come in pairs, one
// pair per batch, never one per record.
//
// Caveats: mimalloc_heap's memory comes from mimalloc's own pages (mmap), not from malloc, so the
// diagnoser cannot see it; arena_pool's pool and arena's buffer were filled at setup. Counted per
// thread, so the server (another process anyway) is not in the numbers.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "../support/generated_bodies.hpp"
#include "case_strategy.hpp"
#include "fixtures.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/bench/measure/memory_diagnoser.hpp"

namespace ringlab::strategies::testing {
namespace {

constexpr unsigned kWarmup = 3;
constexpr unsigned kMeasured = 20;

struct PerOp {
  double allocations = 0;
  double bytes = 0;
};

// `strategy` (made by a descriptor's make() or make_inflight()) after its setup and warm-up.
std::optional<PerOp> measure(std::unique_ptr<Strategy> strategy, const CaseConfig& config) {
  REQUIRE(strategy != nullptr);
  if (kernel_skip_reason(*strategy) || strategy->skip_case(config)) return std::nullopt;
  auto status = strategy->setup(config);
  REQUIRE_MESSAGE(status, (status ? "" : status.error().message));
  for (unsigned i = 0; i < kWarmup; ++i) REQUIRE(strategy->run(nullptr, Check::consume));
  bench::start_counting_allocations();
  bool ok = true;
  for (unsigned i = 0; i < kMeasured; ++i) ok = ok && strategy->run(nullptr, Check::consume).has_value();
  const bench::AllocationCounts counts = bench::stop_counting_allocations();
  REQUIRE(ok);
  strategy->teardown();
  return PerOp{static_cast<double>(counts.allocations) / kMeasured, static_cast<double>(counts.bytes) / kMeasured};
}

std::optional<PerOp> measure(const Descriptor& descriptor, const CaseConfig& config) {
  return measure(descriptor.make(), config);
}

// The registered strategies `names`, each measured at `config` (none may skip it), in their order; each
// one's figures printed for the reader under `label`.
template <std::size_t N>
std::array<PerOp, N> measure_each(const CaseConfig& config, const std::array<std::string_view, N>& names,
                                  std::string_view label) {
  std::array<PerOp, N> measured;
  for (std::size_t i = 0; i < N; ++i) {
    const auto per_op = measure(*find(names[i]), config);
    REQUIRE_MESSAGE(per_op, names[i] << " skipped the case");
    MESSAGE(label << ": " << names[i] << " " << per_op->allocations << " allocations, " << per_op->bytes
                  << " B per request");
    measured[i] = *per_op;
  }
  return measured;
}

// The strategies that allocate per request by design (fresh bodies or models, a library's own state).
const std::set<std::string_view> kAllocating = {"string_copy",        "exact_string",     "buffered_stream",
                                              "presized_fresh",     "nlohmann",         "libcurl",
                                              "streaming",          "libcurl_multi",    "cpp_httplib",
                                              "beast",              "cpprest",          "curlpp",
                                              "libcurl_multi_post", "cpp_httplib_post", "beast_post",
                                              "cpprest_post",       "curlpp_post",      "proxy_pooled",
                                              "proxy_fresh",        "proxy_pooled_body", "proxy_fresh_body",
                                              "proxy_manual",       "proxy_typed",
                                              "echo",               "echo_fresh",       "libcurl_echo",
                                              "libcurl_multi_echo", "cpp_httplib_echo", "beast_echo",
                                              "cpprest_echo",       "curlpp_echo",      "streaming_array_fresh",
                                              "pooled_string",      "rapidjson_fresh",  "token_loop",
                                              "floor_parse_nlohmann"};

// Every registered strategy of `group` at 10 and 1,000 records of one payload. One test case per
// payload, and one ctest entry each (tests/strategies/CMakeLists.txt): all three take about six
// minutes under the sanitizers on a slow 2-core machine, more than one entry's timeout. The few
// strategies that need a kernel feature are one feature-gated case for the three payloads.
void check_steady_state(Payload payload, const std::vector<const Descriptor*>& covered) {
  REQUIRE(bench::interposition_works());
  ServerProcess server;
  for (const std::size_t count : {std::size_t{10}, std::size_t{1000}}) {
    for (const Descriptor* strategy : covered) {
      const Descriptor& descriptor = *strategy;
      // A proxy op is `count` requests: 1000 of them per op would only repeat what 10 show.
      if (descriptor.method == Method::proxy && count > 10) continue;
      // An echo op posts the same small object whatever the payload and size.
      if (descriptor.method == Method::echo && (count > 10 || payload != Payload::weather)) continue;
      CaseConfig config = case_at(server.port(), count, 1, payload);
      INFO("strategy " << descriptor.name << ", " << payload_name(payload) << ", " << count << " records");
      const auto per_op = measure(descriptor, config);
      if (!per_op) continue;  // a payload it has no way to read (skip_case)
      MESSAGE(descriptor.name << " " << payload_name(payload) << " " << count << ": " << per_op->allocations
                              << " allocations, " << per_op->bytes << " B per request");
      if (descriptor.name == "streaming") {
        CHECK(per_op->allocations <= 2.0 * 64);  // a batch per receive; a receive is at least 16 KiB
        CHECK(per_op->allocations < static_cast<double>(std::max<std::size_t>(count, 2)));
      }
      if (!kAllocating.contains(descriptor.name)) {
        CHECK(per_op->allocations == 0);
        CHECK(per_op->bytes == 0);
      }
    }
  }
}

TEST_CASE("allocations per request in steady state: weather") {
  check_steady_state(Payload::weather, strategies(Needs::nothing_of_the_kernel));
}
TEST_CASE("allocations per request in steady state: repos") {
  check_steady_state(Payload::repos, strategies(Needs::nothing_of_the_kernel));
}
TEST_CASE("allocations per request in steady state: github") {
  check_steady_state(Payload::github, strategies(Needs::nothing_of_the_kernel));
}
TEST_CASE("allocations per request in steady state: profiles") {
  check_steady_state(Payload::profiles, strategies(Needs::nothing_of_the_kernel));
}
// Not matched by the per-payload entries' filter ("steady state: <payload>").
TEST_CASE("allocations per request in steady state, for the strategies that need a kernel feature" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  const std::vector<const Descriptor*> covered = strategies(Needs::a_kernel_feature);
  for (const Payload payload : {Payload::weather, Payload::repos, Payload::github, Payload::profiles}) {
    check_steady_state(payload, covered);
  }
}

// bench --inflight: a strategy of N requests in flight (Descriptor::make_inflight) keeps N connections, each
// with its own buffers and models, and a round reuses them all: nothing from the heap per round, but for
// the strategies that allocate per request by design (string_copy: a fresh body per connection) and
// provided_buffers' and provided_bundles' shared form, which holds no body while its connections wait: one padded body of
// Content-Length per connection per round, freed after its parse, and nothing else (one set of models).
// Counted on this thread only: blocking_sockets' N worker threads, which make its requests, are not seen
// (what its round's thread does, waking them and waiting, takes nothing from the heap).
TEST_CASE("the many-in-flight strategies take nothing from the heap per round, but what their row allocates") {
  REQUIRE(bench::interposition_works());
  ServerProcess server;
  unsigned measured = 0;
  for (const Descriptor& descriptor : registry()) {
    if (descriptor.make_inflight == nullptr) continue;
    // provided_buffers needs buffer rings: on a kernel without them its part is recorded as skipped.
    const auto reason = kernel_skip_reason(*descriptor.make_inflight());
    if (!ringlab::testing::feature_available("strategy " + std::string(descriptor.name), !reason, reason.value_or(""))) {
      continue;
    }
    for (const Payload payload : {Payload::weather, Payload::github}) {
      for (const std::size_t count : {std::size_t{10}, std::size_t{1000}}) {
        CaseConfig config = case_at(server.port(), count, 8, payload);
        INFO("strategy " << descriptor.name << " x8, " << payload_name(payload) << ", " << count << " records");
        const auto per_round = measure(descriptor.make_inflight(), config);
        REQUIRE(per_round);
        MESSAGE(descriptor.name << " x8 " << payload_name(payload) << " " << count << ": " << per_round->allocations
                                << " allocations, " << per_round->bytes << " B per round");
        if (kAllocating.contains(descriptor.name)) {
          // A fresh body (and models) per connection per round, as one request makes one.
          CHECK(per_round->allocations >= 8);
        } else if (descriptor.name == "provided_buffers" || descriptor.name == "provided_bundles") {
          CHECK(per_round->allocations == 8);
          CHECK(per_round->bytes == 8 * (ringlab::testing::generated_body(payload, count).size() + base::kPadding));
        } else {
          CHECK(per_round->allocations == 0);
          CHECK(per_round->bytes == 0);
        }
        ++measured;
      }
    }
  }
  CHECK(measured > 0);  // the epoll row has one
}

TEST_CASE("the fresh-buffer strategies allocate what they stand for, and no more") {
  // At 10,000 weather records (771 KB). string_copy and buffered_stream both build fresh owning models
  // and a body buffer that regrows as the body arrives in receive-sized pieces; string_copy then copies
  // the body once more into a padded string (one that kept its string's capacity between requests would
  // allocate a megabyte less than buffered_stream). exact_string reserves its string once at
  // Content-Length where string_copy regrows it (about log2(size) reallocations, each a copy);
  // presized_fresh receives into the kept padded buffer, so only its models are new.
  REQUIRE(bench::interposition_works());
  ServerProcess server;
  const CaseConfig config = case_at(server.port(), 10'000);
  const auto [regrown, exact, growing, fresh] =
      measure_each<4>(config, {"string_copy", "exact_string", "buffered_stream", "presized_fresh"}, "10,000 records");
  CHECK(regrown.bytes > growing.bytes);
  CHECK(regrown.allocations >= growing.allocations);
  CHECK(exact.allocations < regrown.allocations);
  CHECK(exact.bytes < regrown.bytes);
  CHECK(fresh.allocations < growing.allocations);
  CHECK(fresh.bytes < growing.bytes);
  // The models alone: a vector that grows by doubling (weather strings fit the small-string buffer).
  CHECK(fresh.allocations <= 20);
  CHECK(fresh.allocations > 0);
}

// Under the seeds' conditions (server mode seed: chunked, so nothing can be sized from a Content-Length),
// at 10,000 weather records. pooled_string receives into its kept buffer and makes one string: its
// models' allocations and that one, where string_copy regrows its string as the pieces arrive.
// streaming_array_fresh builds its records anew at every request, as presized_fresh does; the body
// buffer is kept.
TEST_CASE("the nikouu seed's new rows allocate what they stand for, with chunked answers") {
  REQUIRE(bench::interposition_works());
  ServerProcess server;
  CaseConfig config = case_at(server.port(), 10'000);
  config.server_mode = ServerMode::seed;
  const auto [regrown, fresh, pooled, streamed] = measure_each<4>(
      config, {"string_copy", "presized_fresh", "pooled_string", "streaming_array_fresh"}, "seed mode, 10,000 records");
  // The models as presized_fresh's, and one string of the body (771 KB) and simdjson's padding.
  CHECK(pooled.allocations == fresh.allocations + 1);
  CHECK(pooled.bytes > fresh.bytes + 700'000);
  CHECK(pooled.allocations < regrown.allocations);
  CHECK(pooled.bytes < regrown.bytes);
  // Fresh records at every request: a vector grown by doubling (about log2(10,000) allocations); nothing
  // per record (weather strings fit the small-string buffer) and no body buffer.
  CHECK(streamed.allocations > 0);
  CHECK(streamed.allocations <= 20);
}


// A fresh client (CaseConfig::client fresh) whole, as bench's FreshClient runs one: made, set up, its one
// request verified, torn down and destroyed; what it took from the heap.
PerOp fresh_client_op(const Descriptor& descriptor, const CaseConfig& config) {
  bench::start_counting_allocations();
  {
    std::unique_ptr<Strategy> strategy = descriptor.make();
    REQUIRE(strategy != nullptr);
    auto status = strategy->setup(config);
    REQUIRE_MESSAGE(status, (status ? "" : status.error().message));
    const auto outcome = strategy->run(nullptr, Check::verify);
    REQUIRE_MESSAGE(outcome, (outcome ? "" : outcome.error().message));
    strategy->teardown();
  }
  const bench::AllocationCounts counts = bench::stop_counting_allocations();
  return PerOp{static_cast<double>(counts.allocations), static_cast<double>(counts.bytes)};
}

// A fresh client parses with the JSON parser its thread keeps (case_strategy.hpp), as .NET keeps its
// serializer per process: the first client of a thread grows a parser to the body's size, the next ones
// borrow it and allocate none. simdjson's structural index alone is 4 bytes per byte of body, so a client
// that built its own parser would take at least that much more than one that borrowed the thread's.
// One row per kind of strategy that owns a parse: ringlab's stack, a library peer, a socket peer.
TEST_CASE("a fresh client borrows its thread's JSON parser: only the thread's first client grows one") {
  REQUIRE(bench::interposition_works());
  ServerProcess server;
  CaseConfig config{.port = server.port(), .payload = Payload::weather, .count = 1000, .client = Client::fresh};
  const double body_bytes = static_cast<double>(ringlab::testing::generated_body(config.payload, config.count).size());
  for (const std::string_view name : {"presized", "cpp_httplib", "blocking_sockets"}) {
    INFO(name);
    (void)detail::take_thread_parser();  // the thread keeps none: the next client makes one
    const PerOp first = fresh_client_op(*find(name), config);
    const PerOp next = fresh_client_op(*find(name), config);
    MESSAGE(name << " fresh client, weather 1000: first " << first.bytes << " B, next " << next.bytes << " B");
    CHECK(first.bytes - next.bytes >= 4 * body_bytes);
    CHECK(detail::take_thread_parser().capacity() >= static_cast<std::size_t>(body_bytes));  // given back at teardown
  }
  // A pooled client's parser is its own: the thread keeps none after it.
  config.client = Client::pooled;
  auto pooled = find("presized")->make();
  REQUIRE(pooled->setup(config));
  pooled->teardown();
  CHECK(detail::take_thread_parser().capacity() == 0);
}

}  // namespace
}  // namespace ringlab::strategies::testing
