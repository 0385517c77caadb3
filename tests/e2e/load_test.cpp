// bench load's generator (bench/src/load/include/ringlab/bench/load/load.hpp) against real servers on loopback:
// ours in this process and as a binary, nginx; the open loop's answer to a paused server; its limits
// and errors; and the `bench load` command as a user runs it.
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <future>
#include <thread>

#include "ringlab/base/cpus.hpp"
#include "ringlab/bench/load/load.hpp"
#include "ringlab/server/body_cache.hpp"
#include "support.hpp"
#include "../support/net.hpp"

using namespace ringlab;
using namespace ringlab::e2e;
using bench::LoadResult;
using bench::LoadSpec;

namespace {

std::size_t body_size(uint32_t count) {
  return server::generate_body({server::Route::weather, server::Format::json, count}).bytes.size();
}

LoadSpec quick_spec(uint16_t port, std::string target = "/weather?count=10") {
  LoadSpec spec;
  spec.port = port;
  spec.target = std::move(target);
  spec.connections = 4;
  spec.duration = 300ms;
  spec.warmup = 100ms;
  spec.timeout = 5s;
  return spec;
}

LoadResult run_ok(const LoadSpec& spec) {
  auto result = bench::run_load(spec);
  REQUIRE_MESSAGE(result.has_value(), (result ? "" : result.error().message));
  return std::move(*result);
}

void check_clean(const LoadResult& r, std::size_t body) {
  CHECK(r.requests > 0);
  CHECK(r.errors.total() == 0);
  CHECK(r.reconnects == 0);
  CHECK(r.latency.count() == r.requests);
  CHECK(r.body_bytes == r.requests * body);
  CHECK(r.requests_per_second == doctest::Approx(static_cast<double>(r.requests) / r.seconds));
  CHECK(r.latency.max() >= r.latency.value_at_percentile(99));
  CHECK(r.requests_total >= r.requests);
  CHECK(r.enters > 0);
}

}  // namespace

TEST_CASE("closed loop against our server: every answer counted, parsed and timed") {
  TestServer ours;
  for (const uint32_t count : {10u, 1000u}) {
    CAPTURE(count);
    LoadSpec spec = quick_spec(ours.port(), "/weather?count=" + std::to_string(count));
    SUBCASE("one thread") {}
    SUBCASE("two threads") { spec.threads = 2; }
    const LoadResult r = run_ok(spec);
    check_clean(r, body_size(count));
  }
}

TEST_CASE("one connection: one io_uring_enter per request, the send and the wait for its answer together") {
  // The send completes while the enter submits it; were its CQE enough to end the wait, every
  // request would cost a second enter to wait for the answer.
  TestServer ours;
  LoadSpec spec = quick_spec(ours.port());
  spec.connections = 1;
  const LoadResult r = run_ok(spec);
  check_clean(r, body_size(10));
  REQUIRE(r.requests_total > 50);
  // The connect, the teardown and the waits that the deadline scans (every 50 ms here) cut short
  // come on top: a few enters, not one more per request (two per request before).
  CHECK(r.enters < r.requests_total * 5 / 4 + 20);
}

TEST_CASE("the server's zero-copy sends per request, read from its GET /stats around the window") {
  for (const server::BodyStrategy strategy : {server::BodyStrategy::writev, server::BodyStrategy::send_zc}) {
    const std::string_view name = server::body_strategy_name(strategy);
    CAPTURE(name);
    server::ServerOptions options;
    options.body_strategy = strategy;
    options.inline_body_bytes = 0;  // every body the strategy's way
    TestServer ours(options);
    LoadSpec spec = quick_spec(ours.port(), "/weather?count=100");
    spec.server_stats = true;
    const LoadResult r = run_ok(spec);
    check_clean(r, body_size(100));
    REQUIRE(r.server_zc_sends_per_request.has_value());
    REQUIRE(r.server_zc_copied_per_request.has_value());
    const double zero_copy = *r.server_zc_sends_per_request + *r.server_zc_copied_per_request;
    if (strategy == server::BodyStrategy::writev) {
      CHECK(zero_copy == 0.0);
    } else {
      // One zero-copy send per answer. The window's edges cut a few either way: answers measured
      // whose notification came after the second reading, notifications of answers before it.
      CHECK(zero_copy == doctest::Approx(1.0).epsilon(0.1));
    }
  }
  // A spec that does not ask: nothing (nginx, which has no /stats, is below).
  TestServer ours;
  const LoadResult r = run_ok(quick_spec(ours.port()));
  CHECK_FALSE(r.server_zc_sends_per_request.has_value());
  CHECK_FALSE(r.server_zc_copied_per_request.has_value());
}

