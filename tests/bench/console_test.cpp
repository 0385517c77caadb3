// The console report and the results page: what a suite run prints on the terminal (a table that fits,
// warnings by kind, rows that do not apply left out, the findings) and the page `bench report` writes.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../support/bench_cases.hpp"
#include "ringlab/bench/core/results.hpp"
#include "ringlab/bench/core/table.hpp"
#include "ringlab/bench/report/profile_summary.hpp"
#include "ringlab/bench/report/reporters.hpp"
#include "text_checks.hpp"

namespace rb = ringlab::bench;
using ringlab::testing::lines_of;
using ringlab::bench::testing::check_contains;

namespace {

rb::CaseResult measured(std::string strategy, std::size_t size, double ns, bool baseline) {
  rb::CaseResult c = ringlab::testing::weather_case(ringlab::testing::prototype_case("system", 100),
                                                    std::move(strategy), size, baseline);
  ringlab::testing::add_copying_costs(c);
  // Eight paired rounds around `ns`: enough for the Ratio's interval.
  for (int i = 0; i < 8; ++i) c.samples_ns.push_back(ns * (1 + 0.01 * (i % 3)));
  return c;
}

// The headline suite's shape: nine strategies (the two floors among them) at three sizes, plus a
// strategy that does not apply to the payload at every size.
rb::Report headline_report() {
  rb::Report r;
  r.config.suite = "headline";
  r.config.interleave = true;
  r.config.arguments = {};
  r.environment.cpu = "AMD EPYC 9B14 96-Core Processor with a long model name";
  r.environment.cores = 2;
  r.environment.kernel = "6.18.44-fc-v1252";
  r.environment.compiler = "g++ 12.2.0";
  r.environment.build_type = "Release";
  r.environment.git_commit = "ccf9a3f61a89a258dcb78334c9a7bba5c7c09407";
  r.environment.git_dirty = false;
  r.environment.timestamp = "2026-12-04T00:33:38Z";
  r.environment.allocator = "glibc 2.36 (/lib/x86_64-linux-gnu/libc.so.6), called through /somewhere/build/bench";
  r.environment.simdjson_kernel = "icelake (RINGLAB_SIMD=native)";
  r.environment.warnings = {"counters: hardware counters are not supported on this machine (perf_event_open: "
                            "ENOENT), software counters stay, and this sentence is long enough to need wrapping "
                            "at the console's width of one hundred and sixty columns"};
  const char* names[] = {"string_copy", "presized", "views", "provided_buffers", "streaming",
                         "libcurl", "blocking_sockets", "floor_transfer", "floor_parse"};
  for (std::size_t size : {10u, 1000u, 10000u}) {
    double ns = 30'000.0 * static_cast<double>(size) / 10;
    for (const char* name : names) {
      r.cases.push_back(measured(name, size, ns, std::string(name) == "string_copy"));
      r.cases.back().reference = std::string(name).starts_with("floor_");
      ns *= 0.97;
    }
    rb::CaseResult skipped = measured("three_fields", size, 0, false);
    skipped.samples_ns.clear();
    skipped.status = rb::CaseStatus::skipped;
    skipped.not_applicable = true;
    skipped.reason = "three_fields reads the github records only";
    r.cases.push_back(skipped);
  }
  rb::compute_ratios(r);
  return r;
}

}  // namespace

