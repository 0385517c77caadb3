// A before/after run (bench --before BENCH --after BENCH) as a user runs it: two workers of the built
// bench against the built server, their report, its page, the gate, the calibrated slowdown and the
// refusals. Timings here prove nothing (a sanitized build on a shared machine): the verdicts of an A/A are
// not asserted, only a slowdown far beyond any noise.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ringlab/bench/core/ab.hpp"
#include "../support/bench_runs.hpp"
#include "finished_runs.hpp"
#include "support.hpp"
#include "text_checks.hpp"

namespace rb = ringlab::bench;
namespace e2e = ringlab::e2e;
using namespace std::chrono_literals;
using ringlab::testing::kBench;
using ringlab::testing::kServer;
using ringlab::bench::testing::check_contains;
using ringlab::bench::testing::run_to_success;

namespace {

struct AbRun {
  int status = -1;
  std::string out;  // stdout
  std::string err;  // stderr
  std::filesystem::path report;  // RUN/report.json, empty when none
  std::string logs;              // the end of each worker's log, for a failure's message
};

// bench headline with small settings and `arguments`, to completion.
AbRun run_ab(const e2e::TempDir& dir, std::vector<std::string> arguments) {
  std::vector<std::string> argv{kBench, "headline", "--filter", "views,string_copy", "--sizes", "10", "--server", kServer,
                                "--iteration-time", "5", "--warmup", "1", "--out", dir.file("out")};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  AbRun run;
  const auto status = e2e::run(argv, dir.file("stdout"), dir.file("stderr"), 300s);
  REQUIRE(status.has_value());
  run.status = *status;
  run.out = e2e::read_file(dir.file("stdout"));
  run.err = e2e::read_file(dir.file("stderr"));
  std::error_code error;
  if (std::filesystem::exists(dir.file("out"), error)) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.file("out"))) {
      if (entry.path().filename() == "report.json") run.report = entry.path();
      if (entry.path().extension() == ".log") {
        const std::string text = e2e::read_file(entry.path().string());
        run.logs += entry.path().filename().string() + ": ..." + text.substr(text.size() > 1500 ? text.size() - 1500 : 0) + "\n";
      }
    }
  }
  return run;
}

const rb::AbCase& case_named(const rb::AbReport& report, const std::string& name) {
  for (const rb::AbCase& c : report.cases) {
    if (c.name == name) return c;
  }
  FAIL("no case " << name);
  return report.cases.front();
}

}  // namespace

