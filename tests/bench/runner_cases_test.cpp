// The runner's cases: checksums held to the baseline's, failures and skips with their reasons, N in
// flight, the in-flight client at one request, held memory, separate baselines per method.
#include "ringlab/bench/run/runner.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runner_fakes.hpp"

namespace rb = ringlab::bench;
namespace rs = ringlab::strategies;
using namespace ringlab::bench::testing;

TEST_CASE_FIXTURE(Fixture, "a strategy whose checksum covers some fields only is not held to the baseline's") {
  behaviours[1].checksum = 43;
  behaviours[2].checksum = 43;
  const auto results = run({spec(0), spec(1), spec(4)});
  REQUIRE(results.size() == 3);
  CHECK(results[1].status == rb::CaseStatus::failed);
  CHECK_FALSE(results[1].partial_checksum);
  CHECK(results[2].status == rb::CaseStatus::ok);
  CHECK(results[2].partial_checksum);
  CHECK(results[2].checksum == 43);
}

TEST_CASE_FIXTURE(Fixture, "a checksum that differs from the baseline's fails the case loudly") {
  behaviours[1].checksum = 43;
  behaviours[2].checksum = 42;
  const auto results = run({spec(0), spec(1), spec(2), spec(0, 1000), spec(1, 1000)});
  REQUIRE(results.size() == 5);
  CHECK(results[0].status == rb::CaseStatus::ok);
  CHECK(results[1].status == rb::CaseStatus::failed);
  INFO(results[1].reason);
  CHECK(results[1].reason.find("checksum 0x000000000000002b differs from baseline base's 0x000000000000002a") !=
        std::string::npos);
  CHECK(results[2].status == rb::CaseStatus::ok);
  // Size 1000 has its own baseline, with the same checksums: same verdicts.
  CHECK(results[3].status == rb::CaseStatus::ok);
  CHECK(results[4].status == rb::CaseStatus::failed);
}

TEST_CASE_FIXTURE(Fixture, "a checksum that changes between calls of one case fails it") {
  behaviours[0].checksum_from_call = 50;
  const auto results = run({spec(0)});
  REQUIRE(results[0].status == rb::CaseStatus::failed);
  INFO(results[0].reason);
  CHECK(results[0].reason.find("not deterministic") != std::string::npos);
  CHECK(results[0].reason.find("pilot iteration 2") != std::string::npos);
  CHECK(behaviours[0].teardowns == 1);
}

TEST_CASE_FIXTURE(Fixture, "a verified op whose checksum is wrong fails the case, though every timed op looked right") {
  // Verified calls: pilot 1 + 2, warm-up 3 x 2, then measured iteration 1's first.
  behaviours[0].wrong_checksum_from_verified_call = 1 + 2 + 6 + 1;
  const auto results = run({spec(0)});
  REQUIRE(results[0].status == rb::CaseStatus::failed);
  INFO(results[0].reason);
  CHECK(results[0].reason.starts_with("measurement iteration 1 verified op: checksum 0x"));
  CHECK(results[0].reason.find("not deterministic") != std::string::npos);
  CHECK(results[0].samples_ns.empty());
}

TEST_CASE_FIXTURE(Fixture, "a run error fails the case with the step and the strategy's message; others go on") {
  // Pilot 2 + 102 calls, warm-up 3 x 102, measured iterations 1 and 2: 2 x 102; then iteration 3's
  // verified op, and its first timed op fails.
  behaviours[0].fail_at_call = 104 + 306 + 204 + 2;
  const auto results = run({spec(0), spec(1)});
  REQUIRE(results[0].status == rb::CaseStatus::failed);
  INFO(results[0].reason);
  CHECK(results[0].reason ==
        "measurement iteration 3 op 1: fake 127.0.0.1:1: peer closed after 3 of 7 body bytes");
  CHECK(results[1].status == rb::CaseStatus::ok);
  CHECK(behaviours[0].teardowns == 1);
  REQUIRE_FALSE(progress.details.empty());
  CHECK(progress.details[0] == results[0].reason);
}

TEST_CASE_FIXTURE(Fixture, "a case that cannot start ends with its reason, shown, and never runs") {
  // What the case ends as, and how often the strategy was set up on the way.
  rb::CaseStatus status = rb::CaseStatus::ok;
  rb::Stage stage = rb::Stage::done;
  std::string reason;
  int setups = 0;
  SUBCASE("a skip reason skips the case without setting it up") {
    behaviours[0].skip = "needs IORING_OP_SEND_ZC (kernel 6.0)";
    status = rb::CaseStatus::skipped;
    stage = rb::Stage::skipped;
    reason = "needs IORING_OP_SEND_ZC (kernel 6.0)";
  }
  SUBCASE("a setup error fails the case") {
    behaviours[0].setup_error = "connect 127.0.0.1:8080: Connection refused (ECONNREFUSED)";
    status = rb::CaseStatus::failed;
    stage = rb::Stage::failed;
    reason = "setup: connect 127.0.0.1:8080: Connection refused (ECONNREFUSED)";
    setups = 1;
  }
  const auto results = run({spec(0)});
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == status);
  CHECK(results[0].reason == reason);
  CHECK(behaviours[0].setups == setups);
  CHECK(behaviours[0].calls == 0);
  CHECK(std::find(progress.stages.begin(), progress.stages.end(), stage) != progress.stages.end());
  CHECK(std::find(progress.details.begin(), progress.details.end(), reason) != progress.details.end());
}