TEST_CASE("the busy time of the server's CPUs, per request, from /proc/stat") {
  // The server's one thread is pinned to the CPU whose busy time is read: that CPU answered every
  // request of the window, so its busy time cannot be zero.
  const int cpu = base::allowed_cpus().front();
  server::ServerOptions options;
  options.cpu = cpu;
  TestServer ours(options);
  LoadSpec spec = quick_spec(ours.port());
  spec.server_cpus = {cpu};
  const LoadResult r = run_ok(spec);
  check_clean(r, body_size(10));
  REQUIRE(r.server_cpus_busy_us_per_request.has_value());
  CHECK(*r.server_cpus_busy_us_per_request > 0);
  // A CPU this machine does not have: no figure, and the run is not affected.
  spec.server_cpus = {cpu, 1 << 20};
  const LoadResult missing = run_ok(spec);
  check_clean(missing, body_size(10));
  CHECK_FALSE(missing.server_cpus_busy_us_per_request.has_value());
  spec.server_cpus.clear();
  CHECK_FALSE(run_ok(spec).server_cpus_busy_us_per_request.has_value());
}

TEST_CASE("open loop sends exactly the requests due in the window") {
  TestServer ours;
  LoadSpec spec = quick_spec(ours.port());
  spec.rate = 200;  // 0.3 s window: requests 20..79 of the run
  const LoadResult r = run_ok(spec);
  check_clean(r, body_size(10));
  CHECK(r.requests == 60);
  // Warm-up (20 due) and window, nothing after it.
  CHECK(r.requests_total == 80);
}

TEST_CASE("closed loop against nginx serving the same bytes") {
  constexpr uint32_t kCounts[] = {10, 1000};
  Nginx nginx(kCounts);
  for (const uint32_t count : kCounts) {
    CAPTURE(count);
    LoadSpec spec = quick_spec(nginx.port(), "/weather_" + std::to_string(count) + ".json");
    spec.server_pid = nginx.pid();
    spec.server_stats = true;  // nginx answers GET /stats 404: no zero-copy figures, the run goes on
    const LoadResult r = run_ok(spec);
    check_clean(r, body_size(count));
    CHECK_FALSE(r.server_zc_sends_per_request.has_value());
    CHECK_FALSE(r.server_zc_copied_per_request.has_value());
    // nginx's master is idle; its CPU is counted when the pid is given (its worker is a child,
    // not counted): a number, not a verdict.
    CHECK(r.server_cpu_us_per_request.has_value());
  }
}

TEST_CASE("a receive buffer ring smaller than one answer still reads every answer whole") {
  TestServer ours;
  LoadSpec spec = quick_spec(ours.port(), "/weather?count=1000");
  spec.recv_buffers = 2;
  spec.recv_buffer_bytes = 4096;  // 2 x 4 KiB against 77 KB answers on 4 connections
  const LoadResult r = run_ok(spec);
  check_clean(r, body_size(1000));
}

namespace {

// Runs `spec` while the server process `pid` is stopped (SIGSTOP) for `pause`, starting `after` the
// run's warm-up began.
LoadResult run_pausing(const LoadSpec& spec, pid_t pid, std::chrono::milliseconds after,
                       std::chrono::milliseconds pause) {
  auto running = std::async(std::launch::async, [&spec] { return bench::run_load(spec); });
  std::this_thread::sleep_for(after);
  REQUIRE(::kill(pid, SIGSTOP) == 0);
  std::this_thread::sleep_for(pause);
  REQUIRE(::kill(pid, SIGCONT) == 0);
  auto result = running.get();
  REQUIRE_MESSAGE(result.has_value(), (result ? "" : result.error().message));
  return std::move(*result);
}

}  // namespace

