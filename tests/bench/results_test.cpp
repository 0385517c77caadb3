// The results model: ratios against baselines, merging allocator jobs, and the JSON contract.
#include "ringlab/bench/core/results.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace rb = ringlab::bench;
using doctest::Approx;

namespace {

rb::CaseResult make_case(std::string strategy, bool baseline, std::vector<double> samples,
                         std::string allocator = "system", std::size_t size = 100) {
  rb::CaseResult c;
  c.strategy = std::move(strategy);
  c.baseline = baseline;
  c.payload = "weather";
  c.size = size;
  c.allocator = std::move(allocator);
  c.samples_ns = std::move(samples);
  c.memory.bytes_per_op = baseline ? 1000.0 : 250.0;
  c.memory.allocs_per_op = 2;
  return c;
}

}  // namespace

TEST_CASE("ratios: baseline 1 with no spread, others from every pairing of kept samples") {
  rb::Report report;
  report.cases.push_back(make_case("base", true, {100, 200}));
  report.cases.push_back(make_case("fast", false, {50, 100, 1e9}));
  report.cases.back().outliers = {2};  // the 1e9 sample is left out
  report.cases.push_back(make_case("lonely", false, {10}, "system", 1000));  // no baseline at its size
  rb::compute_ratios(report);
  CHECK(report.cases[0].stats.ratio == 1.0);
  CHECK(report.cases[0].stats.ratio_sd == 0.0);
  // {50,100} / {100,200}: 0.5, 0.25, 1, 0.5 -> mean 0.5625, sd sqrt(0.296875 / 3).
  REQUIRE(report.cases[1].stats.ratio.has_value());
  CHECK(*report.cases[1].stats.ratio == Approx(0.5625));
  CHECK(*report.cases[1].stats.ratio_sd == Approx(std::sqrt(0.296875 / 3)));
  CHECK(*report.cases[1].memory.alloc_ratio == Approx(0.25));
  CHECK_FALSE(report.cases[2].stats.ratio.has_value());
  CHECK_FALSE(report.cases[2].memory.alloc_ratio.has_value());
}

TEST_CASE("ratios of an interleaved run pair samples by round and take the median over every round") {
  rb::Report report;
  report.config.interleave = true;
  // Round 4 caught the baseline in a slow mode: its ratio (0.15) is kept, but it does not move the
  // median; dropping it as an outlier round would bias a mean.
  report.cases.push_back(make_case("base", true, {100, 110, 120, 1000}));
  report.cases.back().outliers = {3};
  report.cases.push_back(make_case("other", false, {150, 165, 180, 150}));
  rb::compute_ratios(report);
  CHECK(*report.cases[1].stats.ratio == Approx(1.5));
  CHECK(*report.cases[1].stats.ratio_sd > 0.5);  // the spread of the round ratios, that round included
  // A slow round on the other side weighs the same: the median stays.
  report.cases[1].samples_ns = {150, 165, 180, 1200};
  rb::compute_ratios(report);
  CHECK(*report.cases[1].stats.ratio == Approx(1.5));
}

TEST_CASE("no ratio against a failed baseline; Alloc Ratio 1 when neither allocates") {
  rb::Report report;
  report.cases.push_back(make_case("base", true, {100}));
  report.cases.back().status = rb::CaseStatus::failed;
  report.cases.push_back(make_case("other", false, {100}));
  rb::compute_ratios(report);
  CHECK_FALSE(report.cases[1].stats.ratio.has_value());

  report.cases[0].status = rb::CaseStatus::ok;
  report.cases[0].memory.bytes_per_op = 0.0;
  report.cases[1].memory.bytes_per_op = 0.0;
  rb::compute_ratios(report);
  CHECK(report.cases[1].memory.alloc_ratio == 1.0);
}

TEST_CASE("merging an allocator job keeps ratios within each allocator") {
  rb::Report parent;
  parent.environment.allocator = "system";
  parent.cases.push_back(make_case("base", true, {100}));
  parent.cases.push_back(make_case("other", false, {200}));
  rb::Report child;
  child.environment.allocator = "mimalloc";
  child.environment.warnings = {"TSC not invariant"};
  child.cases.push_back(make_case("base", true, {50}, "mimalloc"));
  child.cases.push_back(make_case("other", false, {200}, "mimalloc"));
  rb::merge_reports(parent, std::move(child));
  REQUIRE(parent.cases.size() == 4);
  CHECK(*parent.cases[1].stats.ratio == Approx(2.0));
  CHECK(*parent.cases[3].stats.ratio == Approx(4.0));
  CHECK(parent.environment.allocator == "system");
  REQUIRE(parent.environment.warnings.size() == 1);
  CHECK(parent.environment.warnings[0] == "mimalloc: TSC not invariant");
}

