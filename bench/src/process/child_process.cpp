#include "ringlab/bench/process/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>

extern char** environ;

namespace ringlab::bench {

namespace {

// The steps of spawn() in the child, in order; a failing one is sent back with its errno.
enum class Step : int { process_group, parent_death_signal, parent_gone, network_namespace, pin, fds, pre_exec, exec };

struct StepFailure {
  Step step;
  int error;
};

// Writes the failure to the status pipe and ends the child: async-signal-safe.
[[noreturn]] void child_fails(int status_fd, Step step, int error) noexcept {
  const StepFailure failure{step, error};
  [[maybe_unused]] const ssize_t put = ::write(status_fd, &failure, sizeof failure);
  ::_exit(127);
}

std::string describe_failure(const StepFailure& failure, const SpawnOptions& options) {
  const std::string& program = options.executable;
  switch (failure.step) {
    case Step::process_group: return errno_message("setpgid", "for " + program, failure.error);
    case Step::parent_death_signal: return errno_message("prctl PR_SET_PDEATHSIG", "for " + program, failure.error);
    case Step::parent_gone: return program + ": the parent exited before the child was started";
    case Step::network_namespace:
      return errno_message("setns", fmt::format("fd {} for {}", options.network_namespace_fd, program), failure.error);
    case Step::pin: return errno_message("sched_setaffinity", fmt::format("CPU {} for {}", options.cpu, program), failure.error);
    case Step::fds: return errno_message("dup2", "for " + program, failure.error);
    case Step::pre_exec: return errno_message("pre-exec", "for " + program, failure.error);
    case Step::exec: return errno_message("exec", program, failure.error);
  }
  return errno_message("spawn", program, failure.error);
}

std::optional<ExitStatus> reap(pid_t pid, int flags) {
  for (;;) {
    int status = 0;
    const pid_t reaped = ::waitpid(pid, &status, flags);
    if (reaped == pid) return ExitStatus{status};
    if (reaped == 0) return std::nullopt;
    if (errno != EINTR) return ExitStatus{-1};  // ECHILD: not ours to wait for any more
  }
}

}  // namespace

int poll_timeout_ms(ProcessClock::time_point deadline) noexcept {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - ProcessClock::now()).count();
  return left > 0 ? static_cast<int>(std::min<long long>(left, 1 << 30)) : 0;
}