TEST_CASE("a server paused: the open loop sees it in its p99, the closed loop hides it") {
  ServerBinary server = start_server_binary(RINGLAB_SERVER_BINARY, {"--threads", "1"});
  LoadSpec spec = quick_spec(server.port);
  spec.warmup = 200ms;
  spec.server_pid = server.child.pid();

  // What this machine does to a p99 without any pause: the closed loop's over 1 s. The pause is made
  // long against it (200 ms, or 5 times that p99 where the machine is slower), so that the bounds
  // below, halves and three quarters of the pause, stand clear of the machine's own latency.
  spec.duration = 1s;
  const LoadResult calm = run_ok(spec);
  CHECK(calm.errors.total() == 0);
  const auto calm_p99 = std::chrono::nanoseconds(calm.latency.value_at_percentile(99));
  const auto pause =
      std::max<std::chrono::milliseconds>(200ms, std::chrono::ceil<std::chrono::milliseconds>(5 * calm_p99));
  const auto pause_ns = static_cast<uint64_t>(std::chrono::nanoseconds(pause).count());
  INFO("closed loop without a pause: p99 " << calm_p99.count() << " ns; the pause: " << pause.count() << " ms");

  // 1 s into the window (after the 200 ms warm-up), and 1.8 s of window after it.
  spec.duration = 2800ms + pause;
  const auto pause_during = [&](const LoadSpec& paused) {
    return run_pausing(paused, server.child.pid(), 1200ms, pause);
  };

  spec.rate = 1000;
  const LoadResult open = pause_during(spec);
  CHECK(open.errors.total() == 0);
  // One request a millisecond.
  CHECK(open.requests == static_cast<uint64_t>(std::chrono::ceil<std::chrono::milliseconds>(spec.duration).count()));
  // The requests due in the second half of the pause waited more than half of it: pause / 2 of the
  // window's 2.8 s + pause, at least 3 % of the requests, more than the 1 % a p99 leaves out.
  CHECK(open.latency.value_at_percentile(99) >= pause_ns / 2);
  CHECK(open.latency.max() >= pause_ns * 3 / 4);
  CHECK(open.server_cpu_us_per_request.has_value());

  spec.rate = 0;
  const LoadResult closed = pause_during(spec);
  CHECK(closed.errors.total() == 0);
  // The same pause: only the 4 requests in flight waited for it.
  CHECK(closed.latency.max() >= pause_ns * 3 / 4);
  CHECK(closed.latency.value_at_percentile(99) < pause_ns / 2);
}

TEST_CASE("a server paused longer than the timeout: the requests in flight time out, their connections are "
          "opened again, and the load goes on") {
  ServerBinary server = start_server_binary(RINGLAB_SERVER_BINARY, {"--threads", "1"});
  LoadSpec spec = quick_spec(server.port);
  spec.warmup = 200ms;
  spec.timeout = 100ms;
  // A request is timed out up to a scan (10 ms here) after its timeout, and later by as much as this
  // machine is late to wake the generator's thread: the longest latency the run may record is
  // 250 ms, or the timeout and four such delays on a machine that wakes later. The pause is twice that.
  const auto late = longest_oversleep(10ms);
  const auto timed_out_by = std::chrono::ceil<std::chrono::milliseconds>(spec.timeout + 10ms + 4 * late);
  const auto longest_recorded = std::max<std::chrono::milliseconds>(250ms, timed_out_by);
  const auto pause = 2 * longest_recorded;
  INFO("woken up to " << late.count() << " ns late; latencies bounded by " << longest_recorded.count() << " ms, pause "
                      << pause.count() << " ms");
  // 500 ms into the window, and 600 ms of window after it.
  spec.duration = 1100ms + pause;
  const LoadResult r = run_pausing(spec, server.child.pid(), 700ms, pause);
  // The 4 requests in flight when it stopped, and those sent on the reopened connections (the
  // kernel completes their handshakes while the server is stopped), waited past 100 ms.
  CHECK(r.errors.timeout >= spec.connections);
  CHECK(r.reconnects >= spec.connections);
  CHECK(r.errors.total() == r.errors.timeout);
  // The answers the server wrote after SIGCONT to the abandoned connections were never read as
  // answers to later requests (that would be malformed, or a latency from the wrong send).
  CHECK(r.requests > 0);
  CHECK(r.latency.count() == r.requests);
  CHECK(r.body_bytes == r.requests * body_size(10));
  // No recorded latency spans the pause: a request that waited that long was not answered as far as
  // the run is concerned.
  CHECK(r.latency.max() < static_cast<uint64_t>(std::chrono::nanoseconds(longest_recorded).count()));
}