TEST_CASE("an A/A run: every case in both builds in every round, paired, alternating, and a page of it") {
  e2e::TempDir dir;
  const AbRun run = run_ab(dir, {"--before", kBench, "--after", kBench, "--rounds", "6"});
  INFO(run.err);
  INFO(run.logs);
  REQUIRE(run.status == 0);
  REQUIRE(!run.report.empty());
  auto report = rb::read_ab_report_file(run.report);
  REQUIRE_MESSAGE(report, (report ? "" : report.error().message));
  CHECK(report->rounds == 6);
  CHECK(report->side == "client");
  CHECK(report->method.compared == 2);
  CHECK(report->method.case_level == doctest::Approx(1 - 0.05 / 4));  // 2 cases x time and CPU
  for (const char* name : {"views weather 10", "string_copy weather 10"}) {
    const rb::AbCase& c = case_named(*report, name);
    INFO(name);
    CHECK(c.before_ns.size() == 6);
    CHECK(c.after_ns.size() == 6);
    CHECK(c.after_cpu_ns.size() == 6);
    CHECK(c.verdict != rb::AbVerdict::not_compared);
    CHECK(std::isfinite(c.time.ratio));
    CHECK(std::isfinite(c.time.mde));
    CHECK(c.size == 10);
    // Which build went first alternates, so each goes first in half the rounds.
    std::size_t after_first = 0;
    for (bool first : c.after_first) after_first += first ? 1 : 0;
    CHECK(after_first == 3);
    // The counts come from each build's report; one build, one behaviour.
    CHECK(c.before_allocations.has_value());
    CHECK(c.before_syscalls.has_value());
  }
  // Both builds ran the same ops per iteration, and measured what the parent asked, as their reports say.
  REQUIRE(report->before.report.cases.size() == 2);
  REQUIRE(report->after.report.cases.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(report->before.report.cases[i].ops_per_iteration == report->after.report.cases[i].ops_per_iteration);
    CHECK(report->before.report.cases[i].samples_ns.size() == 6);
  }
  CHECK(run.out.find("| Case | Before | After | Time after/before (interval) | CPU after/before (interval) |") !=
        std::string::npos);
  CHECK(run.out.find("6 rounds, 2 cases compared") != std::string::npos);
  CHECK(std::filesystem::exists(run.report.parent_path() / "before.log"));
  CHECK(std::filesystem::exists(run.report.parent_path() / "after.log"));
  // A suite's reader refuses it with what reads it.
  auto as_suite = rb::read_report_file(run.report);
  REQUIRE_FALSE(as_suite);
  CHECK(as_suite.error().message.find("before/after") != std::string::npos);

  // bench report makes its page: the two commits, the method, no machine path.
  run_to_success(dir, {kBench, "report", run.report.string(), "--out", dir.file("pages")}, "page-", 60s);
  std::string page;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("pages"))) {
    CHECK(entry.path().filename().string().find("-ab-headline-") != std::string::npos);
    page = e2e::read_file(entry.path().string());
  }
  check_contains(page, {"# Before and after: suite headline", "--before BEFORE --after AFTER",
                        "## How the verdicts are reached", "Benjamini and Hochberg"});
  CHECK(page.find(dir.path()) == std::string::npos);

  // A report an older bench judged (Bonferroni's correction), judged again from its per-round values.
  nlohmann::json older = nlohmann::json::parse(e2e::read_file(run.report.string()));
  older["method"]["correction"] = "Bonferroni";
  older["method"].erase("discoveries");
  const std::string older_path = dir.file("older.json");
  { std::ofstream(older_path) << older.dump(); }
  const auto again = e2e::run({kBench, "report", older_path, "--judge-again", "--out", dir.file("again")},
                              dir.file("again-stdout"), dir.file("again-stderr"), 60s);
  REQUIRE(again.has_value());
  INFO(e2e::read_file(dir.file("again-stderr")));
  REQUIRE(*again == 0);
  std::string judged;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("again"))) {
    judged = e2e::read_file(entry.path().string());
  }
  check_contains(judged, {"--judge-again", "the run itself printed verdicts by Bonferroni", "Benjamini and Hochberg"});
  // Only a before/after report has verdicts to judge again.
  const std::string not_ab = dir.file("not-ab.json");
  { std::ofstream(not_ab) << "{}"; }
  const auto refused = e2e::run({kBench, "report", not_ab, "--judge-again", "--out", dir.file("none")},
                                dir.file("none-stdout"), dir.file("none-stderr"), 60s);
  REQUIRE(refused.has_value());
  CHECK(*refused != 0);
  CHECK(e2e::read_file(dir.file("none-stderr")).find("--judge-again is for a before/after report") !=
        std::string::npos);
  // A file that says it is a before/after report and does not parse is refused with that reader's error,
  // with or without --judge-again, not read as another kind of report.
  const std::string broken = dir.file("broken-ab.json");
  { std::ofstream(broken) << R"({"kind": "ab"})"; }
  for (const bool again_too : {false, true}) {
    INFO("--judge-again: " << again_too);
    std::vector<std::string> args{kBench, "report", broken, "--out", dir.file("none")};
    if (again_too) args.push_back("--judge-again");
    const auto broken_run = e2e::run(args, dir.file("broken-stdout"), dir.file("broken-stderr"), 60s);
    REQUIRE(broken_run.has_value());
    CHECK(*broken_run != 0);
    const std::string said = e2e::read_file(dir.file("broken-stderr"));
    CHECK(said.find("before/after report") != std::string::npos);
    CHECK(said.find("broken-ab.json") != std::string::npos);
  }
}

