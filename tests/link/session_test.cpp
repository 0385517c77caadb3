// The emulated link as bench builds it: namespaces, veth pairs and the wire, measured and removed;
// a killed run's namespaces removed by the next run; every strategy over --link 1g, and with 16 in
// flight over a 2 ms link; two hosts as two namespaces (server bound in one, bench in the other
// through --url). Needs root: without it
// the whole file reports itself skipped (exit 77, ctest's SKIP_RETURN_CODE).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <signal.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ringlab/bench/core/results.hpp"
#include "ringlab/bench/link/link_session.hpp"
#include "ringlab/bench/process/server_process.hpp"
#include "../support/bench_runs.hpp"
#include "support.hpp"

namespace rb = ringlab::bench;
namespace e2e = ringlab::e2e;
using namespace std::chrono_literals;

namespace {

const std::string kWire = RINGLAB_WIRE_BINARY;

std::vector<std::string> namespaces_of(const std::string& prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/run/netns", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix)) names.push_back(name);
  }
  return names;
}

using ringlab::testing::kBench;
using ringlab::testing::kServer;
using ringlab::testing::written_report;

// An emulated link of `spec_text` built by the test; the test's thread is left in the client namespace
// when a server is started behind it, else where it was.
rb::LinkSession make_link(const char* spec_text) {
  auto spec = ringlab::link::parse_link_spec(spec_text);
  REQUIRE_MESSAGE(spec, (spec ? "" : spec.error()));
  rb::LinkSession::Options options;
  options.spec = *spec;
  options.wire_executable = kWire;
  auto session = rb::LinkSession::create(options);
  REQUIRE_MESSAGE(session, (session ? "" : session.error().message));
  return std::move(*session);
}

// The server binary started in the link's server namespace, bound to the server's address.
rb::ServerProcess start_server_behind(rb::LinkSession& link) {
  REQUIRE(link.enter_server());
  rb::ServerProcessOptions server_options;
  server_options.executable = kServer;
  server_options.bind = std::string(rb::kLinkServerAddress);
  auto server = rb::ServerProcess::start(server_options);
  REQUIRE_MESSAGE(server, (server ? "" : server.error().message));
  REQUIRE(link.enter_client());
  return std::move(*server);
}

// bench's get suite with `arguments`, in short cases: these tests check that runs work over a link, not
// what they measure.
std::vector<std::string> tiny_run(const std::vector<std::string>& arguments, const std::string& out) {
  std::vector<std::string> argv{kBench, "get"};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  argv.insert(argv.end(), {"--sizes", "10", "--iteration-time", "5", "--warmup", "1", "--iterations", "3",
                           "--max-iterations", "3", "--server", kServer, "--wire", kWire, "--out", out, "--format",
                           "json"});
  return argv;
}

// Runs `argv` to its end within `limit`, its output in `dir` as <name>.out and <name>.err; it must exit 0.
void check_runs(const std::vector<std::string>& argv, const e2e::TempDir& dir, const std::string& name,
                std::chrono::seconds limit) {
  const auto status = e2e::run(argv, dir.file(name + ".out"), dir.file(name + ".err"), limit);
  INFO(e2e::read_file(dir.file(name + ".err")));
  REQUIRE(status.has_value());
  CHECK(*status == 0);
}

}  // namespace

