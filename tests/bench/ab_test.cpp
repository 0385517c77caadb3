// core/ab.hpp: the before/after run's estimates, verdicts, gate and report.json.
#include "ringlab/bench/core/ab.hpp"
#include "ringlab/bench/core/statistics.hpp"
#include "ringlab/bench/report/ab_report.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

namespace rb = ringlab::bench;

namespace {

// `n` rounds whose before samples drift (the machine) and whose after samples are `factor` times them,
// with a multiplicative noise of about `noise` (uniform, both sides).
void fill_pairs(rb::AbCase& c, std::size_t n, double factor, double noise, unsigned seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> jitter(-noise, noise);
  for (std::size_t i = 0; i < n; ++i) {
    const double machine = 1000 * (1 + 0.3 * std::sin(static_cast<double>(i)));  // a drift of ±30 %
    c.before_ns.push_back(machine * (1 + jitter(random)));
    c.after_ns.push_back(machine * factor * (1 + jitter(random)));
    c.before_cpu_ns.push_back(c.before_ns.back() / 2);
    c.after_cpu_ns.push_back(c.after_ns.back() / 2);
    c.after_first.push_back(i % 2 == 1);
  }
}

rb::AbReport report_of(std::vector<rb::AbCase> cases) {
  rb::AbReport report;
  report.cases = std::move(cases);
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    report.cases[i].before_index = i;
    report.cases[i].after_index = i;
    report.before.report.cases.emplace_back();
    report.after.report.cases.emplace_back();
  }
  return report;
}

}  // namespace

TEST_CASE("the normal quantile") {
  CHECK(rb::normal_quantile(0.5) == doctest::Approx(0).epsilon(1e-9));
  CHECK(rb::normal_quantile(0.975) == doctest::Approx(1.959964).epsilon(1e-6));
  CHECK(rb::normal_quantile(0.9) == doctest::Approx(1.281552).epsilon(1e-6));
  CHECK(std::isnan(rb::normal_quantile(0)));
  CHECK(std::isnan(rb::normal_quantile(1)));
}

TEST_CASE("the ratio is the median of the per-round ratios, whatever the machine's drift between rounds") {
  rb::AbCase c;
  fill_pairs(c, 40, 1.05, 0.002, 1);
  const rb::AbEstimate e = rb::estimate_change(c.before_ns, c.after_ns, c.after_first, 0.95, 0.01, 0.9);
  CHECK(e.pairs == 20);  // balanced pairs of rounds
  CHECK(e.ratio == doctest::Approx(1.05).epsilon(0.003));
  CHECK(e.low < e.ratio);
  CHECK(e.high > e.ratio);
  CHECK(e.low > 1.04);
  CHECK(e.high < 1.06);
  // The detectable change is the band plus a few standard errors of a small noise.
  CHECK(e.mde > 0.01);
  CHECK(e.mde < 0.015);
}

TEST_CASE("the order's effect cancels in balanced pairs of rounds: the first of a pair 3 % slower moves no ratio") {
  rb::AbCase c;
  fill_pairs(c, 40, 1.0, 0.001, 9);
  for (std::size_t i = 0; i < c.after_ns.size(); ++i) {
    (c.after_first[i] ? c.after_ns[i] : c.before_ns[i]) *= 1.03;
  }
  const auto balanced = rb::estimate_change(c.before_ns, c.after_ns, c.after_first, 0.95, 0.01, 0.9);
  CHECK(balanced.ratio == doctest::Approx(1.0).epsilon(0.002));
  CHECK(balanced.high - balanced.low < 0.005);
  // Read round by round, the same samples are two clusters 6 % apart.
  const auto unordered = rb::estimate_change(c.before_ns, c.after_ns, {}, 0.95, 0.01, 0.9);
  CHECK(unordered.high - unordered.low > 0.04);
  CHECK(unordered.mde > balanced.mde);
}

