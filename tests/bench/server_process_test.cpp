// The server child: start, readiness, stop, and no orphan whatever happens. The "server" here is
// this test executable itself, re-executed in a fake-server mode chosen by an environment variable,
// so every misbehaviour can be produced on purpose.
#include "ringlab/bench/process/server_process.hpp"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "ringlab/base/cpus.hpp"

namespace rb = ringlab::bench;
using namespace std::chrono_literals;

namespace {

constexpr const char* kModeVariable = "RINGLAB_TEST_FAKE_SERVER";

volatile sig_atomic_t g_stop = 0;
extern "C" void on_term(int) { g_stop = 1; }

int listen_loopback(uint16_t& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return -1;
  }
  port = ntohs(addr.sin_port);
  return fd;
}

// Answers every connection with `response` until SIGTERM (or 30 s, so nothing outlives the test).
int serve(const char* response, bool ignore_term) {
  struct sigaction sa{};
  sa.sa_handler = ignore_term ? SIG_IGN : &on_term;
  ::sigaction(SIGTERM, &sa, nullptr);
  uint16_t port = 0;
  const int listener = listen_loopback(port);
  if (listener < 0) return 3;
  std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(port));
  std::fflush(stdout);
  const auto end = std::chrono::steady_clock::now() + 30s;
  while (g_stop == 0 && std::chrono::steady_clock::now() < end) {
    pollfd p{listener, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const int c = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    char buffer[2048];
    [[maybe_unused]] const ssize_t got = ::recv(c, buffer, sizeof buffer, 0);
    [[maybe_unused]] const ssize_t put = ::send(c, response, std::strlen(response), MSG_NOSIGNAL);
    ::close(c);
  }
  return 0;
}

int fake_server_main(const std::string& mode) {
  if (mode == "ok") return serve("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", false);
  if (mode == "health503") {
    return serve("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", false);
  }
  if (mode == "ignore-term") return serve("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true);
  if (mode == "exit1") return 1;
  if (mode == "garbage") {
    std::printf("hello, I am not a server\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(10s);
    return 0;
  }
  if (mode == "silent") {
    std::this_thread::sleep_for(10s);
    return 0;
  }
  return 4;
}

// Runs before doctest's main: in fake-server mode this process is the server and never a test.
const int kFakeServer = [] {
  if (const char* mode = std::getenv(kModeVariable)) std::_Exit(fake_server_main(mode));
  return 0;
}();

std::string self() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  REQUIRE(n > 0);
  return std::string(path, static_cast<std::size_t>(n));
}

rb::ServerProcessOptions fake(const char* mode) {
  ::setenv(kModeVariable, mode, 1);
  rb::ServerProcessOptions options;
  options.executable = self();
  options.start_timeout = 2s;
  options.stop_timeout = 2s;
  return options;
}

bool gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// One connection on a loopback listener, answered by `respond` on its own thread.
class OneShotPeer {
 public:
  template <class Respond>
  explicit OneShotPeer(Respond respond) {
    listener_ = listen_loopback(port_);
    REQUIRE(listener_ >= 0);
    thread_ = std::thread([this, respond] {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 2000) <= 0) return;
      const int c = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      respond(c);
      ::close(c);
    });
  }
  ~OneShotPeer() {
    thread_.join();
    ::close(listener_);
  }
  [[nodiscard]] uint16_t port() const { return port_; }

 private:
  int listener_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

void answer(int c, const char* text) {
  char buffer[2048];
  [[maybe_unused]] const ssize_t got = ::recv(c, buffer, sizeof buffer, 0);
  [[maybe_unused]] const ssize_t put = ::send(c, text, std::strlen(text), MSG_NOSIGNAL);
}

}  // namespace

TEST_CASE("the listening line gives the port; anything else is refused") {
  struct Row {
    const char* line;
    int port;  // -1: refused
  };
  const Row rows[] = {
      {"listening on 127.0.0.1:40123", 40123}, {"listening on 127.0.0.1:40123\n", 40123},
      {"listening on [::1]:8080\r\n", 8080},   {"listening on 127.0.0.1:0", -1},
      {"listening on 127.0.0.1:70000", -1},    {"listening on 127.0.0.1:80x", -1},
      {"listening on 127.0.0.1", -1},          {"Listening on 127.0.0.1:80", -1},
      {"", -1},                                {"listening on :80", -1},
  };
  for (const Row& row : rows) {
    INFO("line '" << row.line << "'");
    const auto port = rb::parse_listening_line(row.line);
    if (row.port < 0) {
      CHECK_FALSE(port.has_value());
    } else {
      REQUIRE(port.has_value());
      CHECK(*port == row.port);
    }
  }
}

