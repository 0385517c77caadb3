// Reporters: the markdown, CSV and JSON of one synthetic report must say the same thing.
#include "ringlab/bench/report/reporters.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ringlab/bench/core/results.hpp"
#include "ringlab/bench/core/table.hpp"
#include "../support/bench_cases.hpp"
#include "../support/same_fields.hpp"
#include "reporters_fixtures.hpp"
#include "text_checks.hpp"

namespace rb = ringlab::bench;
using ringlab::testing::lines_of;
using namespace ringlab::bench::testing;

TEST_CASE("numbers are printed with fixed decimals and thousands separators") {
  struct Row {
    double value;
    int decimals;
    std::string_view text;
  };
  const Row rows[] = {
      {7793.5, 1, "7,793.5"}, {113.1, 1, "113.1"},   {999.96, 1, "1,000.0"},        {0.004, 2, "0.00"},
      {-0.001, 2, "0.00"},    {1234567.891, 2, "1,234,567.89"}, {-1234567.891, 0, "-1,234,568"},
      {100, 0, "100"},        {1000, 0, "1,000"},
  };
  for (const Row& row : rows) {
    INFO(row.value << " with " << row.decimals << " decimals");
    CHECK(rb::format_number(row.value, row.decimals) == row.text);
  }
  CHECK(rb::format_number(std::nan(""), 2) == "NaN");
}

TEST_CASE("report formats parse from a list and refuse unknown or repeated names") {
  const auto all = rb::parse_formats("md,csv,json");
  REQUIRE(all.has_value());
  CHECK(*all == std::vector<rb::Format>{rb::Format::md, rb::Format::csv, rb::Format::json});
  CHECK(rb::parse_formats(" json ")->size() == 1);
  for (const char* bad : {"md,xml", "md,md", "", "md,"}) {
    INFO("list '" << bad << "'");
    CHECK_FALSE(rb::parse_formats(bad).has_value());
  }
  CHECK(rb::parse_formats("md,xml").error().message == "unknown report format 'xml' (md, csv, json, gbench, html)");
}

TEST_CASE("the table has BenchmarkDotNet's columns, a unit per column and a blank row between sizes") {
  const rb::Report report = synthetic_report();
  const std::string table = rb::render_table(report);
  INFO(table);
  const auto lines = lines_of(table);
  REQUIRE(lines.size() == 2 + 6 + 1);  // header, rule, 6 cases, 1 separator
  const auto header = split(lines[0], '|');
  std::vector<std::string> names;
  for (const auto& h : header) {
    std::string t = h;
    while (!t.empty() && t.front() == ' ') t.erase(t.begin());
    while (!t.empty() && t.back() == ' ') t.pop_back();
    if (!t.empty()) names.push_back(t);
  }
  const std::vector<std::string> expected{"Method", "Payload", "Size", "Mean", "Error", "StdDev", "Median", "P95",
                                          "CPU/op", "Ratio", "RatioSD", "Ratio 95% CI", "Allocated", "Allocs/op", "Alloc Ratio",
                                          "Page faults/op", "Syscalls/op", "SQEs/op", "CQEs/op"};
  CHECK(names == expected);
  // Mean column: μs chosen from the smallest mean (113.1 μs), one decimal for four digits.
  CHECK(lines[2].find("| string_copy |") != std::string::npos);
  CHECK(lines[2].find("113.1 μs") != std::string::npos);
  CHECK(lines[2].find(" 1.00 |") != std::string::npos);
  CHECK(lines[2].find("5.67 KB") != std::string::npos);
  CHECK(lines[3].find("226.2 μs") != std::string::npos);
  CHECK(lines[3].find(" 2.00 |") != std::string::npos);  // ratio of constant samples
  CHECK(lines[3].find(" 0 KB |") != std::string::npos);  // the column's unit, also for zero
  CHECK(lines[4].find("FAILED") != std::string::npos);
  CHECK(lines[5].find_first_not_of("| ") == std::string::npos);  // the blank separator row
  CHECK(lines[6].find("7,793.5 μs") != std::string::npos);
  CHECK(lines[7].find("skipped") != std::string::npos);
  CHECK(lines[8].find("5,476.0 μs") != std::string::npos);
  CHECK(lines[8].find("n/a") != std::string::npos);  // memory not measured
}

