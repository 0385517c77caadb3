// Stability diagnostics on synthetic samples: what must be flagged is, what is tight is not.
#include "ringlab/bench/core/diagnostics.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ringlab/bench/core/statistics.hpp"

namespace rb = ringlab::bench;

namespace {

// A deterministic spread around `centre`: +-`spread` in a fixed zig-zag.
std::vector<double> tight(double centre, double spread, std::size_t n) {
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(centre + spread * (static_cast<double>(i % 7) - 3) / 3);
  }
  return out;
}

rb::CaseResult make_case(std::string strategy, std::vector<double> samples, bool baseline = false) {
  rb::CaseResult c;
  c.strategy = std::move(strategy);
  c.payload = "weather";
  c.size = 1000;
  c.allocator = "glibc";
  c.baseline = baseline;
  c.samples_ns = std::move(samples);
  rb::summarize_samples(c);
  return c;
}

bool mentions(const std::vector<std::string>& lines, const std::string& a, const std::string& b) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
    return l.find(a) != std::string::npos && l.find(b) != std::string::npos;
  });
}

}  // namespace

TEST_CASE("m-value: one mode is 2, two separated modes are 4, as BenchmarkDotNet's examples") {
  CHECK(rb::m_value(std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0}) == 2);
  CHECK(rb::m_value(std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1}) == doctest::Approx(4));
  CHECK(rb::m_value(std::vector<double>{}) == 2);
  CHECK(rb::m_value(tight(1000, 10, 40)) < rb::kBimodalMValue);
}

TEST_CASE("a bimodal set of iterations is flagged, a tight one is not") {
  std::vector<double> bimodal = tight(1000, 5, 20);
  const std::vector<double> slow = tight(1600, 5, 20);
  bimodal.insert(bimodal.end(), slow.begin(), slow.end());
  const rb::CaseResult two = make_case("two_modes", bimodal);
  const rb::Diagnostics d = rb::diagnose(two, 0.02);
  REQUIRE(d.m_value.has_value());
  CHECK(*d.m_value > rb::kBimodalMValue);
  CHECK(d.bimodal);

  const rb::Diagnostics t = rb::diagnose(make_case("tight", tight(1000, 5, 40)), 0.02);
  REQUIRE(t.m_value.has_value());
  CHECK_FALSE(t.bimodal);
  CHECK_FALSE(t.target_error_missed);
  CHECK_FALSE(t.error_above_mean);
  CHECK_FALSE(t.too_few_iterations);
  REQUIRE(t.cv.has_value());
  CHECK(*t.cv < 0.01);
}

TEST_CASE("a missed target error, an Error above the Mean and too few iterations are flagged") {
  // Wide spread over 6 samples: Error (t = 5.96 at 99.9 %, 5 df) is far above 2 % of the Mean.
  const rb::Diagnostics wide = rb::diagnose(make_case("wide", {800, 1200, 900, 1100, 1000, 1050}), 0.02);
  CHECK(wide.target_error_missed);
  CHECK_FALSE(wide.error_above_mean);
  CHECK_FALSE(wide.too_few_iterations);

  const rb::Diagnostics huge = rb::diagnose(make_case("huge", {10, 1000, 20, 900, 30, 1100}), 0.02);
  CHECK(huge.error_above_mean);

  const rb::Diagnostics few = rb::diagnose(make_case("few", {1000, 1001, 1002}), 0.02);
  CHECK(few.too_few_iterations);
  CHECK_FALSE(few.m_value.has_value());  // too few to look for modes
}

TEST_CASE("failed and skipped cases get no diagnostics") {
  rb::CaseResult c = make_case("failed", {1, 100, 1, 100});
  c.status = rb::CaseStatus::failed;
  const rb::Diagnostics d = rb::diagnose(c, 0.02);
  CHECK_FALSE(d.cv.has_value());
  CHECK_FALSE(d.too_few_iterations);
}

TEST_CASE("an unstable baseline warns that every ratio against it is unreliable; references are exempt") {
  rb::Report report;
  report.config.target_error = 0.5;  // only the baseline's spread matters here
  std::vector<double> noisy;
  for (int i = 0; i < 30; ++i) noisy.push_back(i % 2 == 0 ? 1000 : 1300);
  report.cases.push_back(make_case("string_copy", noisy, /*baseline=*/true));
  report.cases.push_back(make_case("presized", tight(900, 3, 30)));
  rb::CaseResult floor = make_case("floor_transfer", tight(300, 1, 30));
  floor.reference = true;
  report.cases.push_back(floor);
  rb::compute_diagnostics(report);
  CHECK(report.cases[0].diagnostics.baseline_unstable);
  CHECK(report.cases[1].diagnostics.baseline_unstable);
  CHECK_FALSE(report.cases[2].diagnostics.baseline_unstable);
  const auto warnings = rb::diagnostic_warnings(report);
  CHECK(mentions(warnings, "baseline string_copy weather 1000", "every ratio against it is unreliable"));
  CHECK_FALSE(mentions(warnings, "floor_transfer", ""));
  CHECK_FALSE(mentions(warnings, "presized", ""));
}

TEST_CASE("a stable run has no warnings; each affected case is named with its reasons") {
  rb::Report report;
  report.config.target_error = 0.02;
  report.cases.push_back(make_case("string_copy", tight(1000, 2, 30), true));
  report.cases.push_back(make_case("views", tight(700, 2, 30)));
  rb::compute_diagnostics(report);
  CHECK(rb::diagnostic_warnings(report).empty());

  report.cases.push_back(make_case("wide", {800, 1200, 900, 1100, 1000, 1050}));
  rb::compute_diagnostics(report);
  const auto warnings = rb::diagnostic_warnings(report);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].starts_with("wide weather 1000 (glibc): Error is "));
  CHECK(warnings[0].find("above the target 2.0 %") != std::string::npos);
  CHECK(warnings[0].find("(CV ") != std::string::npos);
}