TEST_CASE("a connection the server closes while idle is opened again, and its next request still goes out") {
  server::ServerOptions options;
  // Closed 120-150 ms after its last answer (ticks), reopened at once, and asked again 50-80 ms later:
  // never near the next close, so no request races the server's close.
  options.idle_timeout = 120ms;
  TestServer ours(options);
  LoadSpec spec = quick_spec(ours.port());
  spec.connections = 2;
  spec.rate = 10;  // one request per connection every 200 ms: each waits past the idle timeout
  spec.warmup = 0ms;
  spec.duration = 1s;
  const LoadResult r = run_ok(spec);
  CHECK(r.errors.total() == 0);
  CHECK(r.requests == 10);
  CHECK(r.reconnects >= 4);
}

TEST_CASE("every request is the one wrk sends: the request line and Host, no other header") {
  // Two generators compared on one server must cost it the same per request: a header more is more
  // for the server to parse, and tools/peers would charge that to the generator.
  // Nobody answers; the first request is read here by hand (accept and recv bounded to 5 s).
  net::testing::Listener listener = net::testing::listen_loopback();
  const uint16_t port = listener.endpoint.port();
  LoadSpec spec = quick_spec(port, "/weather_10.json");
  spec.connections = 1;
  spec.warmup = 0ms;
  spec.duration = 300ms;
  spec.timeout = 100ms;
  auto load = std::async(std::launch::async, [&] { return bench::run_load(spec); });
  net::testing::bound_blocking_io(listener.fd.get());
  const net::Fd connection = net::testing::accept_one(listener);
  std::string request;
  char buffer[512];
  while (request.find("\r\n\r\n") == std::string::npos) {
    const ssize_t n = ::recv(connection.get(), buffer, sizeof buffer, 0);
    if (n <= 0) break;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  CHECK(load.get().has_value());
  CHECK(request == "GET /weather_10.json HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n");
}

TEST_CASE("errors are counted or returned, never retried") {
  SUBCASE("nothing listens: the run fails before it starts, naming the connect") {
    const uint16_t port = unused_port();
    auto result = bench::run_load(quick_spec(port));
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().message.find("connect") != std::string::npos);
  }
  SUBCASE("a server that never answers: each request times out `timeout` after its send, and its "
          "connection is opened again, in the window and after it") {
    SilentListener silent;
    LoadSpec spec = quick_spec(silent.port());
    spec.warmup = 100ms;
    spec.duration = 500ms;
    spec.timeout = 100ms;
    const auto started = std::chrono::steady_clock::now();
    const LoadResult r = run_ok(spec);
    const auto took = std::chrono::steady_clock::now() - started;
    CHECK(r.requests == 0);
    CHECK(r.latency.count() == 0);
    // Every connection sends at 0 and again after each timeout until the window ends at 600 ms: six
    // requests each at most, fewer as the scans (up to 10 ms a round late) and the reconnects take
    // their time on a busy machine; more than once per connection in any case.
    CHECK(r.errors.timeout >= 3 * spec.connections);
    CHECK(r.errors.timeout <= 6 * spec.connections);
    CHECK(r.reconnects >= 2 * spec.connections);
    CHECK(r.errors.total() == r.errors.timeout);
    // The last ones time out in the drain: the run ends within a timeout (and its scan) of the window.
    CHECK(took < 600ms + 100ms + 1s);
  }
  SUBCASE("bad settings") {
    LoadSpec spec = quick_spec(1);
    spec.recv_buffers = 3;
    CHECK_FALSE(bench::run_load(spec).has_value());
    spec = quick_spec(1);
    spec.threads = 5;  // 4 connections
    CHECK_FALSE(bench::run_load(spec).has_value());
    spec = quick_spec(1);
    spec.host = "example.org";  // no name resolution
    CHECK_FALSE(bench::run_load(spec).has_value());
  }
}

