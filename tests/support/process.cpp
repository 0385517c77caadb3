#include "process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>

namespace ringlab::testing {

using Clock = bench::ProcessClock;

// ---- Child ----

Child::Child(const std::vector<std::string>& argv, const std::string& stdout_path, const std::string& stderr_path) {
  auto open_out = [](const std::string& path) {
    net::Fd fd(::open(path.empty() ? "/dev/null" : path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    REQUIRE_MESSAGE(fd.valid(), "open ", path, ": ", std::strerror(errno));
    return fd;
  };
  const net::Fd out = open_out(stdout_path);
  const net::Fd err = open_out(stderr_path);
  start(argv, out.get(), err.get());
}

Child Child::with_stdout_pipe(const std::vector<std::string>& argv) {
  Child child;
  auto pipe = bench::make_pipe();
  REQUIRE_MESSAGE(pipe.has_value(), (pipe ? std::string() : pipe.error().message));
  const net::Fd err(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  child.start(argv, pipe->write.get(), err.valid() ? err.get() : STDERR_FILENO);
  child.stdout_pipe_ = std::move(pipe->read);
  return child;
}

void Child::start(const std::vector<std::string>& argv, int stdout_fd, int stderr_fd) {
  REQUIRE(!argv.empty());
  bench::SpawnOptions options;
  options.executable = argv.front();
  options.arguments.assign(argv.begin() + 1, argv.end());
  options.fds = {{stdout_fd, STDOUT_FILENO}, {stderr_fd, STDERR_FILENO}};
  auto spawned = bench::ChildProcess::spawn(options);
  REQUIRE_MESSAGE(spawned.has_value(), (spawned ? std::string() : spawned.error().message));
  process_ = std::move(*spawned);
}

Child::~Child() {
  if (process_.running()) process_.terminate(5s);
}

std::optional<std::string> Child::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (auto newline = pending_.find('\n'); newline != std::string::npos) {
      std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return line;
    }
    auto outcome = bench::read_some(stdout_pipe_.get(), pending_, deadline);
    if (!outcome || *outcome != bench::ReadOutcome::data) return std::nullopt;
  }
}

void Child::signal(int sig) { process_.signal(sig); }

std::optional<int> Child::wait(std::chrono::milliseconds timeout) {
  if (!process_.running()) return std::nullopt;
  const auto status = process_.wait_for(timeout);
  if (!status) return std::nullopt;
  return status->shell_code();
}

std::optional<int> run(const std::vector<std::string>& argv, const std::string& stdout_path,
                       const std::string& stderr_path, std::chrono::milliseconds timeout) {
  Child child(argv, stdout_path, stderr_path);
  return child.wait(timeout);  // on timeout, ~Child kills it
}

// ---- the server binary and /proc ----

ServerBinary start_server_binary(const std::string& path, const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {path, "--port", "0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  ServerBinary running{Child::with_stdout_pipe(argv), 0, {}};
  auto line = running.child.read_line();
  REQUIRE_MESSAGE(line.has_value(), "the server printed no line");
  running.first_line = *line;
  std::smatch match;
  const std::regex pattern(R"(listening on [0-9.]+:(\d+))");
  REQUIRE_MESSAGE(std::regex_match(running.first_line, match, pattern), "first line: '", running.first_line, "'");
  running.port = static_cast<uint16_t>(std::stoi(match[1].str()));
  return running;
}

uint64_t resident_bytes(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/status";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read ", path);
  const std::string status((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = status.find("VmRSS:");
  REQUIRE_MESSAGE(at != std::string::npos, "no VmRSS in /proc/", pid, "/status");
  return std::stoull(status.substr(at + 6)) * 1024;  // "VmRSS:    1234 kB"
}

std::size_t open_fds(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = ::opendir(path.c_str());
  REQUIRE_MESSAGE(dir != nullptr, "opendir ", path, ": ", std::strerror(errno));
  std::size_t count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count;
}

}  // namespace ringlab::testing