TEST_CASE("more noise or a stricter level makes the smallest detectable change larger") {
  rb::AbCase quiet;
  rb::AbCase noisy;
  fill_pairs(quiet, 40, 1.0, 0.002, 2);
  fill_pairs(noisy, 40, 1.0, 0.02, 2);
  const auto q = rb::estimate_change(quiet.before_ns, quiet.after_ns, quiet.after_first, 0.95, 0.01, 0.9);
  const auto n = rb::estimate_change(noisy.before_ns, noisy.after_ns, noisy.after_first, 0.95, 0.01, 0.9);
  const auto strict = rb::estimate_change(noisy.before_ns, noisy.after_ns, noisy.after_first, 0.999, 0.01, 0.9);
  CHECK(n.mde > q.mde);
  CHECK(strict.mde > n.mde);
  CHECK(strict.high - strict.low > n.high - n.low);
}

TEST_CASE("too few pairs: a ratio but no interval; none at all: nothing") {
  const std::vector<double> before{100, 100, 100};
  const std::vector<double> after{110, 110, 110};
  const auto e = rb::estimate_change(before, after, {}, 0.95, 0.01, 0.9);
  CHECK(e.ratio == doctest::Approx(1.1));
  CHECK(std::isnan(e.low));
  const auto none = rb::estimate_change({}, {}, {}, 0.95, 0.01, 0.9);
  CHECK(none.pairs == 0);
  CHECK(std::isnan(none.ratio));
  // A pair with a zero or missing side is not a pair.
  const std::vector<double> with_zero{0, 100};
  CHECK(rb::estimate_change(with_zero, std::vector<double>{100, 100}, {}, 0.95, 0.01, 0.9).pairs == 1);
}

TEST_CASE("verdicts: slower or faster only beyond the band with the corrected interval, within the noise otherwise") {
  std::vector<rb::AbCase> cases(5);
  fill_pairs(cases[0], 40, 1.00, 0.005, 3);   // the same
  fill_pairs(cases[1], 40, 1.05, 0.005, 4);   // 5 % slower
  fill_pairs(cases[2], 40, 0.95, 0.005, 5);   // 5 % faster
  fill_pairs(cases[3], 40, 1.005, 0.001, 6);  // a real 0.5 %, inside the band
  cases[4].reason = "the after build has no such case";
  rb::AbReport report = report_of(std::move(cases));
  report.method.fail_over = 0.02;
  rb::judge(report);
  CHECK(report.method.compared == 4);
  // 4 cases x time and CPU; the 5 % cases' four quantities are beyond the band, and every interval is
  // drawn at the level of the fourth of them.
  CHECK(report.method.correction == "Benjamini-Hochberg");
  CHECK(report.method.discoveries == 4);
  CHECK(report.method.case_level == doctest::Approx(1 - 4 * 0.05 / 8));
  CHECK(report.method.detect_level == doctest::Approx(1 - 0.05 / 8));
  CHECK(report.cases[0].verdict == rb::AbVerdict::within_noise);
  CHECK(report.cases[1].verdict == rb::AbVerdict::slower);
  CHECK(report.cases[2].verdict == rb::AbVerdict::faster);
  CHECK(report.cases[3].verdict == rb::AbVerdict::within_noise);
  CHECK(report.cases[4].verdict == rb::AbVerdict::not_compared);
  CHECK(report.cases[1].cpu.ratio == doctest::Approx(1.05).epsilon(0.01));
  CHECK(report.cases[1].moved == "time, CPU");
  CHECK(report.cases[0].moved.empty());
  // The gate: only the 5 % case's interval lies wholly above 1.02.
  const auto over = rb::over_gate(report);
  REQUIRE(over.size() == 1);
  CHECK(over[0]->name == report.cases[1].name);
  // Without a gate nothing is over it.
  report.method.fail_over.reset();
  rb::judge(report);
  CHECK(rb::over_gate(report).empty());
}