TEST_CASE("a slowdown injected into the after build is found slower, and the gate exits 4") {
  e2e::TempDir dir;
  const AbRun run =
      run_ab(dir, {"--before", kBench, "--after", kBench, "--rounds", "20", "--slowdown", "views:100", "--fail-over", "10"});
  INFO(run.err);
  INFO(run.logs);
  CHECK(run.status == 4);
  REQUIRE(!run.report.empty());
  auto report = rb::read_ab_report_file(run.report);
  REQUIRE(report);
  CHECK(report->slowdown == "views:100");
  const rb::AbCase& views = case_named(*report, "views weather 10");
  CHECK(views.verdict == rb::AbVerdict::slower);
  CHECK(views.over_gate);
  CHECK(views.time.ratio > 1.5);
  // Only the after build was slowed: its views case says so; the before build's ran the same wrapper at 0 %.
  REQUIRE(views.after_index);
  REQUIRE(views.before_index);
  CHECK(report->after.report.cases[*views.after_index].notes.find("slowed by 100 %") != std::string::npos);
  CHECK(report->before.report.cases[*views.before_index].notes.find("slowed by 0 %") != std::string::npos);
  CHECK(run.out.find("Gate: ") != std::string::npos);
}

TEST_CASE("--compare-side server: each build's worker starts its own server") {
  e2e::TempDir dir;
  // --after-code (what tools/bench ab passes for a composed revision) is the parent's: the report keeps
  // it, the workers never see it.
  const std::string code = "0123456789abcdef0123456789abcdef01234567 (http/src, json/src)";
  const AbRun run = run_ab(dir, {"--before", kBench, "--after", kBench, "--rounds", "2", "--compare-side", "server",
                                 "--after-code", code});
  INFO(run.err);
  INFO(run.logs);
  REQUIRE(run.status == 0);
  auto report = rb::read_ab_report_file(run.report);
  REQUIRE(report);
  CHECK(report->side == "server");
  CHECK(report->before.report.environment.server.find("embedded") != std::string::npos);
  CHECK(report->after.report.environment.server.find("embedded") != std::string::npos);
  CHECK(report->before.report.environment.server != report->after.report.environment.server);
  CHECK(report->after.code == code);
  CHECK(report->before.code.empty());
}

TEST_CASE("a worker that is not a bench ends the run with one line naming its build") {
  e2e::TempDir dir;
  const AbRun run = run_ab(dir, {"--before", kBench, "--after", "/bin/true", "--rounds", "2"});
  CHECK(run.status == 1);
  CHECK(run.err.find("after build (/bin/true)") != std::string::npos);
}

TEST_CASE("before/after refusals: at parse time, exit 2, nothing started") {
  e2e::TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> refusals{
      {{"--before", kBench}, "--before and --after go together"},
      {{"--before", kBench, "--after", dir.file("none")}, "not an executable file"},
      {{"--fail-over", "2"}, "--fail-over needs --before and --after"},
      {{"--before-code", "0123456 (http/src)"}, "--before-code and --after-code need --before and --after"},
      {{"--before", kBench, "--after", kBench, "--fail-over", "0.5"}, "is below --noise-band"},
      {{"--slowdown", "views"}, "not STRATEGY:PERCENT"},
      {{"--slowdown", "views:-1"}, "not STRATEGY:PERCENT"},
      {{"--slowdown", "views:1001"}, "not STRATEGY:PERCENT"},
      {{"--slowdown", "nosuch:2"}, "no strategy nosuch"},
      {{"--before", kBench, "--after", kBench, "--compare-side", "server", "--url", "http://127.0.0.1:1"},
       "--url names one"},
      {{"--before", kBench, "--after", kBench, "--allocators", "system"}, "one allocator per run"},
  };
  for (const auto& [arguments, expected] : refusals) {
    std::vector<std::string> argv{kBench, "headline", "--out", dir.file("out")};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    const auto status = e2e::run(argv, dir.file("stdout"), dir.file("stderr"), 60s);
    REQUIRE(status.has_value());
    const std::string err = e2e::read_file(dir.file("stderr"));
    INFO(arguments.front() << " ... : " << err);
    CHECK(*status == 2);
    CHECK(err.find(expected) != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("out")));
}