TEST_CASE("a link is built, measures what it was configured for, and is removed") {
  const auto spec = ringlab::link::parse_link_spec("rate=100mbit,delay=5ms");
  rb::LinkSession session = make_link("rate=100mbit,delay=5ms");
  const std::string prefix = session.prefix();
  CHECK(namespaces_of(prefix).size() == 3);
  auto server = start_server_behind(session);

  rb::LinkInfo info;
  auto measured = rb::measure_link(server.host(), server.port(), *spec, info, 10s);
  REQUIRE_MESSAGE(measured, (measured ? "" : measured.error().message));
  INFO("RTT " << info.measured_rtt_us << " us (min " << info.measured_rtt_min_us << "), rate " << info.measured_rate_mbit
              << " Mbit/s");
  CHECK(info.configured_rtt_us == doctest::Approx(10'000));
  // The link's delay dominates: within 20 % of the configured 10 ms.
  CHECK(info.measured_rtt_us == doctest::Approx(10'000).epsilon(0.20));
  // A bulk transfer cannot beat the rate; TCP's ramp-up keeps it somewhat below.
  CHECK(info.measured_rate_mbit <= 100 * 1.02);
  CHECK(info.measured_rate_mbit >= 100 * 0.5);

  auto environment = rb::fetch_server_environment(server.host(), server.port(), 10s);
  REQUIRE_MESSAGE(environment, (environment ? "" : environment.error().message));
  CHECK(environment->at("bind") == rb::kLinkServerAddress);
  CHECK_FALSE(environment->at("kernel").empty());

  REQUIRE(server.stop());
  REQUIRE(session.close(&info));
  CHECK(info.wire.at("to_server.frames") > 0);
  CHECK(info.wire.at("to_client.segments") >= info.wire.at("to_client.frames"));
  CHECK(info.wire.at("to_client.dropped_queue") == 0);
  CHECK(namespaces_of(prefix).empty());
}

TEST_CASE("a lossy link drops about its share of packets, one by one, and TCP still delivers every byte") {
  const auto spec = ringlab::link::parse_link_spec("rate=200mbit,delay=1ms,loss=2%");
  CHECK_FALSE(spec->gso_enabled());  // loss is drawn per packet
  rb::LinkSession session = make_link("rate=200mbit,delay=1ms,loss=2%");
  auto server = start_server_behind(session);
  rb::LinkInfo info;
  auto measured = rb::measure_link(server.host(), server.port(), *spec, info, 30s);
  REQUIRE_MESSAGE(measured, (measured ? "" : measured.error().message));
  CHECK(info.rate_sample_bytes > 1e6);  // the whole body arrived (Content-Length bytes)
  REQUIRE(server.stop());
  REQUIRE(session.close(&info));
  const double segments = info.wire.at("to_client.segments");
  const double frames = info.wire.at("to_client.frames");
  const double lost = info.wire.at("to_client.dropped_loss");
  INFO("segments " << segments << ", frames " << frames << ", lost " << lost);
  CHECK(segments == frames);  // no super-frames: one packet per frame
  CHECK(segments > 1000);
  // 2 % of what was offered, within what chance allows for a few thousand draws.
  CHECK(lost / (frames + lost) == doctest::Approx(0.02).epsilon(0.5));
}

TEST_CASE("the loopback address of the host is not reachable from the client side") {
  rb::LinkSession session = make_link("rate=0,delay=0");
  // A server on the host's loopback, then a look from the client namespace: its own loopback.
  auto outside = e2e::start_server_binary(kServer, {});
  REQUIRE(session.enter_client());
  auto status = rb::http_get_status("127.0.0.1", outside.port, "/health", 2s);
  CHECK_FALSE(status.has_value());
  REQUIRE(session.close());
}

TEST_CASE("bench over --link 1g: every strategy answers, the header has the measured link") {
  e2e::TempDir dir;
  check_runs(tiny_run({"--link", "1g", "--filter", "*"}, dir.file("out")), dir, "bench", 600s);
  const rb::Report report = written_report(dir.file("out"));
  REQUIRE(report.environment.link.has_value());
  CHECK(report.environment.link->spec == "rate=1gbit,delay=100us,mtu=1500");
  CHECK(report.environment.link->measured_rtt_us > 200);  // at least the configured 2 x 100 us
  CHECK(report.environment.link->measured_rate_mbit > 100);
  CHECK(report.environment.link->measured_rate_mbit < 1000 * 1.02);
  CHECK(report.environment.server_environment.at("bind") == rb::kLinkServerAddress);
  CHECK(report.cases.size() >= 15);
  for (const rb::CaseResult& c : report.cases) {
    INFO(c.strategy << ": " << c.reason);
    if (c.strategy == "three_fields") {  // reads github (and repos) records only: weather is skipped, with why
      CHECK(c.status == rb::CaseStatus::skipped);
      CHECK(c.reason.find("github") != std::string::npos);
      continue;
    }
    if (c.strategy == "token_loop") {  // jos's Version 8 loop reads his records only: weather is skipped, with why
      CHECK(c.status == rb::CaseStatus::skipped);
      CHECK(c.not_applicable);
      CHECK(c.reason.find("jos") != std::string::npos);
      continue;
    }
    CHECK(c.status == rb::CaseStatus::ok);
    CHECK_FALSE(c.samples_ns.empty());
  }
  const std::string table = e2e::read_file(dir.file("bench.out"));
  CHECK(table.find("Link measured: RTT") != std::string::npos);
}

TEST_CASE("bench proxy --link-leg upstream: the link between the server and its upstream, bench on loopback") {
  e2e::TempDir dir;
  // 2 ms one way: each of the op's 4 requests waits at least one 4 ms round trip on the upstream leg.
  const std::vector<std::string> argv{kBench, "proxy", "--link-leg", "upstream", "--link", "rate=0,delay=2ms",
                                      "--filter", "proxy_manual,proxy_typed", "--sizes", "4", "--iteration-time", "20",
                                      "--warmup", "1", "--iterations", "3", "--max-iterations", "3", "--server",
                                      kServer, "--wire", kWire, "--out", dir.file("out"), "--format", "json"};
  check_runs(argv, dir, "bench", 300s);
  const rb::Report report = written_report(dir.file("out"));
  REQUIRE(report.environment.link.has_value());
  CHECK(report.environment.link->leg == "upstream");
  CHECK(report.environment.link->measured_rtt_us > 4000);  // measured to the upstream, across the link
  CHECK(report.environment.server_environment.at("bind") == "127.0.0.1");  // bench <-> server: loopback
  CHECK(report.environment.server.find(std::string(rb::kLinkServerAddress)) != std::string::npos);
  REQUIRE(report.cases.size() == 2);
  for (const rb::CaseResult& c : report.cases) {
    INFO(c.strategy << ": " << c.reason);
    CHECK(c.status == rb::CaseStatus::ok);
    REQUIRE_FALSE(c.samples_ns.empty());
    for (const double ns : c.samples_ns) CHECK(ns > 4 * 4e6);
  }
  CHECK(namespaces_of("ringlab-").empty());
}

// With N requests in flight over a slow path, a round waits for about one round trip, not N: the axis
// works inside --link, where many slow requests in flight are the normal case. Every row that runs N in
// flight (the others say not applicable) sends its 16 requests before it waits for any answer.
TEST_CASE("bench over --link with 16 in flight: a round of 16 requests waits about one round trip, not 16") {
  e2e::TempDir dir;
  // 2 ms one way, no rate limit: a round trip of at least 4 ms; 16 requests one after another, 64 ms.
  check_runs(tiny_run({"--link", "rate=0,delay=2ms", "--inflight", "16", "--filter", "*"}, dir.file("out")), dir,
             "bench", 600s);
  const rb::Report report = written_report(dir.file("out"));
  REQUIRE(report.environment.link.has_value());
  CHECK(report.environment.link->measured_rtt_us > 4000);
  std::size_t ran = 0;
  for (const rb::CaseResult& c : report.cases) {
    INFO(c.strategy << ": " << c.reason);
    CHECK(c.inflight == 16);
    if (c.status == rb::CaseStatus::skipped) {
      CHECK(c.not_applicable);  // a row without an N-in-flight form, or one that reads other records
      continue;
    }
    REQUIRE(c.status == rb::CaseStatus::ok);
    REQUIRE_FALSE(c.samples_ns.empty());
    ++ran;
    for (const double ns : c.samples_ns) CHECK(ns > 4e6);  // one round trip at least
    // Far from 16 round trips (64 ms): the requests were in flight together. The median, and half the
    // serial time as the bound, so that a loaded machine's stalls do not decide it.
    CHECK(c.stats.median < 8 * 4e6);
  }
  for (const char* row : {"string_copy", "presized", "views", "provided_buffers", "epoll"}) {
    INFO(row);
    CHECK(std::ranges::any_of(report.cases, [&](const rb::CaseResult& c) {
      return c.strategy == row && c.status == rb::CaseStatus::ok;
    }));
  }
  CHECK(ran >= 5);
  CHECK(namespaces_of("ringlab-").empty());
}

TEST_CASE("a run killed with SIGKILL leaves namespaces that the next run removes") {
  e2e::TempDir dir;
  std::vector<std::string> argv{kBench, "get", "--link", "1g", "--filter", "views", "--sizes", "10",
                                "--iteration-time", "50", "--iterations", "1000", "--max-iterations", "1000",
                                "--server", kServer, "--wire", kWire, "--out", dir.file("killed")};
  e2e::Child killed(argv, dir.file("stdout"), dir.file("stderr"));
  const std::string prefix = "ringlab-" + std::to_string(killed.pid()) + "-";
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (namespaces_of(prefix).size() < 3 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
  REQUIRE_MESSAGE(namespaces_of(prefix).size() == 3, e2e::read_file(dir.file("stderr")));
  std::this_thread::sleep_for(500ms);  // into the cases
  killed.signal(SIGKILL);
  // Not reaped yet: a zombie, as a run killed under a parent that reaps late; it counts as over.
  std::this_thread::sleep_for(200ms);
  CHECK(namespaces_of(prefix).size() == 3);  // nobody cleaned up: the process had no chance

  check_runs(tiny_run({"--link", "1g", "--filter", "views"}, dir.file("out")), dir, "next", 300s);
  CHECK(namespaces_of(prefix).empty());
  CHECK(namespaces_of("ringlab-").empty());
  CHECK(killed.wait(10s).has_value());
}

TEST_CASE("two hosts: the server bound in one namespace, bench in the other through --url") {
  rb::LinkSession session = make_link("rate=0,delay=0");
  REQUIRE(session.enter_server());
  auto server = e2e::start_server_binary(kServer, {"--bind", std::string(rb::kLinkServerAddress)});
  REQUIRE(session.enter_client());
  e2e::TempDir dir;
  const std::string url = "http://" + std::string(rb::kLinkServerAddress) + ":" + std::to_string(server.port);
  check_runs(tiny_run({"--url", url, "--filter", "string_copy,views"}, dir.file("out")), dir, "bench", 300s);
  const rb::Report report = written_report(dir.file("out"));
  CHECK(report.environment.server.find(url) != std::string::npos);
  CHECK(report.environment.server_environment.at("bind") == rb::kLinkServerAddress);
  CHECK(report.environment.server_environment.at("program") == "ringlab server");
  CHECK_FALSE(report.environment.link.has_value());
  REQUIRE(session.leave());
  REQUIRE(session.close());
}

TEST_CASE("without CAP_SYS_ADMIN and CAP_NET_ADMIN, --link 1g is one line and exit 2; loopback still runs") {
  e2e::TempDir dir;
  const auto run_without_capabilities = [&](std::vector<std::string> argv, const std::string& name) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // Out of the bounding set, the capabilities are gone after exec even for root.
      ::prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0);
      ::prctl(PR_CAPBSET_DROP, CAP_NET_ADMIN, 0, 0, 0);
      std::vector<char*> args;
      for (std::string& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      std::freopen(dir.file(name + ".out").c_str(), "w", stdout);
      std::freopen(dir.file(name + ".err").c_str(), "w", stderr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  };
  CHECK(run_without_capabilities(tiny_run({"--link", "1g", "--filter", "views"}, dir.file("out")), "link") == 2);
  const std::string errors = e2e::read_file(dir.file("link.err"));
  CHECK(errors.find("needs root") != std::string::npos);
  CHECK(std::count(errors.begin(), errors.end(), '\n') == 1);
  CHECK(e2e::read_file(dir.file("link.out")).empty());

  CHECK(run_without_capabilities(tiny_run({"--filter", "views"}, dir.file("plain")), "plain") == 0);
}

int main(int argc, char** argv) {
  if (auto allowed = rb::check_link_privileges(); !allowed) {
    std::printf("skipped: %s\n", allowed.error().message.c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