TEST_CASE("time or CPU moves the verdict and the verdict names which; when they disagree it is mixed") {
  std::vector<rb::AbCase> cases(2);
  fill_pairs(cases[0], 40, 1.0, 0.003, 11);
  fill_pairs(cases[1], 40, 1.0, 0.003, 12);
  // Case 0: the same time, 4 % more CPU (a busy wait hidden in a wait). Case 1: 4 % less time, 4 % more CPU.
  for (double& v : cases[0].after_cpu_ns) v *= 1.04;
  for (double& v : cases[1].after_ns) v *= 0.96;
  for (double& v : cases[1].after_cpu_ns) v *= 1.04;
  rb::AbReport report = report_of(std::move(cases));
  report.method.fail_over = 0.02;
  rb::judge(report);
  CHECK(report.cases[0].time_verdict == rb::AbVerdict::within_noise);
  CHECK(report.cases[0].cpu_verdict == rb::AbVerdict::slower);
  CHECK(report.cases[0].verdict == rb::AbVerdict::slower);
  CHECK(report.cases[0].moved == "CPU");
  CHECK(report.cases[0].over_gate);  // CPU beyond the gate is over it
  CHECK(report.cases[1].verdict == rb::AbVerdict::mixed);
  CHECK(report.cases[1].moved == "time, CPU");
  CHECK(rb::verdict_name(rb::AbVerdict::mixed) == "mixed");
}

TEST_CASE("an A/A of pure noise over many cases flags none: the correction holds the whole suite") {
  std::vector<rb::AbCase> cases(30);
  for (std::size_t i = 0; i < cases.size(); ++i) fill_pairs(cases[i], 40, 1.0, 0.01, 100 + static_cast<unsigned>(i));
  rb::AbReport report = report_of(std::move(cases));
  rb::judge(report);
  for (const rb::AbCase& c : report.cases) CHECK(c.verdict == rb::AbVerdict::within_noise);
}

TEST_CASE("the sign test's tail and the p-value that a median lies beyond the band") {
  CHECK(rb::binomial_half_at_most(10, 0) == doctest::Approx(1.0 / 1024));
  CHECK(rb::binomial_half_at_most(10, 5) == doctest::Approx(638.0 / 1024));
  CHECK(rb::binomial_half_at_most(4, 4) == 1);
  CHECK(rb::binomial_half_at_most(2000, 2000) == 1);
  CHECK(rb::binomial_half_at_most(2000, 1000) == doctest::Approx(0.5 + 0.5 * 0.01783).epsilon(0.001));
  const double up = std::log(1.05);
  const std::vector<double> all_up(10, up);
  CHECK(rb::beyond_band_p(all_up, 0.01) == doctest::Approx(2.0 / 1024));  // every value beyond +1 %
  std::vector<double> all_down(10, -up);
  CHECK(rb::beyond_band_p(all_down, 0.01) == doctest::Approx(2.0 / 1024));
  const std::vector<double> inside(10, std::log(1.005));
  CHECK(rb::beyond_band_p(inside, 0.01) == 1);
  CHECK(rb::beyond_band_p({}, 0.01) == 1);
}

TEST_CASE("the interval at level L clears the band exactly when the p-value is at most 1 - L") {
  for (unsigned seed = 0; seed < 40; ++seed) {
    rb::AbCase c;
    fill_pairs(c, 60, 1.0 + 0.004 * seed, 0.02, 200 + seed);
    const std::vector<double> logs = rb::pair_log_ratios(c.before_ns, c.after_ns, c.after_first);
    const double p = rb::beyond_band_p(logs, 0.01);
    for (double level : {0.9, 0.95, 0.99, 0.999}) {
      const auto e = rb::estimate_change(c.before_ns, c.after_ns, c.after_first, level, 0.01, 0.9);
      const bool clears = std::isfinite(e.low) && (e.low > 1.01 || e.high < 1 / 1.01);
      CHECK_MESSAGE(clears == (p <= 1 - level), "seed ", seed, " level ", level, " p ", p);
    }
  }
}

namespace {

// 40 balanced pairs of rounds: `unchanged` of them with after = before, the rest 5 % slower; the CPU the same on
// both sides.
rb::AbCase partly_slower(std::size_t unchanged) {
  rb::AbCase c;
  for (std::size_t pair = 0; pair < 40; ++pair) {
    for (bool after_first : {false, true}) {
      c.before_ns.push_back(1000);
      c.after_ns.push_back(pair < unchanged ? 1000 : 1050);
      c.before_cpu_ns.push_back(500);
      c.after_cpu_ns.push_back(500);
      c.after_first.push_back(after_first);
    }
  }
  return c;
}

}  // namespace

