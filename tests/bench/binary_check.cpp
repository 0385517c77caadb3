// The bench binary run as a user runs it, against the built server: a run that cannot succeed fails
// at once with one line, and a run stopped by SIGINT keeps what it measured as a partial report.
#include <signal.h>
#include <sys/types.h>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ringlab/bench/core/results.hpp"
#include "../http_client/test_server.hpp"
#include "../support/bench_runs.hpp"
#include "finished_runs.hpp"
#include "support.hpp"

namespace rb = ringlab::bench;
namespace e2e = ringlab::e2e;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

using ringlab::testing::kBench;
using ringlab::testing::kServer;
using ringlab::testing::written_report;
using ringlab::bench::testing::file_under;
using ringlab::bench::testing::run_to_success;

// Polls `path` until it holds `needle` (or the deadline passes).
bool wait_for_text(const std::string& path, std::string_view needle, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && e2e::read_file(path).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

struct Refusal {
  int status = 0;
  std::vector<std::string> lines;
};

// Runs bench with `arguments` to completion: its exit status and the lines it wrote to stderr. It
// must have written nothing to stdout (no table: nothing was measured).
Refusal refused(const std::vector<std::string>& arguments) {
  e2e::TempDir dir;
  std::vector<std::string> argv{kBench};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  const auto status = e2e::run(argv, dir.file("stdout"), dir.file("stderr"), 60s);
  REQUIRE(status.has_value());
  INFO(e2e::read_file(dir.file("stderr")));
  CHECK(e2e::read_file(dir.file("stdout")).empty());
  return {*status, lines_of(e2e::read_file(dir.file("stderr")))};
}

// A server that passes bench's health check and then fails its size check: every other request is
// read and then, with `stall`, left unanswered until bench hangs up, or answered with a line that is
// not HTTP and a close.
ringlab::http::testing::TestServer::Handler healthy_then_faulty(bool stall) {
  return [stall](ringlab::http::testing::ServerConnection& c, ringlab::http::testing::TestServer& server) {
    while (auto request = c.read_request()) {
      const bool health = request->starts_with("GET /health ");
      server.record(std::move(*request));
      if (health) {
        if (!c.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")) return;
        continue;
      }
      if (stall) {
        c.wait_for_close();
      } else {
        c.write("this is not HTTP\r\n\r\n");
      }
      return;
    }
  };
}

// Runs bench with `arguments` and --out under `dir`; once its stderr shows `started` and `then` has
// passed, one SIGINT. It must exit 130 having written a partial report, which is returned.
rb::Report interrupted_report(const e2e::TempDir& dir, const std::vector<std::string>& arguments,
                              std::string_view started, std::chrono::milliseconds then) {
  std::vector<std::string> argv{kBench};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  argv.insert(argv.end(), {"--out", dir.file("out")});
  e2e::Child bench(argv, dir.file("stdout"), dir.file("stderr"));
  REQUIRE_MESSAGE(wait_for_text(dir.file("stderr"), started, 120s), e2e::read_file(dir.file("stderr")));
  std::this_thread::sleep_for(then);
  bench.signal(SIGINT);
  const auto status = bench.wait(30s);
  REQUIRE(status.has_value());
  CHECK(*status == 130);
  const rb::Report report = written_report(dir.file("out"));
  CHECK(report.partial);
  return report;
}

// The report.md a run wrote under `out` (empty when there is none).
std::string written_markdown(const std::string& out) {
  const std::filesystem::path markdown = file_under(out, "report.md");
  return markdown.empty() ? std::string() : e2e::read_file(markdown.string());
}

// Runs bench with `arguments` and tiny settings (one warm-up, three iterations of 5 ms) to completion:
// it must exit 0; its JSON report.
rb::Report tiny_report(const e2e::TempDir& dir, std::vector<std::string> arguments) {
  std::vector<std::string> argv{kBench};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  argv.insert(argv.end(), {"--server", kServer, "--iteration-time", "5", "--warmup", "1", "--iterations", "3",
                           "--max-iterations", "3", "--out", dir.file("out")});
  run_to_success(dir, argv, "", 120s);
  return written_report(dir.file("out"));
}

// tiny_report's report, which must hold `cases` cases, every one passed (status ok) and passing
// `check_case` (CHECKs on one case; the case's strategy is in the INFO).
template <class CheckCase>
rb::Report passed_report(const e2e::TempDir& dir, std::vector<std::string> arguments, std::size_t cases,
                         const CheckCase& check_case) {
  rb::Report report = tiny_report(dir, std::move(arguments));
  REQUIRE(report.cases.size() == cases);
  for (const rb::CaseResult& c : report.cases) {
    INFO(c.strategy);
    CHECK(c.status == rb::CaseStatus::ok);
    check_case(c);
  }
  return report;
}

}  // namespace

TEST_CASE("more records than the server serves: one line, exit 2, before any case") {
  e2e::TempDir dir;
  const Refusal r = refused({"--sizes", "99999999999", "--server", kServer, "--out", dir.file("out")});
  CHECK(r.status == 2);
  REQUIRE(r.lines.size() == 1);
  CHECK(r.lines[0].find("--sizes 99999999999") != std::string::npos);
  CHECK(r.lines[0].find("400") != std::string::npos);
}

TEST_CASE("an unreachable --url is one error after one health check") {
  e2e::TempDir dir;
  const Refusal r = refused({"--url", "http://127.0.0.1:1", "--out", dir.file("out")});
  CHECK(r.status == 3);  // a server fault, not a bad command line
  REQUIRE(r.lines.size() == 1);
  CHECK(r.lines[0].find("GET /health") != std::string::npos);
  CHECK(r.lines[0].find("127.0.0.1:1") != std::string::npos);
}

TEST_CASE("a server that stalls or answers garbage on the size check is a server fault: one line, exit 3") {
  for (const bool stall : {true, false}) {
    INFO((stall ? "stalls" : "answers garbage"));
    ringlab::http::testing::TestServer fake(healthy_then_faulty(stall));
    e2e::TempDir dir;
    const auto began = std::chrono::steady_clock::now();
    const Refusal r = refused({"--url", fake.url(""), "--sizes", "10", "--filter", "string_copy",
                               "--request-timeout-ms", "300", "--out", dir.file("out")});
    CHECK(r.status == 3);
    REQUIRE(r.lines.size() == 1);
    CHECK(r.lines[0].find("server fault: GET /weather?count=10") != std::string::npos);
    // The size check waits a request's limit (300 ms here), not a server start's (10 s by default).
    if (stall) CHECK(std::chrono::steady_clock::now() - began < 8s);
  }
}

TEST_CASE("an embedded server that does not start is a server fault: one line, exit 3") {
  e2e::TempDir dir;
  const Refusal r = refused({"--server", "/bin/false", "--server-start-timeout-ms", "5000", "--out", dir.file("out")});
  CHECK(r.status == 3);
  REQUIRE(r.lines.size() == 1);
  CHECK(r.lines[0].find("/bin/false") != std::string::npos);
}

TEST_CASE("an --out that cannot be written is refused before the server starts") {
  e2e::TempDir dir;
  {
    std::FILE* file = std::fopen(dir.file("a-file").c_str(), "w");
    REQUIRE(file != nullptr);
    std::fclose(file);
  }
  const Refusal r = refused({"--server", kServer, "--out", dir.file("a-file") + "/results"});
  CHECK(r.status == 2);
  REQUIRE(r.lines.size() == 1);
  CHECK(r.lines[0].find("--out") != std::string::npos);
}

TEST_CASE("SIGINT during the second case: the first case's numbers are kept in a partial report, exit 130") {
  e2e::TempDir dir;
  // The second case has begun once its progress line is out; then one signal.
  const rb::Report report =
      interrupted_report(dir,
                         {"get", "--no-interleave", "--filter", "string_copy,views", "--sizes", "10", "--server",
                          kServer, "--iteration-time", "5", "--warmup", "1", "--iterations", "3", "--max-iterations",
                          "3"},
                         "[2/2]", 0ms);
  REQUIRE(report.cases.size() == 2);
  CHECK(report.cases[0].strategy == "string_copy");
  CHECK(report.cases[0].status == rb::CaseStatus::ok);
  CHECK(report.cases[0].samples_ns.size() == 3);
  INFO(report.cases[1].reason);
  // The signal may land before the second case measured its last iteration or, rarely, after: either
  // way it is not reported as a complete case unless it was one.
  if (report.cases[1].status != rb::CaseStatus::ok) CHECK(report.cases[1].reason == "interrupted");
  const std::string table = e2e::read_file(dir.file("stdout"));
  CHECK(table.find("partial report: interrupted by SIGINT") != std::string::npos);
}

TEST_CASE("SIGINT during interleaved rounds: every case keeps the rounds it measured") {
  e2e::TempDir dir;
  // Measuring, then a few rounds.
  const rb::Report report =
      interrupted_report(dir,
                         {"get", "--filter", "string_copy,views", "--sizes", "10", "--server", kServer,
                          "--iteration-time", "5", "--warmup", "1", "--iterations", "1000", "--max-iterations", "1000"},
                         "measure", 300ms);
  REQUIRE(report.cases.size() == 2);
  for (const rb::CaseResult& c : report.cases) {
    INFO(c.strategy << ": " << c.reason);
    CHECK(c.status == rb::CaseStatus::ok);
    CHECK_FALSE(c.samples_ns.empty());
    CHECK(c.samples_ns.size() < 1000);
  }
  REQUIRE(report.cases[1].stats.ratio.has_value());
  // Nothing the run stood on is left: the embedded server it started (its pid in the report's
  // environment) was stopped before bench exited, whose exit would otherwise leave it to init.
  const std::string& server = report.environment.server;
  const std::size_t at = server.find("(pid ");
  REQUIRE_MESSAGE(at != std::string::npos, server);
  const pid_t pid = static_cast<pid_t>(std::stol(server.substr(at + 5)));
  REQUIRE(pid > 0);
  CHECK_MESSAGE(!std::filesystem::exists("/proc/" + std::to_string(pid)), "server pid " << pid << " still exists");
}

// google-benchmark's own reader: compare.py from Debian's libbenchmark-tools (tools/setup installs it),
// run on Debian's python3, which has the scipy it needs for its U test.
TEST_CASE("--format gbench writes google-benchmark's JSON, which its compare.py loads and compares") {
  const std::string compare = "/usr/share/benchmark/compare.py";
  REQUIRE_MESSAGE(std::filesystem::exists(compare), "compare.py missing: tools/setup installs libbenchmark-tools");
  e2e::TempDir dir;
  run_to_success(dir,
                 {kBench, "get", "--filter", "string_copy,views", "--sizes", "10", "--server", kServer,
                  "--iteration-time", "5", "--warmup", "1", "--iterations", "3", "--max-iterations", "3", "--format",
                  "json,gbench", "--out", dir.file("out")},
                 "", 120s);
  const std::string gbench = file_under(dir.file("out"), "report.gbench.json").string();
  REQUIRE_FALSE(gbench.empty());
  // The run compared with itself: every benchmark found in both, the U test run on the repetitions.
  const auto compared = e2e::run({"/usr/bin/python3", compare, "--no-color", "benchmarks", gbench, gbench},
                                 dir.file("compare.out"), dir.file("compare.err"), 120s);
  REQUIRE(compared.has_value());
  const std::string out = e2e::read_file(dir.file("compare.out"));
  INFO(out << e2e::read_file(dir.file("compare.err")));
  CHECK(*compared == 0);
  for (const char* name : {"string_copy/GET/weather/10 ", "views/GET/weather/10_mean ", "views/GET/weather/10_pvalue",
                           "OVERALL_GEOMEAN"}) {
    CHECK(out.find(name) != std::string::npos);
  }
  CHECK(out.find("+0.0000") != std::string::npos);
}

TEST_CASE("--connection fresh: every case opens one connection per op, and the report and table say so") {
  e2e::TempDir dir;
  const rb::Report report =
      passed_report(dir,
                    {"get", "--filter", "string_copy,presized,blocking_sockets,libcurl", "--sizes", "10",
                     "--connection", "fresh", "--format", "md,json"},
                    4, [](const rb::CaseResult& c) {
                      CHECK(c.connection == "fresh");
                      CHECK(c.io.connections_per_op == doctest::Approx(1.0));
                    });
  CHECK(report.config.connection == "fresh");
  const std::string markdown = written_markdown(dir.file("out"));
  CHECK(markdown.find("a new connection per request (--connection fresh)") != std::string::npos);
}

TEST_CASE("--client fresh: a whole client per op, recorded per case and in the run; bad combinations refused") {
  e2e::TempDir dir;
  const rb::Report report = passed_report(
      dir, {"get", "--filter", "presized,libcurl", "--sizes", "10", "--client", "fresh", "--format", "md,json"}, 2,
      [](const rb::CaseResult& c) {
        CHECK(c.client == "fresh");
        CHECK(c.connection == "pooled");
        CHECK(c.io.connections_per_op == doctest::Approx(1.0));
        CHECK(c.notes.starts_with("fresh client: every op made, set up, ran and destroyed its own " + c.strategy));
      });
  CHECK(report.config.client == "fresh");
  CHECK(written_markdown(dir.file("out")).find("(--client fresh)") != std::string::npos);
  for (const auto& [flags, message] :
       {std::pair{std::vector<std::string>{"--inflight", "1,4"}, "does not combine with --inflight above 1"},
        std::pair{std::vector<std::string>{"--connection", "fresh"}, "does not combine with --connection fresh"},
        std::pair{std::vector<std::string>{"--client", "reused"}, "--client"}}) {
    std::vector<std::string> arguments{"get", "--server", kServer, "--out", dir.file("refused"), "--client", "fresh"};
    arguments.insert(arguments.end(), flags.begin(), flags.end());
    const Refusal r = refused(arguments);
    CHECK(r.status == 2);
    REQUIRE(r.lines.size() >= 1);
    CHECK(r.lines[0].find(message) != std::string::npos);
  }
}

TEST_CASE("bench proxy: N GETs of /proxy per op, pooled and fresh upstream, each row with its number") {
  e2e::TempDir dir;
  const rb::Report report =
      passed_report(dir, {"proxy", "--sizes", "3", "--format", "json"}, 6, [](const rb::CaseResult& c) {
        CHECK(c.strategy.starts_with("proxy_"));
        CHECK(c.size == 3);
        CHECK(c.checksum == 3);  // three 200 answers per op
        CHECK(c.stats.ratio.has_value());
        CHECK(c.notes.find("TIME_WAIT") != std::string::npos);
      });
  CHECK(report.config.suite == "proxy");
}

TEST_CASE("bench echo: the 17-byte object posted to /echo?chunked=1, every row with its number") {
  e2e::TempDir dir;
  const rb::Report report = passed_report(dir, {"echo", "--format", "json"}, 8, [](const rb::CaseResult& c) {
    CHECK((c.strategy == "echo" || c.strategy.ends_with("_echo") || c.strategy == "echo_fresh"));
    CHECK(c.method == "POST");
    CHECK(c.size == 1);
    CHECK(c.stats.ratio.has_value());
    if (c.strategy == "cpprest_echo") {
      // The SDK hands a connection back to its pool from its own threads after the answer; a request that
      // starts before then opens another one (strategies/src/cpprest.cpp). Never more than one per request.
      CHECK(c.io.connections_per_op <= 1.0);
    } else {
      CHECK(c.io.connections_per_op == doctest::Approx(c.strategy == "echo_fresh" ? 1.0 : 0.0));
    }
  });
  CHECK(report.config.suite == "echo");
}

TEST_CASE("--server-mode seed: bodies serialized per request and sent chunked, recorded per case") {
  e2e::TempDir dir;
  const rb::Report report = passed_report(
      dir,
      {"get", "--filter", "string_copy,presized,libcurl", "--sizes", "1000", "--server-mode", "seed", "--format",
       "md,json"},
      3, [](const rb::CaseResult& c) { CHECK(c.server_mode == "seed"); });
  CHECK(report.config.server_mode == "seed");
  const std::string markdown = written_markdown(dir.file("out"));
  CHECK(markdown.find("--server-mode seed") != std::string::npos);
}
