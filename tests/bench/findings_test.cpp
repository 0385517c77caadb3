// Findings: the warnings summarized by kind and "What this run says", computed from a synthetic report
// whose numbers are known, so that every sentence can be checked against them.
#include "ringlab/bench/core/findings.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../support/bench_cases.hpp"
#include "ringlab/bench/core/diagnostics.hpp"
#include "text_checks.hpp"

namespace rb = ringlab::bench;
using ringlab::bench::testing::check_contains;

namespace {

rb::CaseResult timed(std::string strategy, std::size_t size, double median_ns, bool baseline, double bytes = 0,
                     double allocs = 0) {
  rb::CaseResult c = ringlab::testing::weather_case(ringlab::testing::prototype_case("system", 100),
                                                    std::move(strategy), size, baseline);
  c.stats.n = 20;
  c.stats.mean = median_ns;
  c.stats.median = median_ns;
  c.stats.stddev = median_ns * 0.01;
  c.stats.error = median_ns * 0.005;
  c.memory.bytes_per_op = bytes;
  c.memory.allocs_per_op = allocs;
  c.memory.minor_faults_per_op = baseline ? 576 : 0;
  return c;
}

void ratio(rb::CaseResult& c, double value, double low, double high) {
  c.stats.ratio = value;
  c.stats.ratio_low = low;
  c.stats.ratio_high = high;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// 10,000 records: the baseline, two contenders, a peer within the noise and the two floors.
rb::Report headline_like() {
  rb::Report report;
  report.config.interleave = true;
  report.environment.allocator = "glibc 2.36 (/lib/x86_64-linux-gnu/libc.so.6)";
  report.cases.push_back(timed("string_copy", 10000, 900'000, true, 5.9e6, 22));
  ratio(report.cases.back(), 1.0, 1.0, 1.0);
  report.cases.back().stats.ratio_low.reset();
  report.cases.back().stats.ratio_high.reset();
  report.cases.push_back(timed("presized", 10000, 630'000, false));
  ratio(report.cases.back(), 0.70, 0.66, 0.78);
  report.cases.push_back(timed("streaming", 10000, 540'000, false, 985, 7.69));
  ratio(report.cases.back(), 0.60, 0.58, 0.61);
  report.cases.push_back(timed("libcurl", 10000, 890'000, false, 19'596, 34));
  ratio(report.cases.back(), 0.99, 0.95, 1.03);
  report.cases.push_back(timed("floor_transfer", 10000, 120'000, false));
  report.cases.back().reference = true;
  ratio(report.cases.back(), 0.13, 0.12, 0.14);
  report.cases.push_back(timed("floor_parse", 10000, 400'000, false));
  report.cases.back().reference = true;
  ratio(report.cases.back(), 0.44, 0.43, 0.45);
  return report;
}

}  // namespace

TEST_CASE("findings: the fastest contender, its interval, the floors, the allocations and the noise") {
  const std::string text = joined(rb::run_findings(headline_like()));
  INFO(text);
  // The floors are reference rows, never the fastest, even though floor_transfer is faster.
  check_contains(text, {"10000 records: fastest streaming at 0.60x string_copy's time (95 % interval 0.58-0.61)",
                        // 540 / (120 + 400) and 540 / 400.
                        "1.04x the floors' sum (120 μs transfer + 400 μs parse), 1.35x the larger floor",
                        "presized allocates nothing per op, against string_copy's 5.6 MB in 22 allocs/op",
                        // A headline ratio against the copying baseline names its allocator and its page faults.
                        "string_copy under glibc 2.36: 576 page faults/op",
                        "within the noise (the Ratio's 95 % interval includes 1.0): libcurl at 10000 records (0.99)"});
  CHECK(text.find("/lib/") == std::string::npos);
}

TEST_CASE("findings: no interval, no baseline, and a baseline that is fastest are said as such") {
  rb::Report report = headline_like();
  for (rb::CaseResult& c : report.cases) {
    c.stats.ratio_low.reset();
    c.stats.ratio_high.reset();
  }
  std::string text = joined(rb::run_findings(report));
  INFO(text);
  CHECK(text.find("fastest streaming at 0.60x string_copy's time;") != std::string::npos);
  CHECK(text.find("the noise cannot be told from the differences") != std::string::npos);

  report.cases.erase(report.cases.begin());
  text = joined(rb::run_findings(report));
  CHECK(text.find("10000 records: no baseline measured, so no ratios") != std::string::npos);

  rb::Report slow = headline_like();
  ratio(slow.cases[1], 1.20, 1.10, 1.30);
  ratio(slow.cases[2], 1.10, 1.05, 1.15);
  ratio(slow.cases[3], 1.30, 1.20, 1.40);
  text = joined(rb::run_findings(slow));
  CHECK(text.find("fastest string_copy (the baseline), median 900 μs") != std::string::npos);
}

TEST_CASE("findings: with requests in flight, the best io_uring strategy's client CPU per request against epoll's") {
  rb::Report report;
  report.environment.allocator = "glibc 2.36";
  const auto in_flight = [](std::string strategy, bool baseline, bool peer, double user_ns, double system_ns,
                            double syscalls_per_op) {
    rb::CaseResult c = timed(std::move(strategy), 10, 500'000, baseline);
    c.inflight = 64;
    c.peer = peer;
    c.cpu.user_ns_per_op = user_ns;
    c.cpu.system_ns_per_op = system_ns;
    c.io.syscalls_per_op = syscalls_per_op;
    return c;
  };
  report.cases.push_back(in_flight("string_copy", true, false, 300'000, 180'000, 19.2));
  ratio(report.cases.back(), 1.0, 1.0, 1.0);
  report.cases.push_back(in_flight("presized", false, false, 270'000, 178'000, 20.48));
  ratio(report.cases.back(), 0.97, 0.96, 0.98);
  report.cases.push_back(in_flight("epoll", false, true, 350'000, 290'000, 131.84));
  ratio(report.cases.back(), 1.16, 1.12, 1.18);
  const std::string text = joined(rb::run_findings(report));
  INFO(text);
  CHECK(text.find("10 records, 64 in flight: fastest presized at 0.97x") != std::string::npos);
  // 448 us / 64 = 7.0 us against 640 us / 64 = 10.0 us; 20.48 / 64 and 131.84 / 64 syscalls.
  CHECK(text.find("client CPU per request: presized 7.00 μs (0.32 syscalls/req) against epoll's 10.0 μs (2.06 "
                  "syscalls/req): 0.70x") != std::string::npos);
  // Without requests in flight, no such line.
  for (rb::CaseResult& c : report.cases) c.inflight = 1;
  CHECK(joined(rb::run_findings(report)).find("client CPU per request") == std::string::npos);
}

TEST_CASE("warnings: one line per kind with counts and the CV range; bimodal cases and unstable baselines by name") {
  rb::Report report = headline_like();
  report.config.target_error = 0.02;
  const double cvs[] = {0.15, 0.05, 0.10, 0.20};
  for (std::size_t i = 0; i < 4; ++i) {
    report.cases[i].diagnostics.target_error_missed = true;
    report.cases[i].diagnostics.cv = cvs[i];
  }
  report.cases[2].diagnostics.bimodal = true;
  report.cases[2].diagnostics.m_value = 3.9;
  report.cases[0].diagnostics.baseline_unstable = true;
  report.cases[5].diagnostics.too_few_iterations = true;
  const std::vector<std::string> lines = rb::summarize_warnings(report);
  const std::string text = joined(lines);
  INFO(text);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] ==
        "Error above the 2.0 % target in 4 of 6 cases (CV 5-20 %): this machine is noisy; ratios are paired by round "
        "and stay usable");
  CHECK(lines[1] == "fewer than 5 iterations kept in 1 of 6 cases: floor_parse weather 10000 (system)");
  CHECK(lines[2] == "the distribution seems bimodal (m-value > 3.2) in 1 of 6 cases: streaming weather 10000 (system) (3.90)");
  CHECK(lines[3] == "unstable baseline (CV > 10 %), every ratio against it moves from run to run: string_copy weather "
                    "10000 (system) (CV 15 %)");

  report.config.interleave = false;
  CHECK(rb::summarize_warnings(report)[0].find("the ratios are not paired") != std::string::npos);
  CHECK(rb::summarize_warnings(headline_like()).empty());
}

TEST_CASE("findings: rows beyond 1.2x floor_transfer + their own parse floor are named with the time beyond") {
  rb::Report report = headline_like();
  for (rb::CaseResult& c : report.cases) {
    if (!c.reference) c.parse_floor = "floor_parse";
  }
  // A library's row against its own floor (3.0 ms against 120 us + 2.7 ms: 1.06x), and a row whose floor
  // is not in the run, which is not compared.
  report.cases.push_back(timed("rapidjson", 10000, 3'000'000, false));
  report.cases.back().parse_floor = "floor_parse_rapidjson";
  report.cases.push_back(timed("floor_parse_rapidjson", 10000, 2'700'000, false));
  report.cases.back().reference = true;
  report.cases.push_back(timed("nlohmann", 10000, 9'000'000, false));
  report.cases.back().parse_floor = "floor_parse_nlohmann";
  std::string text = joined(rb::run_findings(report));
  INFO(text);
  // 900 / 520, 630 / 520 (just beyond 1.2), 890 / 520; streaming (1.04x) and rapidjson (1.06x) within.
  CHECK(text.find("  floors: beyond 1.2x floor_transfer (120 μs) + their own parse floor: string_copy 1.73x (+380 μs "
                  "over 400 μs of floor_parse), presized 1.21x (+110 μs over 400 μs of floor_parse), libcurl 1.71x "
                  "(+370 μs over 400 μs of floor_parse)\n") != std::string::npos);
  CHECK(text.find("of floor_parse_nlohmann") == std::string::npos);
  CHECK(text.find("rapidjson 1.") == std::string::npos);

  // Every row within: said with how many were compared. Without floor_transfer: no line.
  report.cases[0].parse_floor.clear();
  report.cases[1].parse_floor.clear();
  report.cases[3].parse_floor.clear();
  text = joined(rb::run_findings(report));
  CHECK(text.find("  floors: each of the 2 rows with a parse floor "
                  "within 1.2x floor_transfer (120 μs) + its own parse floor\n") !=
        std::string::npos);
  std::erase_if(report.cases, [](const rb::CaseResult& c) { return c.strategy == "floor_transfer"; });
  CHECK(joined(rb::run_findings(report)).find("floors:") == std::string::npos);
}

TEST_CASE("findings: a run of two clients names each row's client and keeps the first baseline") {
  rb::Report report = headline_like();
  // --client pooled,inflight: the same rows again under the in-flight client, string_copy's a baseline too.
  rb::CaseResult copy_inflight = timed("string_copy", 10000, 880'000, true, 5.9e6, 22);
  copy_inflight.client = "inflight";
  ratio(copy_inflight, 0.98, 0.96, 1.01);
  copy_inflight.memory.minor_faults_per_op = 3;
  report.cases.push_back(copy_inflight);
  rb::CaseResult streaming_inflight = timed("streaming", 10000, 500'000, false, 0, 0);
  streaming_inflight.client = "inflight";
  ratio(streaming_inflight, 0.55, 0.53, 0.57);
  report.cases.push_back(streaming_inflight);
  const std::string text = joined(rb::run_findings(report));
  INFO(text);
  check_contains(text, {"fastest streaming (in-flight client) at 0.55x string_copy's time",
                        "presized, streaming (in-flight client) allocate nothing per op, against string_copy's 5.6 MB",
                        // The baseline the ratios were taken against is the first: the pooled string_copy, with its
                        // faults.
                        "string_copy under glibc 2.36: 576 page faults/op",
                        // The second baseline has a ratio to the first and is named with its client where it is in
                        // the noise.
                        "string_copy (in-flight client) at 10000 records (0.98)"});
  CHECK(rb::row_name(copy_inflight) == "string_copy (in-flight client)");
  CHECK(rb::row_name(report.cases.front()) == "string_copy");
}