TEST_CASE("the correction: several quantities moved share a looser level; one alone must pass Bonferroni's") {
  // 11 of 40 pairs unchanged: the sign test's p is 2 P(B(40, 1/2) <= 11) = 0.0064, above Bonferroni's
  // 0.05 / 20 for 10 cases, below 3 x 0.05 / 20.
  std::vector<rb::AbCase> three(10);
  for (std::size_t i = 0; i < three.size(); ++i) three[i] = partly_slower(i < 3 ? 11 : 40);
  rb::AbReport report = report_of(std::move(three));
  rb::judge(report);
  CHECK(report.method.discoveries == 3);
  CHECK(report.method.case_level == doctest::Approx(1 - 3 * 0.05 / 20));
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    CHECK(report.cases[i].verdict == (i < 3 ? rb::AbVerdict::slower : rb::AbVerdict::within_noise));
    CHECK(report.cases[i].cpu_verdict == rb::AbVerdict::within_noise);
  }
  CHECK(report.cases[0].time.low > 1.01);
  // At Bonferroni's level the same interval would not clear the band.
  const auto bonferroni = rb::estimate_change(report.cases[0].before_ns, report.cases[0].after_ns,
                                              report.cases[0].after_first, 1 - 0.05 / 20, 0.01, 0.9);
  CHECK(bonferroni.low <= 1.01);
  // The same move in one case alone: nothing is beyond the band.
  std::vector<rb::AbCase> one(10);
  for (std::size_t i = 0; i < one.size(); ++i) one[i] = partly_slower(i < 1 ? 11 : 40);
  rb::AbReport alone = report_of(std::move(one));
  rb::judge(alone);
  CHECK(alone.method.discoveries == 0);
  CHECK(alone.method.case_level == doctest::Approx(1 - 0.05 / 20));
  CHECK(alone.cases[0].verdict == rb::AbVerdict::within_noise);
}

TEST_CASE("counts are the same within 0.01 per op or 0.1 %; one more per op differs") {
  CHECK(rb::same_count(3.002, 3.001));
  CHECK(rb::same_count(486'400.0, 486'500.0));
  CHECK_FALSE(rb::same_count(3.0, 4.0));
  CHECK_FALSE(rb::same_count(3.0, std::nullopt));
  CHECK(rb::same_count(std::nullopt, std::nullopt));
  rb::AbCase c;
  c.before_allocations = 3;
  c.after_allocations = 3;
  c.before_syscalls = 2;
  c.after_syscalls = 2;
  CHECK_FALSE(c.counts_differ());
  c.after_syscalls = 3;
  CHECK(c.counts_differ());
}

TEST_CASE("judge reads each build's counts from its report by the case's index") {
  std::vector<rb::AbCase> cases(1);
  fill_pairs(cases[0], 10, 1.0, 0.001, 7);
  rb::AbReport report = report_of(std::move(cases));
  report.before.report.cases[0].memory.allocs_per_op = 2;
  report.after.report.cases[0].memory.allocs_per_op = 1;
  report.before.report.cases[0].io.syscalls_per_op = 3;
  report.after.report.cases[0].io.syscalls_per_op = 3;
  rb::judge(report);
  CHECK(report.cases[0].before_allocations == 2);
  CHECK(report.cases[0].after_allocations == 1);
  CHECK(report.cases[0].counts_differ());
  // A case its build did not measure has no counts.
  report.after.report.cases[0].status = rb::CaseStatus::failed;
  rb::judge(report);
  CHECK_FALSE(report.cases[0].after_allocations);
}

