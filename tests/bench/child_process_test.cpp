#include "ringlab/bench/process/child_process.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace rb = ringlab::bench;
using namespace std::chrono_literals;

namespace {

rb::SpawnOptions shell(const std::string& script) {
  rb::SpawnOptions options;
  options.executable = "/bin/sh";
  options.arguments = {"-c", script};
  return options;
}

// Everything a child wrote on `pipe` until it closed it (or 10 s passed).
std::string drain(rb::Pipe& pipe) {
  pipe.write.reset();
  std::string out;
  const auto deadline = rb::ProcessClock::now() + 10s;
  for (;;) {
    auto outcome = rb::read_some(pipe.read.get(), out, deadline);
    REQUIRE(outcome.has_value());
    if (*outcome != rb::ReadOutcome::data) return out;
  }
}

void check_no_child_left() {
  errno = 0;
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
}

}  // namespace

TEST_CASE("a child writes on the descriptors it was given and its exit is described") {
  auto pipe = rb::make_pipe();
  REQUIRE(pipe.has_value());
  auto options = shell("printf out; printf three >&3; exit 5");
  // The pipe's write end goes to two places: stdout and fd 3.
  options.fds = {{pipe->write.get(), STDOUT_FILENO}, {pipe->write.get(), 3}};
  auto child = rb::ChildProcess::spawn(options);
  REQUIRE_MESSAGE(child.has_value(), (child ? std::string() : child.error().message));
  CHECK(drain(*pipe) == "outthree");
  const auto status = child->wait_for(10s);
  REQUIRE(status.has_value());
  CHECK(status->shell_code() == 5);
  CHECK(status->describe() == "exited with status 5");
  CHECK_FALSE(child->running());
}

TEST_CASE("every step that fails before exec is an error naming the step, and leaves no child") {
  struct Row {
    const char* name;
    rb::SpawnOptions options;
    const char* expected;
  };
  rb::SpawnOptions missing;
  missing.executable = "/nonexistent/program";
  auto unpinnable = shell("exit 0");
  unpinnable.cpu = CPU_SETSIZE - 1;
  auto not_a_namespace = shell("exit 0");
  const int dev_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(dev_null >= 0);
  not_a_namespace.network_namespace_fd = dev_null;
  auto refused_hook = shell("exit 0");
  refused_hook.pre_exec = [] { return EPERM; };
  const Row rows[] = {
      {"a missing program", missing, "exec /nonexistent/program: No such file or directory (ENOENT)"},
      {"a CPU it cannot run on", unpinnable, "sched_setaffinity CPU"},
      {"a descriptor that is no network namespace", not_a_namespace, "setns fd"},
      {"a pre-exec hook that refuses", refused_hook, "pre-exec for /bin/sh: Operation not permitted (EPERM)"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    const auto child = rb::ChildProcess::spawn(row.options);
    REQUIRE_FALSE(child.has_value());
    INFO(child.error().message);
    CHECK(child.error().message.find(row.expected) != std::string::npos);
    check_no_child_left();
  }
  ::close(dev_null);
}

TEST_CASE("terminate: SIGTERM first, SIGKILL after the grace period, and the child is reaped") {
  SUBCASE("a child that exits on SIGTERM") {
    auto child = rb::ChildProcess::spawn(shell("exec sleep 30"));
    REQUIRE(child.has_value());
    const auto stopped = child->terminate(5s);
    CHECK_FALSE(stopped.killed);
    CHECK(stopped.status.describe() == "killed by signal 15 (SIGTERM)");
  }
  SUBCASE("a child that ignores it") {
    auto pipe = rb::make_pipe();
    REQUIRE(pipe.has_value());
    auto options = shell("trap '' TERM; echo ready; while :; do sleep 1; done");
    options.fds = {{pipe->write.get(), STDOUT_FILENO}};
    options.own_process_group = true;  // the kill reaches the sleep too
    auto child = rb::ChildProcess::spawn(options);
    REQUIRE(child.has_value());
    pipe->write.reset();
    std::string ready;
    REQUIRE(rb::read_some(pipe->read.get(), ready, rb::ProcessClock::now() + 10s) == rb::ReadOutcome::data);
    const auto stopped = child->terminate(200ms);
    CHECK(stopped.killed);
    CHECK(stopped.status.shell_code() == 128 + SIGKILL);
  }
  check_no_child_left();
}

TEST_CASE("read_some reports the child's exit when it has nothing more to read") {
  auto pipe = rb::make_pipe();
  REQUIRE(pipe.has_value());
  // The background sleep keeps the pipe open after the shell exits: no end of file comes.
  auto options = shell("printf last; sleep 2 & exit 0");
  options.fds = {{pipe->write.get(), STDOUT_FILENO}};
  auto child = rb::ChildProcess::spawn(options);
  REQUIRE(child.has_value());
  pipe->write.reset();
  std::string out;
  rb::ReadOutcome outcome = rb::ReadOutcome::data;
  while (outcome == rb::ReadOutcome::data) {
    auto next = rb::read_some(pipe->read.get(), out, rb::ProcessClock::now() + 10s, &*child);
    REQUIRE(next.has_value());
    outcome = *next;
  }
  CHECK(outcome == rb::ReadOutcome::child_exited);
  CHECK(out == "last");
  CHECK(child->wait_for(1s).has_value());
}

TEST_CASE("environment_with replaces one variable and keeps the rest") {
  ::setenv("RINGLAB_CHILD_TEST", "old", 1);
  const auto replaced = rb::environment_with("RINGLAB_CHILD_TEST", "new");
  const auto removed = rb::environment_with("RINGLAB_CHILD_TEST", std::nullopt);
  ::unsetenv("RINGLAB_CHILD_TEST");
  const auto count = [](const std::vector<std::string>& env, const std::string& entry) {
    return std::count(env.begin(), env.end(), entry);
  };
  CHECK(count(replaced, "RINGLAB_CHILD_TEST=new") == 1);
  CHECK(count(replaced, "RINGLAB_CHILD_TEST=old") == 0);
  CHECK(std::none_of(removed.begin(), removed.end(),
                     [](const std::string& e) { return e.starts_with("RINGLAB_CHILD_TEST="); }));
  CHECK(removed.size() + 1 == replaced.size());
}
