#pragma once
// Child processes for tests: a program started (through bench's ChildProcess) with its output to
// files or to a pipe the test reads, killed (SIGTERM, then SIGKILL) and reaped by PID on every path,
// so a failing test leaves nothing running. Plus the `server` binary started on a free port, and
// what /proc says of a process.
//
// Errors: a program that cannot be started, a file that cannot be opened or a /proc entry that
// cannot be read fails the test (REQUIRE). Every wait is bounded (kProcessTimeout by default).
// Threads: the test's thread. Ownership: a Child owns its process and its pipe; move-only.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ringlab/bench/process/child_process.hpp"
#include "ringlab/net/socket.hpp"

namespace ringlab::testing {

using namespace std::chrono_literals;

inline constexpr std::chrono::milliseconds kProcessTimeout = 20s;

// A child process (bench::ChildProcess), killed (SIGTERM, then SIGKILL) and reaped by PID on
// destruction. A program that cannot be started fails the test.
class Child {
 public:
  // Starts argv[0] (a path) with stdout and stderr to the given files (empty: /dev/null).
  Child(const std::vector<std::string>& argv, const std::string& stdout_path = {},
        const std::string& stderr_path = {});
  // Starts it with stdout on a pipe the test reads with read_line().
  static Child with_stdout_pipe(const std::vector<std::string>& argv);
  ~Child();
  Child(Child&& other) noexcept = default;
  Child& operator=(Child&&) = delete;

  [[nodiscard]] pid_t pid() const { return process_.pid(); }
  // A line of stdout (pipe mode), without the newline; nullopt on EOF or timeout.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout = kProcessTimeout);
  // Sends a signal to this child.
  void signal(int sig);
  // Waits for exit; the exit status (or 128 + signal), nullopt on timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout = kProcessTimeout);

 private:
  Child() = default;
  void start(const std::vector<std::string>& argv, int stdout_fd, int stderr_fd);
  bench::ChildProcess process_;
  net::Fd stdout_pipe_;
  std::string pending_;
};

// The `server` binary started with --port 0 and `flags`; the port read from its first stdout line
// ("listening on 127.0.0.1:PORT"). Fails the test if that line does not come.
struct ServerBinary {
  Child child;
  uint16_t port = 0;
  std::string first_line;
};
ServerBinary start_server_binary(const std::string& path, const std::vector<std::string>& flags);

// What /proc says of a process now: resident memory (VmRSS, bytes) and open file descriptors
// (entries of /proc/PID/fd). Fail the test when /proc cannot be read.
uint64_t resident_bytes(pid_t pid);
std::size_t open_fds(pid_t pid);

// Runs a command to completion (bounded): exit status, or nullopt if it had to be killed.
std::optional<int> run(const std::vector<std::string>& argv, const std::string& stdout_path = {},
                       const std::string& stderr_path = {}, std::chrono::milliseconds timeout = 60s);

}  // namespace ringlab::testing