TEST_CASE("report.json of a before/after run reads back as written, and is told apart from a suite's") {
  std::vector<rb::AbCase> cases(2);
  fill_pairs(cases[0], 12, 1.03, 0.002, 8);
  cases[0].name = "views weather 10000";
  cases[0].strategy = "views";
  cases[0].size = 10000;
  cases[1].name = "epoll weather 10";
  cases[1].reason = "the before build does not measure it (skipped or failed)";
  rb::AbReport report = report_of(std::move(cases));
  report.side = "server";
  report.slowdown = "views:2";
  report.rounds = 12;
  report.method.fail_over = 0.02;
  report.before.bench = "build/bench";
  report.before.code = "3e1a3d6f3982d8b125db34b423e0db12acd44144 (http/src, json/src)";
  report.environment.cpu = "a CPU";
  report.config.suite = "headline";
  report.after.report.environment.git_commit = "abc";
  rb::judge(report);
  const nlohmann::json j = rb::to_json(report);
  CHECK(rb::is_ab_report(j));
  auto back = rb::ab_report_from_json(nlohmann::json::parse(j.dump()));
  REQUIRE(back);
  CHECK(back->side == "server");
  CHECK(back->slowdown == "views:2");
  CHECK(back->rounds == 12);
  CHECK(back->method.fail_over == doctest::Approx(0.02));
  CHECK(back->method.case_level == doctest::Approx(report.method.case_level));
  CHECK(back->method.detect_level == doctest::Approx(report.method.detect_level));
  CHECK(back->method.discoveries == report.method.discoveries);
  CHECK(back->method.correction == "Benjamini-Hochberg");
  CHECK(back->environment.cpu == "a CPU");
  CHECK(back->config.suite == "headline");
  CHECK(back->after.report.environment.git_commit == "abc");
  CHECK(back->before.bench == "build/bench");
  CHECK(back->before.code == report.before.code);
  CHECK(back->after.code.empty());
  CHECK_FALSE(j.at("after").contains("code"));
  REQUIRE(back->cases.size() == 2);
  CHECK(back->cases[0].before_ns == report.cases[0].before_ns);
  CHECK(back->cases[0].after_first == report.cases[0].after_first);
  CHECK(back->cases[0].time.ratio == doctest::Approx(report.cases[0].time.ratio));
  CHECK(back->cases[0].verdict == report.cases[0].verdict);
  CHECK(back->cases[0].time_verdict == report.cases[0].time_verdict);
  CHECK(back->cases[0].cpu_verdict == report.cases[0].cpu_verdict);
  CHECK(back->cases[0].moved == report.cases[0].moved);
  CHECK(back->method.per_case == 2);
  CHECK(back->cases[0].before_index == 0);
  CHECK(back->cases[1].verdict == rb::AbVerdict::not_compared);
  CHECK(back->cases[1].reason == report.cases[1].reason);
  // A suite's report is not one; a newer schema is refused.
  CHECK_FALSE(rb::is_ab_report(nlohmann::json{{"schema_version", 6}, {"cases", nlohmann::json::array()}}));
  CHECK_FALSE(rb::ab_report_from_json(nlohmann::json{{"schema_version", 6}}));
  nlohmann::json newer = j;
  newer["schema_version"] = rb::kAbSchemaVersion + 1;
  CHECK_FALSE(rb::ab_report_from_json(newer));
}

TEST_CASE("a build carrying another commit's code under test is named by its page for what it is") {
  rb::AbReport report = report_of({});
  report.config.suite = "headline";
  report.environment.timestamp = "2026-12-07T01:00:00Z";
  report.before.report.environment.git_commit = "5eb73135c091dd62f3794689e84f4b183a3301df";
  report.before.report.environment.git_dirty = true;  // the composed tree differs from its commit
  report.before.code = "3e1a3d6f3982d8b125db34b423e0db12acd44144 (http/src, json/src)";
  report.after.report.environment.git_commit = "926537038e0e15183601ce10a126aad6236aa870";
  report.after.report.environment.git_dirty = false;
  rb::judge(report);
  CHECK(rb::ab_page_name(report) == "2026-12-07-ab-headline-5eb7313+code-3e1a3d6-9265370.md");
  const std::string page = rb::render_ab_page(report, "tools/bench report report.json", std::nullopt);
  CHECK(page.find("| Before | bench built from `5eb73135c091dd62f3794689e84f4b183a3301df` with the code under test of "
                  "`3e1a3d6f3982d8b125db34b423e0db12acd44144 (http/src, json/src)`") != std::string::npos);
  CHECK(page.find("uncommitted") == std::string::npos);
  // Without it, a dirty tree is what the page says it is.
  report.before.code.clear();
  CHECK(rb::ab_page_name(report) == "2026-12-07-ab-headline-5eb7313+changes-9265370.md");
  CHECK(rb::render_ab_page(report, "tools/bench report report.json", std::nullopt).find("with uncommitted changes") !=
        std::string::npos);
}