TEST_CASE("allocator jobs add an Allocator column and the ratio to the same strategy under system") {
  rb::Report report;
  report.cases.push_back(make_case("string_copy", 1000, 200'000, true));
  report.cases.push_back(make_case("presized", 1000, 150'000, false));
  report.cases.push_back(make_case("string_copy", 1000, 160'000, true));
  report.cases.back().allocator = "mimalloc";
  report.cases.push_back(make_case("presized", 1000, 150'000, false));
  report.cases.back().allocator = "mimalloc";
  rb::compute_ratios(report);
  const std::string table = rb::render_table(report);
  INFO(table);
  const auto lines = lines_of(table);
  REQUIRE(lines.size() >= 2 + 4);
  CHECK(lines[0].find("| Allocator ") != std::string::npos);
  const auto header = split(lines[0], '|');
  std::size_t sys_column = 0;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i].find("Sys Ratio") != std::string::npos) sys_column = i;
  }
  REQUIRE(sys_column != 0);
  const auto sys_ratio_of = [&](std::size_t line) {
    std::string cell = split(lines[line], '|').at(sys_column);
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    return cell;
  };
  std::vector<std::string> seen;
  for (std::size_t i = 2; i < lines.size(); ++i) {
    if (lines[i].find_first_not_of("| ") == std::string::npos) continue;
    seen.push_back(sys_ratio_of(i));
  }
  // system rows are their own yardstick; mimalloc's string_copy is 160/200, its presized 150/150.
  CHECK(seen == std::vector<std::string>{"1.00", "1.00", "0.80", "1.00"});
}

TEST_CASE("notes list failures with reasons, skips, outliers and strategy notes") {
  rb::Report report = synthetic_report();
  report.cases[0].notes = "sockets left in TIME_WAIT: 0";
  const std::string notes = rb::render_notes(report);
  INFO(notes);
  for (const char* note : {"- FAILED views weather 10 (system): checksum 0x1 differs",
                           "- skipped send_zc weather 10000 (system): needs IORING_OP_SEND_ZC",
                           "presized weather 10000 (system): 1 outlier was removed (15 -> 14 samples)",
                           "sockets left in TIME_WAIT: 0"}) {
    INFO(note);
    CHECK(notes.find(note) != std::string::npos);
  }
}

TEST_CASE("the phase table shows medians per phase, n/a for a phase that never happened") {
  const std::string phases = rb::render_phase_table(synthetic_report());
  INFO(phases);
  check_contains(phases, {"Connect", "Deserialize", "Other",
                          // The two points after the phases: request sent to the first and to the last body byte.
                          "1st body", "Last body", "20.90 μs", "22.70 μs", "n/a",  // connect: kept-alive
                          "20.00 μs"});  // four significant digits
  CHECK(phases.find("FAILED") == std::string::npos);  // only ok cases
}

TEST_CASE("the markdown table shows each ok case's mean as the JSON has it, in the column's unit") {
  const rb::Report report = synthetic_report();
  const auto back = rb::parse_report(rb::render_json(report));
  REQUIRE(back.has_value());
  const std::string md = rb::render_markdown(*back);
  for (const rb::CaseResult& c : back->cases) {
    if (c.status != rb::CaseStatus::ok) continue;
    const std::string mean = rb::format_number(c.stats.mean / 1e3, 1) + " μs";
    INFO(c.strategy << " " << c.size << " expects " << mean);
    CHECK(md.find(mean) != std::string::npos);
  }
  check_contains(md, {"WARNING: Debug build", "Legend", "Counters (per op)"});
}

TEST_CASE("no digit finer than the timer: iteration times to its resolution, single ops to its overhead") {
  rb::Report report = synthetic_report();
  report.environment.timer_resolution_ns = 1;  // ns digits at most
  report.environment.timer_overhead_ns = 20;   // single-op spans: tens of ns at most
  report.cases[0].phases.head = 115'436;
  report.cases[1].phases.head = 300;
  const std::string phases = rb::render_phase_table(report);
  INFO(phases);
  // One unit for the whole phase table, from its typical value: a 300 ns phase does not force
  // "115,436.0 ns" on the others; it reads 0.3 μs.
  CHECK(phases.find(" ns ") == std::string::npos);
  check_contains(phases, {"115.4 μs", "0.3 μs", "20.0 μs"});  // Wait: 0.1 μs is above 20 ns, 0.01 μs is not
  CHECK(phases.find("20.00 μs") == std::string::npos);
  const std::string table = rb::render_table(report);
  INFO(table);
  CHECK(table.find("113.100 μs") == std::string::npos);
  CHECK(table.find("113.1 μs") != std::string::npos);
}

namespace {

// The non-empty cells of a table line, trimmed.
std::vector<std::string> table_cells(const std::string& line) {
  std::vector<std::string> cells;
  for (std::string t : split(line, '|')) {
    t.erase(0, t.find_first_not_of(' '));
    t.erase(t.find_last_not_of(' ') + 1);
    if (!t.empty()) cells.push_back(t);
  }
  return cells;
}

}  // namespace

TEST_CASE("unmeasured syscalls and a case without a ring read n/a and -, never 0") {
  rb::Report report = synthetic_report();
  report.cases[0].io.syscalls_per_op = 2.0;
  report.cases[1].io.syscalls_per_op = std::nullopt;  // libcurl: not counted
  report.cases[1].io.ring_enters_per_op = 0;
  report.cases[1].io.sqes_per_op = 0;
  report.cases[1].io.cqes_per_op = 0;
  report.cases[1].memory.minor_faults_per_op = 12.5;
  const auto lines = lines_of(rb::render_table(report));
  // The last four columns of a row: Page faults/op, Syscalls/op, SQEs/op, CQEs/op.
  const auto last_four = [](const std::string& line) {
    const std::vector<std::string> cells = table_cells(line);
    return std::vector<std::string>(cells.end() - 4, cells.end());
  };
  INFO(lines[2] << "\n" << lines[3]);
  CHECK(last_four(lines[2]) == std::vector<std::string>{"0", "2", "2", "2.50"});
  CHECK(last_four(lines[3]) == std::vector<std::string>{"12.50", "n/a", "-", "-"});
}

TEST_CASE("the body's copies: Copies over the body, the bytes behind it, n/a for a row that does not count them") {
  rb::Report report = synthetic_report();
  std::string table = rb::render_table(report);
  CHECK(table.find("Copies") == std::string::npos);  // no case counted them: no columns
  report.cases[0].io.body_bytes_per_op = 1000;
  report.cases[0].io.kernel_copied_bytes_per_op = 1000;
  report.cases[0].io.ringlab_copied_bytes_per_op = 3100;
  report.cases[0].io.mapped_bytes_per_op = 0;
  table = rb::render_table(report);
  INFO(table);
  const auto lines = lines_of(table);
  REQUIRE(lines.size() > 3);
  const auto cells = table_cells;
  const std::vector<std::string> header = cells(lines[0]);
  const auto at = std::find(header.begin(), header.end(), "Copies");
  REQUIRE(at != header.end());
  const auto column = static_cast<std::size_t>(at - header.begin());
  CHECK(header[column + 1] == "Kernel copied/op");
  CHECK(header[column + 2] == "ringlab copied/op");
  CHECK(std::find(header.begin(), header.end(), "Mapped/op") == header.end());  // nothing mapped
  CHECK(cells(lines[2])[column] == "4.10");  // (1000 + 3100) / 1000
  CHECK(cells(lines[3])[column] == "n/a");   // not counted
  // A mapped body shows its column.
  report.cases[0].io.mapped_bytes_per_op = 500;
  CHECK(rb::render_table(report).find("Mapped/op") != std::string::npos);
}

TEST_CASE("reference rows are marked; latency columns appear only when asked for") {
  rb::Report report = synthetic_report();
  report.cases[1].reference = true;
  report.cases[1].strategy = "floor_parse";
  report.cases[0].latency = rb::Latency{100, 110'000, 120'000, 150'000, 160'000, 170'000, {}};
  std::string table = rb::render_table(report);
  CHECK(table.find("| floor_parse (ref) |") != std::string::npos);
  CHECK(table.find("Op P50") == std::string::npos);
  report.config.columns = {"p50", "p999"};
  table = rb::render_table(report);
  INFO(table);
  CHECK(table.find("Op P50") != std::string::npos);
  CHECK(table.find("Op P99.9") != std::string::npos);
  CHECK(table.find("Op P90") == std::string::npos);
  CHECK(table.find("160.0 μs") != std::string::npos);
  const auto lines = lines_of(table);
  CHECK(lines[3].find("n/a") != std::string::npos);  // no latency measured for floor_parse here
}

TEST_CASE("with N in flight: an In flight column, rows grouped by N, and what one request cost") {
  rb::Report report = synthetic_report();
  CHECK(rb::render_table(report).find("In flight") == std::string::npos);
  CHECK(rb::render_table(report).find("CPU/req") == std::string::npos);
  // Every case of a real run spent some CPU time (the synthetic ones none): 50 us per op, so that the
  // CPU/req column's unit is chosen from times of microseconds, as it would be.
  for (rb::CaseResult& c : report.cases) c.cpu.user_ns_per_op = 50'000;
  rb::CaseResult round = report.cases[0];  // string_copy 10, median 113.1 us
  round.inflight = 4;
  round.cpu.user_ns_per_op = 30'000;
  round.cpu.system_ns_per_op = 10'000;
  round.io.syscalls_per_op = 6.0;
  round.memory.held_bytes_per_connection = 3.0 * 1024 * 1024;
  round.memory.held_body_bytes_per_connection = 2.0 * 1024 * 1024;
  report.cases.push_back(round);
  rb::compute_ratios(report);
  const std::string table = rb::render_table(report);
  INFO(table);
  check_contains(table, {"In flight", "Req/s",
                         // 4 requests per 113.1 us round: 35,366.93 requests per second; (30 + 10) us / 4 = 10 us of
                         // CPU per request; 6 / 4 = 1.50 system calls per request.
                         "35,366.93", "10.00 μs",  // two-digit values get two decimals
                         "1.50"});
  const std::string csv = rb::render_csv(report);
  CHECK(csv.find(",inflight,") != std::string::npos);
  CHECK(csv.find(",cpu_ns_per_request,") != std::string::npos);
  // What a connection holds while idle: shown for the round, n/a for the cases that did not say.
  CHECK(table.find("Held/conn") != std::string::npos);
  CHECK(table.find("3.00 MB") != std::string::npos);
  CHECK(csv.find(",held_bytes_per_connection,held_body_bytes_per_connection,rss_bytes_per_connection,") !=
        std::string::npos);
}

TEST_CASE("with T client threads: a Threads column, and the per-request columns divide by T x N") {
  rb::Report report = synthetic_report();
  CHECK(rb::render_table(report).find("Threads") == std::string::npos);
  for (rb::CaseResult& c : report.cases) c.cpu.user_ns_per_op = 50'000;
  rb::CaseResult round = report.cases[0];  // string_copy 10, median 113.1 us
  round.inflight = 4;
  round.client_threads = 2;
  round.cpu.user_ns_per_op = 60'000;  // both threads' CPU time, summed
  round.cpu.system_ns_per_op = 20'000;
  round.io.syscalls_per_op = 12.0;
  report.cases.push_back(round);
  rb::compute_ratios(report);
  const std::string table = rb::render_table(report);
  INFO(table);
  check_contains(table, {"Threads",
                         // 2 x 4 requests per 113.1 us op: 70,733.86 requests per second; 80 us / 8 = 10 us of CPU
                         // per request; 12 / 8 = 1.50 system calls per request.
                         "70,733.86", "10.00 μs", "1.50"});
  CHECK(rb::render_csv(report).find(",client_threads,") != std::string::npos);
}

TEST_CASE("--columns names are checked") {
  CHECK(rb::parse_columns("p50, p99,max").value() == std::vector<std::string>{"p50", "p99", "max"});
  CHECK(rb::parse_columns("p95").error().message == "unknown column 'p95' (p50,p90,p99,p999,max)");
  CHECK(rb::parse_columns("p50,p50").error().message == "column 'p50' given twice");
}

TEST_CASE("the warning block stands above the table and names the case and the reason") {
  rb::Report report = synthetic_report();
  report.config.target_error = 0.02;
  report.cases[1].samples_ns = {800, 1200, 900, 1100, 1000, 1050};
  report.cases[1].stats.n = 6;
  report.cases[1].stats.mean = 1008;
  report.cases[1].stats.error = 400;
  report.cases[1].stats.stddev = 140;
  rb::compute_ratios(report);
  const std::string md = rb::render_markdown(report);
  INFO(md);
  const auto warning = md.find("- presized weather 10 (system): Error is");
  REQUIRE(warning != std::string::npos);
  CHECK(warning < md.find("| Method"));
  CHECK(md.find("Warnings (numbers to read with care)") != std::string::npos);
}

TEST_CASE("the environment block says which source was built and the load at start and end") {
  rb::Report report = synthetic_report();
  report.environment.version = "0.1.0";
  report.environment.git_commit = "0123abc";
  report.environment.git_dirty = true;
  report.environment.compiler_flags = "-O3 -DNDEBUG -march=native";
  report.environment.load_average_start = rb::LoadAverage{0.5, 0.25, 0.125};
  std::string env = rb::render_environment(report);
  INFO(env);
  CHECK(env.find("Source: ringlab 0.1.0, commit 0123abc with uncommitted changes; flags: -O3 -DNDEBUG -march=native") !=
        std::string::npos);
  CHECK(env.find("at start 0.50 0.25 0.12, at end n/a") != std::string::npos);
  report.environment.git_dirty.reset();
  report.environment.git_commit = "unknown";
  report.environment.load_average_end = rb::LoadAverage{1, 2, 3};
  env = rb::render_environment(report);
  CHECK(env.find("commit unknown;") != std::string::npos);
  CHECK(env.find("at end 1.00 2.00 3.00") != std::string::npos);
}

TEST_CASE("a row under a second client is named with it, and a second baseline shows its interval") {
  rb::Report report = synthetic_report();
  // --client pooled,inflight: string_copy again under the in-flight client, paired with the first.
  rb::CaseResult again = report.cases.front();
  again.client = "inflight";
  report.cases.insert(report.cases.begin() + 1, again);
  rb::compute_ratios(report);
  // Its interval as an interleaved run pairs it with the first string_copy's rounds.
  report.cases[1].stats.ratio_low = 0.91;
  report.cases[1].stats.ratio_high = 0.97;
  const std::string md = rb::render_markdown(report);
  INFO(md);
  const auto row = [&md](std::string_view name) {
    const std::size_t at = md.find("| " + std::string(name) + " ");
    return at == std::string::npos ? std::string() : md.substr(at, md.find('\n', at) - at);
  };
  CHECK(row("string_copy (in-flight client)").find("0.91-0.97") != std::string::npos);
  // The first string_copy is the one the ratios are against: no interval.
  const std::string first = row("string_copy");
  CHECK(first.find("(in-flight client)") == std::string::npos);
  CHECK(first.find(" - |") != std::string::npos);
}
