// Tests for bench/src/measure/perf_control.cpp: the control-FIFO protocol against a stand-in for perf that
// answers well, late, in pieces, wrongly or not at all; then against the real perf record when the
// machine has it.
#include "ringlab/bench/measure/perf_control.hpp"
#include "../support/feature_gate.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace ringlab::bench;
using namespace std::chrono_literals;

namespace {

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// A fresh folder with two FIFOs; removed with everything in it on destruction.
struct Fifos {
  std::filesystem::path dir;
  PerfControlPaths paths;

  Fifos() {
    char name[] = "/tmp/ringlab-perf-control-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    dir = name;
    paths = {(dir / "ctl").string(), (dir / "ack").string()};
    REQUIRE(::mkfifo(paths.control.c_str(), 0600) == 0);
    REQUIRE(::mkfifo(paths.ack.c_str(), 0600) == 0);
  }
  ~Fifos() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

enum class Answer { ack, ack_in_pieces, silence, garbage };

// Stands in for perf record: reads commands from the control FIFO and answers on the ack FIFO as
// told. Opens both before the code under test does, as perf does before it starts the workload.
class FakePerf {
 public:
  FakePerf(const PerfControlPaths& paths, Answer answer) : answer_(answer) {
    ctl_ = ::open(paths.control.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ack_ = ::open(paths.ack.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    REQUIRE(ctl_ >= 0);
    REQUIRE(ack_ >= 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakePerf() {
    stop_ = true;
    thread_.join();
    ::close(ctl_);
    ::close(ack_);
  }
  std::vector<std::string> commands() {
    std::lock_guard lock(mutex_);
    return commands_;
  }

 private:
  void serve() {
    std::string pending;
    // Bounded: ends when told to, and in any case after 10 s.
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (!stop_ && std::chrono::steady_clock::now() < end) {
      pollfd pfd{ctl_, POLLIN, 0};
      if (::poll(&pfd, 1, 10) <= 0) continue;
      char buffer[64];
      const ssize_t n = ::read(ctl_, buffer, sizeof buffer);
      if (n <= 0) continue;
      pending.append(buffer, static_cast<std::size_t>(n));
      for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1)) {
        {
          std::lock_guard lock(mutex_);
          commands_.push_back(pending.substr(0, nl));
        }
        reply();
      }
    }
  }
  void reply() {
    static constexpr char kAck[] = "ack\n";  // with its NUL, as perf writes it
    switch (answer_) {
      case Answer::ack: (void)!::write(ack_, kAck, sizeof kAck); break;
      case Answer::ack_in_pieces:
        (void)!::write(ack_, "a", 1);
        std::this_thread::sleep_for(20ms);
        (void)!::write(ack_, "ck", 2);
        std::this_thread::sleep_for(20ms);
        (void)!::write(ack_, "\n\0", 2);
        break;
      case Answer::silence: break;
      case Answer::garbage: (void)!::write(ack_, "nak\n", 4); break;
    }
  }

  Answer answer_;
  int ctl_ = -1;
  int ack_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<std::string> commands_;
  std::thread thread_;
};

// A PerfControl opened on fresh FIFOs that a FakePerf answering `answer` holds open; fails the test if
// it cannot be opened.
struct Session {
  Fifos fifos;
  FakePerf perf;
  Result<PerfControl> control;

  Session(Answer answer, std::chrono::milliseconds timeout)
      : perf(fifos.paths, answer), control(PerfControl::open(fifos.paths, timeout)) {
    REQUIRE_MESSAGE(control.has_value(), (control ? std::string() : control.error().message));
  }
};

// Why opening `paths` failed (within 200 ms: it must not block); fails the test if it did not.
std::string open_error(const PerfControlPaths& paths) {
  const auto control = PerfControl::open(paths, 200ms);
  REQUIRE_FALSE(control.has_value());
  return control.error().message;
}

// Why enable() failed; fails the test if it did not.
std::string enable_error(PerfControl& control) {
  const auto on = control.enable();
  REQUIRE_FALSE(on.has_value());
  return on.error().message;
}

// One enable and one disable, each acknowledged.
void check_enable_then_disable(PerfControl& control) {
  const auto on = control.enable();
  CHECK_MESSAGE(on.has_value(), on.error().message);
  const auto off = control.disable();
  CHECK_MESSAGE(off.has_value(), off.error().message);
}

}  // namespace

TEST_CASE("parse_perf_control takes exactly two non-empty paths") {
  const auto ok = parse_perf_control("/tmp/a/ctl,/tmp/a/ack");
  REQUIRE(ok.has_value());
  CHECK(ok->control == "/tmp/a/ctl");
  CHECK(ok->ack == "/tmp/a/ack");
  for (const char* bad : {"", "ctl", "ctl,", ",ack", "a,b,c", ","}) {
    INFO("spec: '" << bad << "'");
    const auto parsed = parse_perf_control(bad);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(contains(parsed.error().message, "expected CONTROL_FIFO,ACK_FIFO"));
  }
}

TEST_CASE("enable and disable send perf's commands and return once acknowledged") {
  Fifos fifos;
  FakePerf perf(fifos.paths, Answer::ack);
  auto control = PerfControl::open(fifos.paths.control + "," + fifos.paths.ack, 2s);
  REQUIRE_MESSAGE(control.has_value(), (control ? std::string() : control.error().message));
  CHECK_FALSE(control->enabled());
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    const auto on = control->enable();
    REQUIRE_MESSAGE(on.has_value(), (on ? std::string() : on.error().message));
    CHECK(control->enabled());
    const auto off = control->disable();
    REQUIRE_MESSAGE(off.has_value(), (off ? std::string() : off.error().message));
    CHECK_FALSE(control->enabled());
  }
  CHECK(perf.commands() ==
        std::vector<std::string>{"enable", "disable", "enable", "disable", "enable", "disable"});
}

TEST_CASE("an ack that arrives in pieces is still one ack") {
  Session session(Answer::ack_in_pieces, 2s);
  check_enable_then_disable(*session.control);
}

TEST_CASE("no ack within the timeout is an error that names the command and the FIFO") {
  Session session(Answer::silence, 200ms);
  const std::string error = enable_error(*session.control);
  INFO(error);
  CHECK(contains(error, "no ack for 'enable' within 200 ms"));
  CHECK(contains(error, session.fifos.paths.ack));
  CHECK_FALSE(session.control->enabled());
}

TEST_CASE("an answer that is not an ack is an error quoting it") {
  Session session(Answer::garbage, 2s);
  const std::string error = enable_error(*session.control);
  INFO(error);
  CHECK(contains(error, "unexpected answer 'nak\\n' to 'enable'"));
}

TEST_CASE("open fails without blocking when no perf reads the control FIFO") {
  Fifos fifos;
  const std::string error = open_error(fifos.paths);
  INFO(error);
  CHECK(contains(error, "ENXIO"));
  CHECK(contains(error, "no perf reading it"));
}

TEST_CASE("open refuses paths that are missing or not FIFOs") {
  Fifos fifos;
  const std::string regular = (fifos.dir / "plain").string();
  { std::FILE* f = std::fopen(regular.c_str(), "w"); REQUIRE(f != nullptr); std::fclose(f); }
  struct Row {
    const char* name;
    PerfControlPaths paths;
    const char* error_part;
  };
  const Row rows[] = {
      {"control missing", {(fifos.dir / "nope").string(), fifos.paths.ack}, "ENOENT"},
      {"ack missing", {fifos.paths.control, (fifos.dir / "nope").string()}, "ENOENT"},
      {"control a regular file", {regular, fifos.paths.ack}, "not a FIFO"},
      {"ack a regular file", {fifos.paths.control, regular}, "not a FIFO"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    const std::string error = open_error(row.paths);
    INFO(error);
    CHECK(contains(error, row.error_part));
  }
}

TEST_CASE("destroying an enabled PerfControl tells perf to disable") {
  Fifos fifos;
  FakePerf perf(fifos.paths, Answer::ack);
  {
    auto control = PerfControl::open(fifos.paths, 2s);
    REQUIRE_MESSAGE(control.has_value(), (control ? std::string() : control.error().message));
    REQUIRE(control->enable().has_value());
    PerfControl moved = std::move(*control);  // the moved-from one must not send anything
    CHECK(moved.enabled());
  }
  // The fake reads asynchronously: give it a bounded while to see the last command.
  for (int i = 0; i < 200 && perf.commands().size() < 2; ++i) std::this_thread::sleep_for(10ms);
  CHECK(perf.commands() == std::vector<std::string>{"enable", "disable"});
}

TEST_CASE("the real perf record acknowledges enable and disable" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  if (!ringlab::testing::feature_available("perf", ::access("/usr/bin/perf", X_OK) == 0, "perf is not installed")) return;
  Fifos fifos;
  const std::string data = (fifos.dir / "perf.data").string();
  const std::string control_arg = "--control=fifo:" + fifos.paths.control + "," + fifos.paths.ack;
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::execl("/usr/bin/perf", "perf", "record", "-q", "-e", "cpu-clock", "--no-inherit", control_arg.c_str(),
            "-D", "-1", "-o", data.c_str(), "--", "sleep", "1", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // perf opens the FIFOs while it starts up; wait for that (bounded) before talking to it.
  Result<PerfControl> control = fail("not tried");
  for (int attempt = 0; attempt < 100; ++attempt) {
    control = PerfControl::open(fifos.paths, 5s);
    if (control) break;
    std::this_thread::sleep_for(20ms);
  }
  if (!control) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    FAIL("perf record did not open its control FIFOs: " << control.error().message);
  }
  check_enable_then_disable(*control);

  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);  // perf ends with its workload, a 1 s sleep
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(std::filesystem::exists(data));
}