TEST_CASE("the console: a table that fits, rows that do not apply left out, warnings by kind, the findings") {
  rb::Report report = headline_report();
  for (rb::CaseResult& c : report.cases) {
    if (c.status != rb::CaseStatus::ok) continue;
    c.diagnostics.target_error_missed = true;
    c.diagnostics.cv = 0.12;
  }
  const std::string console = rb::render_console(report);
  INFO(console);
  const auto lines = lines_of(console);
  for (const std::string& line : lines) {
    INFO(line);
    CHECK(rb::display_width(line) <= rb::kConsoleWidth);
  }
  // 3 x 9 rows, 2 separators, header and rule; the header, the warnings and the findings around it.
  CHECK(lines.size() < 100);
  CHECK(console.find("| Method ") != std::string::npos);
  CHECK(console.find("| Ratio 95% CI |") != std::string::npos);
  CHECK(console.find("| StdDev") == std::string::npos);  // the full table's columns stay in report.md
  CHECK(console.find("| three_fields") == std::string::npos);
  CHECK(console.find("not shown, not applicable: three_fields on weather (three_fields reads the github records "
                     "only)") != std::string::npos);
  // One warning line for all 27 cases, not one per case.
  CHECK(console.find("Error above the 2.0 % target in 27 of 27 cases (CV 12 %)") != std::string::npos);
  CHECK(console.find("string_copy weather 10 (system): Error") == std::string::npos);
  CHECK(console.find("What this run says") != std::string::npos);
  CHECK(console.find("- 10000 records: fastest blocking_sockets") != std::string::npos);
  CHECK(console.find("Legend") == std::string::npos);
  // The wrapped environment warning keeps every word.
  CHECK(console.find("one hundred and sixty") != std::string::npos);
}

TEST_CASE("console prose breaks between clauses, so a phrase is not cut across lines") {
  const std::string finding =
      "weather 10000: fastest views at 0.62x string_copy; 0.96x the floors' sum (105.2 us transfer + 330.1 us parse), "
      "0.96x the larger floor";
  // 125 columns: word by word, "0.96x the" would still fit on the first line and "larger" start the second;
  // the last clause does not fit after the others, so it starts a line of its own.
  const std::string wrapped = rb::wrap_text(finding, 125, "- ", "  ");
  INFO(wrapped);
  const auto lines = lines_of(wrapped);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "- weather 10000: fastest views at 0.62x string_copy; 0.96x the floors' sum (105.2 us transfer + "
                    "330.1 us parse),");
  CHECK(lines[1] == "  0.96x the larger floor");
  // A clause longer than a line breaks between words; a word longer than a line keeps a line of its own.
  const auto long_clause = lines_of(rb::wrap_text("one two three four five six seven", 12, "", ""));
  CHECK(long_clause == std::vector<std::string>{"one two", "three four", "five six", "seven"});
  const auto path = lines_of(rb::wrap_text("see /a/very/long/path/to/a/file now", 10, "", "  "));
  CHECK(path == std::vector<std::string>{"see", "  /a/very/long/path/to/a/file", "  now"});
}

TEST_CASE("over an emulated link the console's header says what the link measured") {
  rb::Report report = headline_report();
  rb::LinkInfo link;
  link.description = "1g: 1 Gbit/s, 100 us one way";
  link.measured_rtt_us = 231.5;
  link.measured_rtt_min_us = 212.3;
  link.rtt_samples = 200;
  link.configured_rtt_us = 200;
  link.measured_rate_mbit = 941;
  report.environment.link = link;
  const std::string console = rb::render_console(report);
  INFO(console);
  CHECK(console.find("1g: 1 Gbit/s, 100 us one way") != std::string::npos);
  CHECK(console.find("Link measured: RTT 231.5 us median (212.3 min, 200 ping-pongs; configured 200.0 us), rate 941 "
                     "Mbit/s") != std::string::npos);
}

TEST_CASE("the console shows every column when --columns asks for any") {
  rb::Report report = headline_report();
  report.config.columns = {"p50", "p90", "p99", "p999", "max"};
  const std::string console = rb::render_console(report);
  CHECK(console.find("| StdDev") != std::string::npos);
  CHECK(console.find("| Alloc Ratio") != std::string::npos);
  auto all = rb::parse_columns("all");
  REQUIRE(all.has_value());
  CHECK(all->size() == 5);
}