TEST_CASE("the JSON names every field of DESIGN.md's schema") {
  rb::Report report;
  report.cases.push_back(make_case("base", true, {100, 101}));
  const nlohmann::json j = rb::to_json(report);
  CHECK(j.at("schema_version") == rb::kReportSchemaVersion);
  for (const char* key : {"cpu", "cores", "kernel", "compiler", "allocator", "tsc_hz", "timer_overhead_ns",
                          "liburing_version", "simdjson_version", "llhttp_version"}) {
    INFO(key);
    CHECK(j.at("environment").contains(key));
  }
  const auto& c = j.at("cases").at(0);
  for (const char* key : {"strategy", "payload", "size", "connection", "server_mode", "client", "allocator", "samples_ns", "ops_per_iteration",
                          "stats", "memory", "counters", "checksum", "phases", "io", "status", "reason"}) {
    INFO(key);
    CHECK(c.contains(key));
  }
  for (const char* key : {"mean", "error", "stddev", "median", "p95", "min", "max", "ratio", "ratio_sd"}) {
    INFO(key);
    CHECK(c.at("stats").contains(key));
  }
  for (const char* key : {"bytes_per_op", "allocs_per_op", "peak_rss", "minor_faults_per_op", "held_bytes_per_connection",
                          "held_body_bytes_per_connection", "rss_bytes_per_connection"}) {
    INFO(key);
    CHECK(c.at("memory").contains(key));
  }
  // Unmeasured is null, not 0.
  CHECK(c.at("stats").at("ratio").is_null());
  CHECK(c.at("phases").at("connect").is_null());
  // The first and last body byte, from the request sent (null here: not stamped).
  CHECK(c.at("phases").at("first_body").is_null());
  CHECK(c.at("phases").at("last_body").is_null());
}

TEST_CASE("reading refuses other schema versions and names the field of a wrong type") {
  CHECK(rb::parse_report("not json").error().message == "report: not valid JSON");
  CHECK(rb::parse_report("[]").error().message == "report: expected a JSON object at the top");
  CHECK(rb::parse_report(R"({"cases": []})").error().message == "report: no integer schema_version");
  const auto other = rb::parse_report(R"({"schema_version": 99, "cases": []})");
  REQUIRE_FALSE(other.has_value());
  CHECK(other.error().message.find("schema_version 99") != std::string::npos);
  const auto wrong = rb::parse_report(R"({"schema_version": 1, "cases": [{"stats": {"mean": "fast"}}]})");
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().message.find("cases[0].stats.mean") != std::string::npos);
  const auto status = rb::parse_report(R"({"schema_version": 1, "cases": [{"status": "great"}]})");
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().message.find("unknown status 'great'") != std::string::npos);
  const auto no_cases = rb::parse_report(R"({"schema_version": 1})");
  CHECK(no_cases.error().message == "report: no cases array");
  // Missing fields keep their defaults: a file from before a field was added still reads.
  const auto minimal = rb::parse_report(R"({"schema_version": 1, "cases": [{"strategy": "x"}]})");
  REQUIRE(minimal.has_value());
  CHECK(minimal->cases[0].strategy == "x");
  CHECK(minimal->cases[0].status == rb::CaseStatus::ok);
}

TEST_CASE("a report written to a pipe is read back whole by the other end") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  rb::Report report;
  // Big enough to overflow the pipe buffer: the writer must continue short writes.
  for (int i = 0; i < 200; ++i) report.cases.push_back(make_case("base", true, std::vector<double>(100, i + 0.5)));
  rb::Status written;
  std::thread writer([&] {
    written = rb::write_report_fd(fds[1], report);
    close(fds[1]);
  });
  const auto read = rb::read_report_fd(fds[0]);
  writer.join();
  close(fds[0]);
  REQUIRE(written.has_value());
  REQUIRE(read.has_value());
  REQUIRE(read->cases.size() == 200);
  CHECK(read->cases[199].samples_ns[99] == 199.5);
}

TEST_CASE("writing to a closed fd is an error with the errno text") {
  const auto status = rb::write_report_fd(-1, rb::Report{});
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().message.find("Bad file descriptor (EBADF)") != std::string::npos);
}