TEST_CASE("a GET for the status line: answers, garbage, early close, silence and refusal") {
  SUBCASE("a status is read from the status line") {
    OneShotPeer peer([](int c) { answer(c, "HTTP/1.1 204 No Content\r\n\r\n"); });
    const auto status = rb::http_get_status("127.0.0.1", peer.port(), "/health", 2s);
    REQUIRE(status.has_value());
    CHECK(*status == 204);
  }
  SUBCASE("the status line may arrive a byte at a time") {
    OneShotPeer peer([](int c) {
      char buffer[2048];
      [[maybe_unused]] const ssize_t got = ::recv(c, buffer, sizeof buffer, 0);
      const std::string text = "HTTP/1.0 200 OK\r\n\r\n";
      for (char ch : text) {
        [[maybe_unused]] const ssize_t put = ::send(c, &ch, 1, MSG_NOSIGNAL);
        std::this_thread::sleep_for(1ms);
      }
    });
    const auto status = rb::http_get_status("127.0.0.1", peer.port(), "/health", 2s);
    REQUIRE(status.has_value());
    CHECK(*status == 200);
  }
  SUBCASE("something that is not HTTP is an error quoting it") {
    OneShotPeer peer([](int c) { answer(c, "SSH-2.0-OpenSSH\r\n"); });
    const auto status = rb::http_get_status("127.0.0.1", peer.port(), "/health", 2s);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().message.find("not an HTTP/1.x status line: 'SSH-2.0-OpenSSH'") != std::string::npos);
  }
  SUBCASE("a peer that closes without answering") {
    OneShotPeer peer([](int c) { answer(c, ""); });
    const auto status = rb::http_get_status("127.0.0.1", peer.port(), "/health", 2s);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().message.find("connection closed after 0 bytes") != std::string::npos);
  }
  SUBCASE("a peer that never answers runs into the deadline") {
    OneShotPeer peer([](int c) {
      char buffer[2048];
      [[maybe_unused]] const ssize_t got = ::recv(c, buffer, sizeof buffer, 0);
      std::this_thread::sleep_for(500ms);
    });
    const auto status = rb::http_get_status("127.0.0.1", peer.port(), "/health", 100ms);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().message.find("ETIMEDOUT") != std::string::npos);
  }
  SUBCASE("a closed port is refused, with the peer named") {
    uint16_t port = 0;
    const int fd = listen_loopback(port);
    ::close(fd);
    const auto status = rb::http_get_status("127.0.0.1", port, "/health", 1s);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().message.find("connect 127.0.0.1:" + std::to_string(port)) != std::string::npos);
    CHECK(status.error().message.find("ECONNREFUSED") != std::string::npos);
  }
}

TEST_CASE("a server that prints its port and answers /health is started and stopped cleanly") {
  auto server = rb::ServerProcess::start(fake("ok"));
  REQUIRE(server.has_value());
  const pid_t pid = server->pid();
  CHECK(server->port() != 0);
  CHECK(server->host() == "127.0.0.1");
  const auto health = rb::http_get_status("127.0.0.1", server->port(), "/health", 2s);
  REQUIRE(health.has_value());
  CHECK(*health == 200);
  CHECK(server->stop().has_value());
  CHECK_FALSE(server->running());
  CHECK(gone(pid));  // reaped: not even a zombie
  CHECK(server->stop().has_value());  // idempotent
}

TEST_CASE("the destructor stops the server too") {
  pid_t pid = -1;
  {
    auto server = rb::ServerProcess::start(fake("ok"));
    REQUIRE(server.has_value());
    pid = server->pid();
  }
  CHECK(gone(pid));
}

TEST_CASE("start-up failures are errors that say what the server did, and leave no child") {
  struct Row {
    const char* mode;
    const char* expected;
  };
  const Row rows[] = {
      {"exit1", "exited with status 1 before printing 'listening on'"},
      {"garbage", "first line is 'hello, I am not a server', not 'listening on HOST:PORT'"},
      {"silent", "no 'listening on' line within 300 ms"},
      {"health503", "GET /health answered 503, not 200"},
  };
  for (const Row& row : rows) {
    INFO("mode " << row.mode);
    auto options = fake(row.mode);
    options.start_timeout = 300ms;
    auto server = rb::ServerProcess::start(options);
    REQUIRE_FALSE(server.has_value());
    INFO(server.error().message);
    CHECK(server.error().message.find(row.expected) != std::string::npos);
    // Whatever the failure, no child of ours is left, running or zombie.
    int status = 0;
    CHECK(::waitpid(-1, &status, WNOHANG) == -1);
    CHECK(errno == ECHILD);
  }
}