TEST_CASE("bench load runs the embedded server and writes its report") {
  TempDir out;
  const std::string stdout_path = out.file("stdout.txt");
  const std::string stderr_path = out.file("stderr.txt");
  const auto status = run({RINGLAB_BENCH_BINARY, "load", "--duration", "300ms", "--warmup", "100ms", "--connections",
                           "2", "--rounds", "2", "--path", "/weather?count=10,/weather?count=1000", "--out",
                           out.path()},
                          stdout_path, stderr_path);
  REQUIRE(status.has_value());
  INFO(read_file(stderr_path));
  CHECK(*status == 0);
  const std::string table = read_file(stdout_path);
  CHECK(table.find("| ours |") != std::string::npos);
  CHECK(table.find("`/weather?count=1000`") != std::string::npos);
  CHECK(table.find("ZC sent / copied per req") != std::string::npos);
  std::string json_path;
  for (const auto& folder : std::filesystem::directory_iterator(out.path())) {
    if (folder.is_directory() && std::filesystem::exists(folder.path() / "load.json")) {
      json_path = (folder.path() / "load.json").string();
    }
  }
  REQUIRE_FALSE(json_path.empty());
  const auto report = nlohmann::json::parse(read_file(json_path));
  REQUIRE(report["rows"].size() == 2);
  for (const auto& row : report["rows"]) {
    REQUIRE(row["rounds"].size() == 2);
    for (const auto& round : row["rounds"]) {
      CHECK(round["requests"].get<uint64_t>() > 0);
      CHECK(round["errors"]["malformed"].get<uint64_t>() == 0);
      CHECK_FALSE(round["server_cpu_us_per_request"].is_null());
      // The embedded server has a CPU to itself where there are two: that CPU's busy time is there.
      if (ringlab::base::allowed_cpus().size() >= 2) {
        CHECK(round["server_cpus_busy_us_per_request"].get<double>() > 0);
      } else {
        CHECK(round["server_cpus_busy_us_per_request"].is_null());
      }
      // Ours answers /stats: its zero-copy counts are there (0 with the default body strategy).
      CHECK(round["server_zc_sends_per_request"].get<double>() == 0.0);
      CHECK(round["server_zc_copied_per_request"].get<double>() == 0.0);
      uint64_t bucketed = 0;
      for (const auto& bucket : round["latency_ns"]["buckets"]) bucketed += bucket[2].get<uint64_t>();
      CHECK(bucketed == round["requests"].get<uint64_t>());
    }
  }

  SUBCASE("bad arguments are refused before anything starts") {
    for (const std::vector<std::string>& bad : {std::vector<std::string>{"--duration", "soon"},
                                                {"--recv-buffers", "3"},
                                                {"--threads", "3", "--connections", "2"},
                                                {"--url", "http://127.0.0.1:1", "--body-strategy", "copy"},
                                                {"--path", "weather"},
                                                {"--format", "html"}}) {
      std::vector<std::string> argv = {RINGLAB_BENCH_BINARY, "load"};
      argv.insert(argv.end(), bad.begin(), bad.end());
      CAPTURE(bad.front());
      const auto refused = run(argv, {}, stderr_path);
      REQUIRE(refused.has_value());
      CHECK(*refused == 2);
    }
  }
}
