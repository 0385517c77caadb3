// --client fresh over real sockets: the runner measures ringlab's stack and the peers against the server
// (in this process), each op on a client of its own. The server sees one new connection per op, timed or
// verified; every strategy made is set up, runs one request and is torn down; the checksum gate holds.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ringlab/bench/run/runner.hpp"
#include "short_run.hpp"
#include "strategy_calls.hpp"
#include "ringlab/net/ring.hpp"
#include "support.hpp"

namespace rb = ringlab::bench;
namespace rs = ringlab::strategies;

namespace {

struct Counts : rb::testing::StrategyCalls {
  std::optional<rs::Client> client_seen;
};
Counts counts;
const rs::Descriptor* inner = nullptr;  // the registry row being counted

// The registry's strategy, counted: what it is given and how often.
class Counted final : public rs::Strategy {
 public:
  explicit Counted(std::unique_ptr<rs::Strategy> strategy) : strategy_(std::move(strategy)) { ++counts.made; }
  [[nodiscard]] std::optional<std::string> skip_reason(const ringlab::net::RingFeatures& features) const override {
    return strategy_->skip_reason(features);
  }
  [[nodiscard]] std::optional<std::string> skip_case(const rs::CaseConfig& config) const override {
    return strategy_->skip_case(config);
  }
  rs::Status setup(const rs::CaseConfig& config) override {
    ++counts.setups;
    counts.client_seen = config.client;
    return strategy_->setup(config);
  }
  rs::Result<rs::Outcome> run(ringlab::http::Timeline* timeline, rs::Check check) override {
    counts.count_run(check);
    return strategy_->run(timeline, check);
  }
  [[nodiscard]] rs::IoCounters io_counters() const override { return strategy_->io_counters(); }
  void drop_connection() override { strategy_->drop_connection(); }
  [[nodiscard]] std::string notes() const override { return strategy_->notes(); }
  void teardown() override {
    ++counts.teardowns;
    strategy_->teardown();
  }

 private:
  std::unique_ptr<rs::Strategy> strategy_;
};

std::unique_ptr<rs::Strategy> make_counted() { return std::make_unique<Counted>(inner->make()); }

struct Outcome {
  rb::CaseResult result;
  uint64_t accepted = 0;  // connections the server accepted during the run
};

// One case of `name` at 10 weather records (or POST of 10), `client`, a few short iterations.
Outcome run_counted(std::string_view name, rs::Client client) {
  inner = rs::find(name);
  REQUIRE_MESSAGE(inner != nullptr, name);
  rs::Descriptor counted = *inner;
  counted.make = &make_counted;
  counts = Counts{};
  ringlab::e2e::TestServer server;
  rb::CaseSpec spec;
  spec.strategy = &counted;
  spec.config.port = server.port();
  spec.config.count = 10;
  spec.config.client = client;
  spec.config.timeout = std::chrono::seconds(5);
  rb::RunnerOptions options = rb::testing::short_run(2);
  options.max_ops_per_iteration = 4;
  rb::RunContext context = rb::testing::cycle_counter_context();
  auto ring = ringlab::net::Ring::create();
  REQUIRE(ring.has_value());
  context.features = (*ring)->features();
  const std::vector<rb::CaseSpec> specs{spec};
  auto results = rb::run_cases(specs, options, context);
  REQUIRE(results.size() == 1);
  const auto stats = server.stop();
  return {std::move(results[0]), stats.accepted};
}

}  // namespace

TEST_CASE("--client fresh: one new connection per op, one strategy made, set up and torn down per op") {
  // ringlab's stack (one request and the POST row), then every library peer and the socket peers.
  for (const char* name : {"presized", "string_copy", "send_copy", "libcurl", "libcurl_multi", "cpp_httplib", "beast",
                           "cpprest", "curlpp", "blocking_sockets", "epoll"}) {
    CAPTURE(name);
    const Outcome o = run_counted(name, rs::Client::fresh);
    INFO(o.result.reason);
    REQUIRE(o.result.status == rb::CaseStatus::ok);
    CHECK(o.result.client == "fresh");
    CHECK(counts.client_seen == rs::Client::fresh);
    CHECK(counts.runs > 4);
    rb::testing::check_a_strategy_per_op(counts);
    CHECK(o.accepted == static_cast<uint64_t>(counts.runs));
    CHECK(o.result.io.connections_per_op == doctest::Approx(1.0));
    CHECK(o.result.verified_ops > 0);
    CHECK(o.result.checksum != 0);
    CHECK(o.result.notes.starts_with("fresh client: every op made, set up, ran and destroyed its own " +
                                     std::string(name)));
  }
}

TEST_CASE("--client pooled: the case's one strategy keeps one connection for all its ops") {
  const Outcome o = run_counted("libcurl", rs::Client::pooled);
  REQUIRE_MESSAGE(o.result.status == rb::CaseStatus::ok, o.result.reason);
  CHECK(o.result.client == "pooled");
  rb::testing::check_one_strategy_for_the_case(counts);
  CHECK(counts.runs > 4 + 1);  // the ops, and setup()'s verified request
  CHECK(o.accepted == 1);
}

TEST_CASE("--client fresh: rows that need a request to be built are not applicable") {
  // fixed_buffers too, where the kernel registers buffers; these four need nothing of the kernel.
  for (const char* name : {"arena", "arena_pool", "floor_parse", "floor_parse_minimal"}) {
    CAPTURE(name);
    const Outcome o = run_counted(name, rs::Client::fresh);
    CHECK(o.result.status == rb::CaseStatus::skipped);
    CHECK(o.result.not_applicable);
    CHECK(o.result.reason.ends_with(": a fresh client would make that request inside every op"));
    CHECK(o.accepted == 0);
  }
}