TEST_CASE_FIXTURE(Fixture, "a case the strategy cannot read (skip_case) is skipped with its reason, the others run") {
  behaviours[1].skip_payload = rs::Payload::weather;
  rb::CaseSpec github = spec(1);
  github.config.payload = rs::Payload::github;
  const auto results = run({spec(0), spec(1), github});
  REQUIRE(results.size() == 3);
  CHECK(results[1].status == rb::CaseStatus::skipped);
  CHECK(results[1].reason == "reads no weather records");
  CHECK(results[2].status == rb::CaseStatus::ok);
  CHECK(behaviours[1].setups == 1);  // the github case only
}

TEST_CASE_FIXTURE(Fixture, "with N in flight, a strategy that runs one request at a time is not applicable; one that runs N gets N") {
  rb::CaseSpec base = spec(0);
  base.config.inflight = 8;
  rb::CaseSpec many = spec(5);
  many.config.inflight = 8;
  const auto results = run({base, many});
  REQUIRE(results.size() == 2);
  CHECK(results[0].status == rb::CaseStatus::skipped);
  CHECK(results[0].not_applicable);
  CHECK(results[0].reason == "runs one request in flight at a time");
  CHECK(results[0].inflight == 8);
  CHECK(behaviours[0].setups == 0);
  CHECK(results[1].status == rb::CaseStatus::ok);
  CHECK(results[1].inflight == 8);
  CHECK(behaviours[1].last_setup.inflight == 8);
  CHECK(rb::case_label(results[1]) == "many weather 100 x8 (system)");
  CHECK(rb::case_key(results[1]) == "GET/weather/100/system/x8");
}

TEST_CASE_FIXTURE(Fixture, "what a strategy holds per idle connection and the resident memory per connection are recorded") {
  behaviours[1].held = rs::HeldMemory{.connections = 8, .body_bytes = 8000, .model_bytes = 800, .receive_bytes = 80};
  rb::CaseSpec many = spec(5);
  many.config.inflight = 8;
  const auto results = run({spec(0), many});
  REQUIRE(results.size() == 2);
  REQUIRE(results[1].status == rb::CaseStatus::ok);
  const rb::Memory& held = results[1].memory;
  REQUIRE(held.held_bytes_per_connection.has_value());
  CHECK(*held.held_bytes_per_connection == doctest::Approx(8880.0 / 8));
  REQUIRE(held.held_body_bytes_per_connection.has_value());
  CHECK(*held.held_body_bytes_per_connection == doctest::Approx(1000));
  CHECK(held.rss_bytes_per_connection.has_value());  // /proc/self/statm read before setup and after the pilot
  // A strategy that does not say what it holds: null, never 0.
  CHECK_FALSE(results[0].memory.held_bytes_per_connection.has_value());
  CHECK_FALSE(results[0].memory.held_body_bytes_per_connection.has_value());
}

TEST_CASE_FIXTURE(Fixture, "a case without a factory fails instead of crashing") {
  rb::CaseSpec broken;
  const auto results = run({broken});
  CHECK(results[0].status == rb::CaseStatus::failed);
  CHECK(results[0].reason == "no such strategy");
}

TEST_CASE_FIXTURE(Fixture, "POST and GET baselines are separate") {
  behaviours[3].checksum = 7;
  const auto results = run({spec(0), spec(3)});
  CHECK(results[0].status == rb::CaseStatus::ok);
  CHECK(results[1].status == rb::CaseStatus::ok);
  CHECK(results[1].method == "POST");
}

TEST_CASE_FIXTURE(Fixture, "--client inflight: the N-in-flight form with one request in flight, n/a for a row without one") {
  rb::CaseSpec base = spec(0);
  base.config.client = rs::Client::inflight;
  rb::CaseSpec one = spec(5);
  rb::CaseSpec form = spec(5);
  form.config.client = rs::Client::inflight;
  const auto results = run({base, one, form});
  REQUIRE(results.size() == 3);
  CHECK(results[0].status == rb::CaseStatus::skipped);
  CHECK(results[0].not_applicable);
  CHECK(results[0].reason == "has no N-in-flight form");
  CHECK(behaviours[0].setups == 0);
  // The pooled client's one-request form (behaviours[2]) and the in-flight form (behaviours[1]), each at N = 1.
  CHECK(results[1].status == rb::CaseStatus::ok);
  CHECK(results[2].status == rb::CaseStatus::ok);
  CHECK(behaviours[2].setups == 1);
  CHECK(behaviours[1].setups == 1);
  CHECK(behaviours[1].last_setup.inflight == 1);
  CHECK(results[2].client == "inflight");
  CHECK(rb::case_label(results[2]) == "many weather 100 in-flight client (system)");
}