TEST_CASE("schema 2's fields survive a round trip: reference, latency, diagnostics, environment") {
  rb::Report report;
  report.environment.git_commit = "0123abc";
  report.environment.git_dirty = true;
  report.environment.compiler_flags = "-O3 -DNDEBUG";
  report.environment.load_average_start = rb::LoadAverage{0.5, 0.25, 0.125};
  rb::CaseResult c = make_case("floor_parse", false, {100, 101});
  c.reference = true;
  c.io.syscalls_per_op = std::nullopt;
  c.latency = rb::Latency{3, 100, 200, 300, 300, 301, {{100, 100, 1}, {200, 200, 1}, {300, 301, 1}}};
  c.diagnostics.cv = 0.25;
  c.diagnostics.m_value = 3.9;
  c.diagnostics.bimodal = true;
  c.diagnostics.baseline_unstable = true;
  report.cases.push_back(c);
  const nlohmann::json j = rb::to_json(report);
  CHECK(j.at("cases").at(0).at("io").at("syscalls_per_op").is_null());  // not measured, not 0
  CHECK(j.at("environment").at("load_average_end").is_null());
  CHECK(j.at("cases").at(0).at("latency").at("buckets").at(2) == nlohmann::json::array({300, 301, 1}));
  const auto read = rb::report_from_json(j);
  REQUIRE(read.has_value());
  const rb::CaseResult& back = read->cases.at(0);
  CHECK(back.reference);
  CHECK_FALSE(back.io.syscalls_per_op.has_value());
  REQUIRE(back.latency.has_value());
  CHECK(back.latency->p90 == 200);
  CHECK(back.latency->buckets.size() == 3);
  CHECK(back.latency->buckets[2].highest_ns == 301);
  CHECK(back.diagnostics.m_value == 3.9);
  CHECK(back.diagnostics.bimodal);
  CHECK(back.diagnostics.baseline_unstable);
  CHECK(read->environment.git_commit == "0123abc");
  CHECK(read->environment.git_dirty == true);
  REQUIRE(read->environment.load_average_start.has_value());
  CHECK(read->environment.load_average_start->five == 0.25);
  CHECK_FALSE(read->environment.load_average_end.has_value());
}

TEST_CASE("a schema 1 report still reads: the new fields keep their defaults") {
  const auto old = rb::parse_report(
      R"({"schema_version": 1, "cases": [{"strategy": "libcurl", "io": {"syscalls_per_op": 0}}]})");
  REQUIRE(old.has_value());
  CHECK(old->schema_version == 1);
  CHECK_FALSE(old->cases[0].reference);
  CHECK_FALSE(old->cases[0].latency.has_value());
  CHECK(old->cases[0].io.syscalls_per_op == 0.0);
  CHECK_FALSE(old->environment.git_dirty.has_value());
  CHECK(old->cases[0].connection == "pooled");  // before schema 4 every case kept its connection
  CHECK(old->config.connection == "pooled");
  CHECK(old->cases[0].server_mode == "cached");  // before schema 5 the server answered from its cache
  CHECK(old->config.server_mode == "cached");
  CHECK(old->cases[0].client == "pooled");  // before schema 6 every case built its client once
  CHECK(old->config.client == "pooled");
}

TEST_CASE("schemas 4 to 6: the connection, the server mode and the client of a case and of the run survive a round trip") {
  rb::Report report;
  report.config.connection = "fresh";
  report.config.server_mode = "seed";
  report.config.client = "fresh";
  rb::CaseResult c = make_case("presized", false, {100, 101});
  c.connection = "fresh";
  c.server_mode = "seed";
  c.client = "fresh";
  report.cases.push_back(c);
  const nlohmann::json j = rb::to_json(report);
  const auto read = rb::report_from_json(j);
  REQUIRE(read.has_value());
  for (const auto& [key, value] :
       {std::pair{"connection", "fresh"}, std::pair{"server_mode", "seed"}, std::pair{"client", "fresh"}}) {
    INFO(key);
    CHECK(j.at("config").at(key) == value);
    CHECK(j.at("cases").at(0).at(key) == value);
  }
  CHECK(read->config.connection == "fresh");
  CHECK(read->cases.at(0).connection == "fresh");
  CHECK(read->config.server_mode == "seed");
  CHECK(read->cases.at(0).server_mode == "seed");
  CHECK(read->config.client == "fresh");
  CHECK(read->cases.at(0).client == "fresh");
}
