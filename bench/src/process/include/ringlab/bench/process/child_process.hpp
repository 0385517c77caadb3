#pragma once
// ChildProcess: one child process started with fork and exec, and everything bench and its tests
// do around one: pipes, bounded reads, bounded waits, SIGTERM then SIGKILL, and always a reap. The
// embedded server (server_process.hpp), the allocator jobs (allocators.hpp) and the end-to-end
// tests' children all go through it, so a fix here reaches every child.
//
// What spawn() does in the child, between fork and exec, in this order:
//   1. leads a new process group             (SpawnOptions::own_process_group)
//   2. PR_SET_PDEATHSIG                       (parent_death_signal; see Threads below)
//   3. setns(fd, CLONE_NEWNET)                (network_namespace_fd: the child runs in that namespace)
//   4. sched_setaffinity to one CPU           (cpu)
//   5. the descriptors of `fds` put in place  (dup2; whatever else is close-on-exec stays behind)
//   6. an empty signal mask; SIGINT ignored   (ignore_interrupt)
//   7. the caller's hook                      (pre_exec)
//   8. execve with the given or the inherited environment
// A failure of any step is sent back to spawn() on a close-on-exec pipe (the step and its errno),
// and spawn() reaps the child and returns it as an error ("sched_setaffinity CPU 3 for /path/server:
// Invalid argument (EINVAL)"): a child that could not be pinned, moved or executed never runs as if
// it had been. A successful exec closes that pipe, which is how spawn() knows the program runs.
//
// Errors: bench::Error values with the step, the program and the errno name. Nothing is retried.
//
// Ownership and lifetimes: a ChildProcess owns the child until it is reaped (try_wait, wait_for,
// terminate or kill_and_reap) and a pidfd for it; it is move-only. Its destructor kills (SIGKILL,
// to the group when it leads one) and reaps a child still running: an owner that wants a graceful
// stop calls terminate() first. Pipes are net::Fd values owned by the caller; spawn() only
// duplicates the descriptors named in `fds` into the child, the parent's copies stay the caller's
// to close (close the write end of an output pipe after spawn(), or the reader never sees EOF).
//
// Threads: spawn() may be called from any thread, but PR_SET_PDEATHSIG fires when the *thread*
// that called spawn() exits, not the process: call it from a thread that lives as long as the child
// should. One ChildProcess is used by one thread at a time. Between fork and exec only
// async-signal-safe calls are made (everything the child needs is built before the fork), and the
// pre_exec hook is held to the same rule.
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/net/socket.hpp"

namespace ringlab::bench {

using ProcessClock = std::chrono::steady_clock;

// Milliseconds left until `deadline` for poll(): 0 once it has passed, at most about 12 days.
[[nodiscard]] int poll_timeout_ms(ProcessClock::time_point deadline) noexcept;

// How a reaped child ended: the status waitpid() gave.
struct ExitStatus {
  int wait_status = 0;  // -1: someone else reaped it (waitpid said ECHILD)

  [[nodiscard]] bool success() const noexcept;  // exited with status 0
  // The exit status, or 128 + the signal that killed it, as a shell writes $?; -1 when unknown.
  [[nodiscard]] int shell_code() const noexcept;
  // "exited with status 1", "killed by signal 11 (SIGSEGV)", "was reaped elsewhere".
  [[nodiscard]] std::string describe() const;
};

// Puts the parent's descriptor `parent_fd` on `child_fd` in the child (without close-on-exec there).
// Any numbers may be given: the child first moves every source above all the targets, so one
// mapping never overwrites the source of another.
struct FdMapping {
  int parent_fd = -1;
  int child_fd = -1;
};

struct SpawnOptions {
  std::string executable;                // path of the program (no PATH search); argv[0]
  std::vector<std::string> arguments;    // argv[1...]
  // "NAME=value" entries; nullopt: this process's environment (see environment_with()).
  std::optional<std::vector<std::string>> environment;
  std::vector<FdMapping> fds;            // e.g. {pipe.write.get(), STDOUT_FILENO}
  int cpu = -1;                          // pin the child (and so every thread it starts) to it; -1: no
  int network_namespace_fd = -1;         // an open /run/netns/NAME (or /proc/PID/ns/net); -1: ours
  bool own_process_group = false;        // signals then reach what the child starts too
  int parent_death_signal = 0;           // e.g. SIGTERM; 0: none
  bool ignore_interrupt = false;         // SIGINT ignored: the parent stops the child itself
  // Last step before exec, in the child: async-signal-safe calls only (no allocation, no locks).
  // Returns 0, or an errno value that fails spawn() as the step "pre-exec".
  std::function<int()> pre_exec;
};

class ChildProcess {
 public:
  ChildProcess() = default;  // no child: running() is false
  [[nodiscard]] static Result<ChildProcess> spawn(const SpawnOptions& options);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  // Readable (POLLIN) once the child has exited, reaped or not; for a caller's own poll().
  [[nodiscard]] int pidfd() const noexcept { return pidfd_.get(); }
  // Started and not reaped yet.
  [[nodiscard]] bool running() const noexcept { return pid_ > 0 && !status_; }
  // How it ended, once reaped.
  [[nodiscard]] const std::optional<ExitStatus>& status() const noexcept { return status_; }

  // Reaps the child if it has exited; nullopt while it runs. Never blocks.
  std::optional<ExitStatus> try_wait();
  // Waits up to `timeout` for the child to exit and reaps it; nullopt if it still runs then.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  // Sends `sig` to the child (to its group when it leads one); nothing once it is reaped.
  void signal(int sig) noexcept;

  struct Stopped {
    ExitStatus status;
    bool killed = false;  // it outlived the grace period and got SIGKILL
  };
  // SIGTERM, up to `grace` for it to exit, then SIGKILL; always reaps. A child already reaped
  // returns how it ended.
  Stopped terminate(std::chrono::milliseconds grace);
  // SIGKILL and reap, at once.
  ExitStatus kill_and_reap();

 private:
  pid_t pid_ = -1;
  bool group_ = false;
  net::Fd pidfd_;
  std::optional<ExitStatus> status_;
};

// A pipe whose two ends are close-on-exec.
struct Pipe {
  net::Fd read;
  net::Fd write;
};
[[nodiscard]] Result<Pipe> make_pipe();

// A command line without the options named (each as "--name VALUE" or "--name=VALUE"; every option named
// takes a value): what a parent that starts a child bench keeps of its own arguments.
[[nodiscard]] std::vector<std::string> arguments_without(std::span<const std::string> arguments,
                                                         std::span<const std::string_view> options);

// This process's environment with NAME removed, then set to `value` when one is given.
[[nodiscard]] std::vector<std::string> environment_with(std::string_view name,
                                                        std::optional<std::string_view> value);

enum class ReadOutcome {
  data,          // bytes were appended to `into`
  end_of_file,   // every writer has closed the pipe
  timed_out,     // the deadline passed with nothing to read
  child_exited,  // `watch` exited and nothing was waiting to be read
};
// One bounded read: waits until `fd` is readable (or the deadline, or `watch`'s exit when given),
// then appends what one read() returns (at most 64 KiB). Bytes waiting are read before an exit is
// reported, so a loop until child_exited misses nothing the child wrote before it exited (unless a
// grandchild still writes). Errors: poll or read failing with anything but EINTR or EAGAIN.
[[nodiscard]] Result<ReadOutcome> read_some(int fd, std::string& into, ProcessClock::time_point deadline,
                                            const ChildProcess* watch = nullptr);

}  // namespace ringlab::bench