TEST_CASE("a results page names the command, the commit, the machine and the page's own command, and no path") {
  rb::Report report = headline_report();
  report.config.arguments = {"get", "--filter", "string_copy,views", "--sizes", "1000"};
  const std::string page = rb::render_results_page(report, "tools/bench report results/2026-12-04_00-33-38/report.json");
  INFO(page);
  CHECK(page.starts_with("# Results: suite headline, 2026-12-04\n"));
  check_contains(page, {"| Command | `tools/bench get --filter string_copy,views --sizes 1000` |",
                        "| Commit | `ccf9a3f61a89a258dcb78334c9a7bba5c7c09407` |", "| Allocator | glibc 2.36 |",
                        "| Page made by | `tools/bench report results/2026-12-04_00-33-38/report.json` |",
                        "## What this run says", "## Every column"});
  CHECK(page.find("/somewhere") == std::string::npos);
  CHECK(rb::results_page_name(report) == "2026-12-04-headline-ccf9a3f.md");
  // An argument a shell would split is quoted as typed.
  report.config.arguments = {"get", "--filter", "string_copy, views"};
  CHECK(rb::run_command_text(report.config) == "tools/bench get --filter 'string_copy, views'");
  report.environment.git_dirty = true;
  CHECK(rb::render_results_page(report, "x").find("with uncommitted changes") != std::string::npos);
}

namespace {

// What tools/profile writes (profile_summary.hpp): two cases.
constexpr std::string_view kProfileFixture = R"json({
 "format": "ringlab profile summary 1", "event": "cpu-clock", "samples_outside_spans": 0,
 "cases": [
  {"case": "epoll weather 10 x64", "spans": 1, "samples": 2000, "kernel": 0.613, "user": 0.387,
   "dsos": [{"dso": "kernel", "share": 0.613}, {"dso": "bench", "share": 0.3}, {"dso": "libc.so.6", "share": 0.087}],
   "symbols": [{"symbol": "tcp_sendmsg_locked", "dso": "kernel", "share": 0.125},
               {"symbol": "std::operator|(a, b)", "dso": "bench", "share": 0.05}]},
  {"case": "views weather 10 x64", "spans": 2, "samples": 1500, "kernel": 0.4, "user": 0.6,
   "dsos": [{"dso": "bench", "share": 0.6}, {"dso": "kernel", "share": 0.4}],
   "symbols": [{"symbol": "io_submit_sqes", "dso": "kernel", "share": 0.1}]}
 ]})json";

}  // namespace

TEST_CASE("a results page of a run under tools/profile names tools/profile and says where the CPU goes per case") {
  rb::Report report = headline_report();
  report.config.arguments = {"get", "--filter", "views,epoll", "--inflight", "64", "--perf-control",
                             "/somewhere/ctl.fifo,/somewhere/ack.fifo", "--sizes", "10"};
  CHECK(rb::run_command_text(report.config) == "tools/profile get --filter views,epoll --inflight 64 --sizes 10");
  report.config.arguments = {"get", "--perf-control=/somewhere/ctl.fifo,/somewhere/ack.fifo", "--sizes", "10"};
  CHECK(rb::run_command_text(report.config) == "tools/profile get --sizes 10");

  auto profile = rb::parse_profile_summary(kProfileFixture);
  REQUIRE_MESSAGE(profile.has_value(), profile.error().message);
  const std::string page = rb::render_results_page(report, "tools/bench report 2026-12-04_00-33-38", &*profile);
  INFO(page);
  CHECK(page.find("| Command | `tools/profile get --sizes 10` |") != std::string::npos);
  CHECK(page.find("/somewhere") == std::string::npos);
  const std::size_t section = page.find("\n## Where the CPU goes\n");
  REQUIRE(section != std::string::npos);
  const std::string where = page.substr(section);
  check_contains(where, {"cpu-clock", "client's measuring thread only", "`--no-inherit`", "interrupts off",
                         "### epoll weather 10 x64\n\n2000 samples of cpu-clock; kernel 61.3 %, user 38.7 %.",
                         "| `kernel` | 61.3 % |", "| `libc.so.6` | 8.7 % |",
                         "| `tcp_sendmsg_locked` | `kernel` | 12.5 % |",
                         // A '|' in a symbol would end the table's cell.
                         "| `std::operator\\|(a, b)` | `bench` | 5.0 % |",
                         "### views weather 10 x64\n\n1500 samples of cpu-clock; kernel 40.0 %, user 60.0 %.",
                         "| `io_submit_sqes` | `kernel` | 10.0 % |"});
  // The section comes after the tables it explains and holds no other section.
  CHECK(page.find("## Every column") < section);

  // A run without a profile: the page as before, with no such section.
  CHECK(rb::render_results_page(report, "x").find("Where the CPU goes") == std::string::npos);
}