TEST_CASE("a missing server binary is an error that says how to get one") {
  rb::ServerProcessOptions options;
  options.executable = "/nonexistent/server";
  const auto server = rb::ServerProcess::start(options);
  REQUIRE_FALSE(server.has_value());
  CHECK(server.error().message.find("/nonexistent/server") != std::string::npos);
  CHECK(server.error().message.find("--url") != std::string::npos);
}

TEST_CASE("a server that ignores SIGTERM is killed after the grace period and reaped") {
  auto options = fake("ignore-term");
  options.stop_timeout = 200ms;
  auto server = rb::ServerProcess::start(options);
  REQUIRE(server.has_value());
  const pid_t pid = server->pid();
  const auto stopped = server->stop();
  REQUIRE_FALSE(stopped.has_value());
  CHECK(stopped.error().message.find("still running 200 ms after SIGTERM; killed") != std::string::npos);
  CHECK(gone(pid));
}

TEST_CASE("when bench dies without stopping it, the server is stopped by the kernel") {
  // Become the subreaper so the orphaned server is re-parented here and can be waited for.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t middle = ::fork();
  REQUIRE(middle >= 0);
  if (middle == 0) {
    // Plays bench: starts the server and dies abruptly.
    auto server = rb::ServerProcess::start(fake("ok"));
    const pid_t pid = server ? server->pid() : -1;
    [[maybe_unused]] const ssize_t put = ::write(fds[1], &pid, sizeof pid);
    ::_exit(0);  // no destructor: like a crash
  }
  pid_t server_pid = -1;
  REQUIRE(::read(fds[0], &server_pid, sizeof server_pid) == sizeof server_pid);
  ::close(fds[0]);
  ::close(fds[1]);
  int status = 0;
  REQUIRE(::waitpid(middle, &status, 0) == middle);
  REQUIRE(server_pid > 0);
  // PR_SET_PDEATHSIG delivered SIGTERM; the fake server exits on it. Bounded wait for its exit.
  bool exited = false;
  for (int i = 0; i < 500 && !exited; ++i) {
    exited = ::waitpid(server_pid, &status, WNOHANG) == server_pid;
    if (!exited) std::this_thread::sleep_for(10ms);
  }
  if (!exited) {
    ::kill(server_pid, SIGKILL);
    ::waitpid(server_pid, &status, 0);
  }
  CHECK(exited);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST_CASE("the server binary is looked for next to bench, then in the build tree's server folder") {
  namespace fs = std::filesystem;
  char dir_template[] = "/tmp/ringlab-server-path-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const fs::path root(dir_template);
  fs::create_directories(root / "bench");
  fs::create_directories(root / "server");
  const std::string bench = (root / "bench" / "bench").string();
  // Nothing there: the usual place is named.
  CHECK(rb::default_server_path(bench) == (root / "bench" / "server").string());
  // The build tree layout: <build>/server/server beside <build>/bench/bench.
  {
    std::ofstream(root / "server" / "server") << "#!/bin/sh\n";
    fs::permissions(root / "server" / "server", fs::perms::owner_all);
  }
  CHECK(rb::default_server_path(bench) == (root / "server" / "server").string());
  // Right next to bench wins.
  {
    std::ofstream(root / "bench" / "server") << "#!/bin/sh\n";
    fs::permissions(root / "bench" / "server", fs::perms::owner_all);
  }
  CHECK(rb::default_server_path(bench) == (root / "bench" / "server").string());
  fs::remove_all(root);
}

TEST_CASE("the allowed CPUs are listed and the thread can be pinned to one of them") {
  const auto cpus = ringlab::base::allowed_cpus();
  REQUIRE_FALSE(cpus.empty());
  CHECK(rb::pin_current_thread(cpus.front()).has_value());
  const auto bad = rb::pin_current_thread(CPU_SETSIZE - 1);
  if (!bad) CHECK(bad.error().message.find("sched_setaffinity CPU") != std::string::npos);
  // Restore the original mask for the tests that follow.
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  CHECK(::sched_setaffinity(0, sizeof set, &set) == 0);
}