bool ExitStatus::success() const noexcept {
  return wait_status >= 0 && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

int ExitStatus::shell_code() const noexcept {
  if (wait_status < 0) return -1;
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

std::string ExitStatus::describe() const {
  if (wait_status < 0) return "was reaped elsewhere";
  if (WIFEXITED(wait_status)) return fmt::format("exited with status {}", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    const char* abbrev = sigabbrev_np(sig);
    return fmt::format("killed by signal {} (SIG{})", sig, abbrev != nullptr ? abbrev : "?");
  }
  return "stopped";
}

Result<ChildProcess> ChildProcess::spawn(const SpawnOptions& options) {
  // Everything the child needs is built before fork(): between fork and exec only async-signal-safe
  // calls are allowed (the parent may have threads, one of which may hold the allocator's lock).
  std::vector<std::string> argument_storage{options.executable};
  argument_storage.insert(argument_storage.end(), options.arguments.begin(), options.arguments.end());
  std::vector<char*> argv;
  for (std::string& argument : argument_storage) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment_storage;
  std::vector<char*> envp;
  if (options.environment) {
    environment_storage = *options.environment;
    for (std::string& entry : environment_storage) envp.push_back(entry.data());
    envp.push_back(nullptr);
  }
  char** const child_environment = options.environment ? envp.data() : environ;

  // Sources are first moved above every target (and above the status pipe), so that putting one
  // in place cannot overwrite another that is still to come.
  int above_targets = 3;
  for (const FdMapping& mapping : options.fds) above_targets = std::max(above_targets, mapping.child_fd + 1);
  std::vector<int> moved_sources(options.fds.size(), -1);

  auto status_pipe = make_pipe();
  if (!status_pipe) return std::unexpected(status_pipe.error().wrap("spawn " + options.executable));
  const int status_fd = ::fcntl(status_pipe->write.get(), F_DUPFD_CLOEXEC, above_targets);
  if (status_fd < 0) return fail(errno_message("fcntl F_DUPFD_CLOEXEC", "for " + options.executable, errno));
  net::Fd status_write(status_fd);
  status_pipe->write.reset();

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return fail(errno_message("fork", "for " + options.executable, errno));
  if (pid == 0) {
    if (options.own_process_group && ::setpgid(0, 0) != 0) child_fails(status_fd, Step::process_group, errno);
    if (options.parent_death_signal != 0) {
      if (::prctl(PR_SET_PDEATHSIG, options.parent_death_signal) != 0) {
        child_fails(status_fd, Step::parent_death_signal, errno);
      }
      // The parent may have died before prctl took effect: then nobody would send the signal.
      if (::getppid() != parent) child_fails(status_fd, Step::parent_gone, 0);
    }
    if (options.network_namespace_fd >= 0 && ::setns(options.network_namespace_fd, CLONE_NEWNET) != 0) {
      child_fails(status_fd, Step::network_namespace, errno);
    }
    if (options.cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(options.cpu, &set);
      if (::sched_setaffinity(0, sizeof set, &set) != 0) child_fails(status_fd, Step::pin, errno);
    }
    for (std::size_t i = 0; i < options.fds.size(); ++i) {
      moved_sources[i] = ::fcntl(options.fds[i].parent_fd, F_DUPFD_CLOEXEC, above_targets);
      if (moved_sources[i] < 0) child_fails(status_fd, Step::fds, errno);
    }
    for (std::size_t i = 0; i < options.fds.size(); ++i) {
      // dup2 gives the new descriptor no close-on-exec flag: it survives the exec, the moved copy not.
      if (::dup2(moved_sources[i], options.fds[i].child_fd) < 0) child_fails(status_fd, Step::fds, errno);
    }
    // The parent may block signals in this thread; a program starts with none blocked.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (options.ignore_interrupt) ::signal(SIGINT, SIG_IGN);
    if (options.pre_exec) {
      if (const int error = options.pre_exec(); error != 0) child_fails(status_fd, Step::pre_exec, error);
    }
    ::execve(argv[0], argv.data(), child_environment);
    child_fails(status_fd, Step::exec, errno);
  }

  ChildProcess child;
  child.pid_ = pid;
  child.group_ = options.own_process_group;
  status_write.reset();
  StepFailure failure{};
  ssize_t got = 0;
  do {
    got = ::read(status_pipe->read.get(), &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    child.status_ = reap(pid, 0);
    return fail(describe_failure(failure, options));
  }
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    const int error = errno;
    child.kill_and_reap();
    return fail(errno_message("pidfd_open", fmt::format("{} (pid {})", options.executable, pid), error));
  }
  child.pidfd_ = net::Fd(pidfd);
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      group_(other.group_),
      pidfd_(std::move(other.pidfd_)),
      status_(std::exchange(other.status_, std::nullopt)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (running()) kill_and_reap();
    pid_ = std::exchange(other.pid_, -1);
    group_ = other.group_;
    pidfd_ = std::move(other.pidfd_);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (running()) kill_and_reap();
}

std::optional<ExitStatus> ChildProcess::try_wait() {
  if (!running()) return status_;
  status_ = reap(pid_, WNOHANG);
  return status_;
}

std::optional<ExitStatus> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  if (!running()) return status_;
  const auto deadline = ProcessClock::now() + timeout;
  for (;;) {
    if (auto status = try_wait()) return status;
    pollfd exit_event{pidfd_.get(), POLLIN, 0};
    const int ready = ::poll(&exit_event, 1, poll_timeout_ms(deadline));
    if (ready == 0) return try_wait();
    if (ready < 0 && errno != EINTR) return try_wait();
  }
}

void ChildProcess::signal(int sig) noexcept {
  if (running()) ::kill(group_ ? -pid_ : pid_, sig);
}

ChildProcess::Stopped ChildProcess::terminate(std::chrono::milliseconds grace) {
  if (!running()) return {status_.value_or(ExitStatus{-1}), false};
  signal(SIGTERM);
  if (auto status = wait_for(grace)) return {*status, false};
  return {kill_and_reap(), true};
}

ExitStatus ChildProcess::kill_and_reap() {
  if (!running()) return status_.value_or(ExitStatus{-1});
  signal(SIGKILL);
  status_ = reap(pid_, 0);
  return *status_;
}

Result<Pipe> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return fail(errno_message("pipe2", "", errno));
  return Pipe{net::Fd(fds[0]), net::Fd(fds[1])};
}

std::vector<std::string> environment_with(std::string_view name, std::optional<std::string_view> value) {
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (text.size() > name.size() && text.starts_with(name) && text[name.size()] == '=') continue;
    out.emplace_back(text);
  }
  if (value) out.push_back(fmt::format("{}={}", name, *value));
  return out;
}

Result<ReadOutcome> read_some(int fd, std::string& into, ProcessClock::time_point deadline,
                              const ChildProcess* watch) {
  char buffer[65536];
  for (;;) {
    pollfd events[2] = {{fd, POLLIN, 0}, {watch != nullptr ? watch->pidfd() : -1, POLLIN, 0}};
    const int ready = ::poll(events, watch != nullptr ? 2 : 1, poll_timeout_ms(deadline));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return fail(errno_message("poll", fmt::format("fd {}", fd), errno));
    }
    if ((events[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n > 0) {
        into.append(buffer, static_cast<std::size_t>(n));
        return ReadOutcome::data;
      }
      if (n == 0) return ReadOutcome::end_of_file;
      if (errno == EINTR || errno == EAGAIN) continue;
      return fail(errno_message("read", fmt::format("fd {}", fd), errno));
    }
    if (watch != nullptr && (events[1].revents & POLLIN) != 0) return ReadOutcome::child_exited;
    if (ready == 0) return ReadOutcome::timed_out;
  }
}

std::vector<std::string> arguments_without(std::span<const std::string> arguments,
                                           std::span<const std::string_view> options) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& argument = arguments[i];
    bool dropped = false;
    for (std::string_view option : options) {
      if (argument == option) {
        ++i;  // its value
        dropped = true;
        break;
      }
      if (argument.size() > option.size() && argument.starts_with(option) && argument[option.size()] == '=') {
        dropped = true;
        break;
      }
    }
    if (!dropped) out.push_back(argument);
  }
  return out;
}

}  // namespace ringlab::bench
