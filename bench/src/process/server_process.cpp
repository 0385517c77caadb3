#include "ringlab/bench/process/server_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

namespace ringlab::bench {

using Clock = ProcessClock;
using std::chrono::milliseconds;

std::optional<uint16_t> parse_listening_line(std::string_view line) {
  constexpr std::string_view kPrefix = "listening on ";
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (!line.starts_with(kPrefix)) return std::nullopt;
  line.remove_prefix(kPrefix.size());
  const std::size_t colon = line.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  const std::string_view host = line.substr(0, colon);
  if (host.front() == '[' && host.back() != ']') return std::nullopt;
  const std::string_view digits = line.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc{} || end != digits.data() + digits.size() || port == 0 || port > 65535) return std::nullopt;
  return static_cast<uint16_t>(port);
}

namespace {

// Waits for `events` on fd until the deadline; false on timeout, with errno set to ETIMEDOUT.
bool wait_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, poll_timeout_ms(deadline));
    if (n > 0) return true;
    if (n == 0) {
      errno = ETIMEDOUT;
      return false;
    }
    if (errno != EINTR) return false;
  }
}

}  // namespace

Result<int> http_get_status(const std::string& host, uint16_t port, std::string_view target, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const std::string peer = fmt::format("{}:{}", host, port);
  // Numeric addresses (the usual case: loopback) are converted directly; only a name goes through
  // getaddrinfo, which may load NSS modules.
  sockaddr_storage address{};
  socklen_t address_length = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    address_length = sizeof(sockaddr_in);
  } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    address_length = sizeof(sockaddr_in6);
  } else {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
      return fail(fmt::format("resolve {}: {}", host, gai_strerror(rc)));
    }
    std::memcpy(&address, found->ai_addr, found->ai_addrlen);
    address_length = found->ai_addrlen;
    ::freeaddrinfo(found);
  }
  net::Fd fd(::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return fail(errno_message("socket", peer, errno));
  const int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), address_length);
  const int connect_errno = errno;
  if (rc != 0 && connect_errno != EINPROGRESS) return fail(errno_message("connect", peer, connect_errno));
  if (rc != 0) {
    if (!wait_fd(fd.get(), POLLOUT, deadline)) return fail(errno_message("connect", peer, errno));
    int so_error = 0;
    socklen_t len = sizeof so_error;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &len);
    if (so_error != 0) return fail(errno_message("connect", peer, so_error));
  }
  const std::string request =
      fmt::format("GET {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", target, peer);
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
    } else if (errno == EAGAIN) {
      if (!wait_fd(fd.get(), POLLOUT, deadline)) return fail(errno_message("send", peer, errno));
    } else if (errno != EINTR) {
      return fail(errno_message("send", peer, errno));
    }
  }
  // The status line is all that is needed: "HTTP/1.1 200 OK\r\n".
  std::string head;
  while (head.find("\r\n") == std::string::npos) {
    if (head.size() > 4096) return fail(fmt::format("GET {} from {}: no status line in 4096 bytes", target, peer));
    char buffer[512];
    const ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n > 0) {
      head.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      return fail(fmt::format("GET {} from {}: connection closed after {} bytes without a status line", target,
                              peer, head.size()));
    } else if (errno == EAGAIN) {
      if (!wait_fd(fd.get(), POLLIN, deadline)) return fail(errno_message("recv", peer, errno));
    } else if (errno != EINTR) {
      return fail(errno_message("recv", peer, errno));
    }
  }
  int status = 0;
  if (!head.starts_with("HTTP/1.") || head.size() < 12 ||
      std::from_chars(head.data() + 9, head.data() + 12, status).ec != std::errc{}) {
    return fail(fmt::format("GET {} from {}: not an HTTP/1.x status line: '{}'", target, peer,
                            head.substr(0, head.find("\r\n"))));
  }
  return status;
}

std::optional<std::string> bin_dir_program(std::string_view program) {
  const char* dir = std::getenv(kBinDirVariable);
  if (dir == nullptr || *dir == '\0') return std::nullopt;
  return (std::filesystem::path(dir) / program).string();
}

std::string default_server_path(const std::string& bench_executable) {
  namespace fs = std::filesystem;
  if (auto bundled = bin_dir_program("server")) return *bundled;
  const fs::path dir = fs::path(bench_executable).parent_path();
  const auto executable_file = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  for (const fs::path& candidate : {dir / "server", dir / ".." / "server" / "server", dir / "server" / "server"}) {
    if (executable_file(candidate)) return fs::weakly_canonical(candidate).string();
  }
  return (dir / "server").string();
}

Status pin_current_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) {
    return fail(errno_message("sched_setaffinity", fmt::format("CPU {}", cpu), errno));
  }
  return {};
}

Result<ServerProcess> ServerProcess::start(const ServerProcessOptions& options) {
  if (::access(options.executable.c_str(), X_OK) != 0) {
    return fail(errno_message("server", options.executable, errno) +
                " (build the server target, or give --server PATH or --url)");
  }
  auto output = make_pipe();
  if (!output) return std::unexpected(output.error().wrap("server stdout"));

  SpawnOptions spawn;
  spawn.executable = options.executable;
  spawn.arguments = {"--port", "0", "--bind", options.bind};
  spawn.arguments.insert(spawn.arguments.end(), options.extra_arguments.begin(), options.extra_arguments.end());
  spawn.fds = {{output->write.get(), STDOUT_FILENO}};
  // Pinned in the child before exec, so every server thread inherits the mask; a CPU that cannot be
  // had fails the start instead of leaving an unpinned server under a report that says pinned.
  spawn.cpu = options.cpu;
  spawn.parent_death_signal = SIGTERM;
  // Ctrl-C reaches the whole foreground group; bench stops the server itself, in order.
  spawn.ignore_interrupt = true;
  auto child = ChildProcess::spawn(spawn);
  if (!child) return std::unexpected(child.error().wrap("server"));
  output->write.reset();

  ServerProcess server;
  server.child_ = std::move(*child);
  server.executable_ = options.executable;
  server.host_ = options.bind;
  server.stop_timeout_ = options.stop_timeout;
  const std::string who = fmt::format("server {} (pid {})", options.executable, server.child_.pid());
  const auto deadline = Clock::now() + options.start_timeout;

  std::string line;
  while (line.find('\n') == std::string::npos) {
    if (line.size() > 4096) return fail(fmt::format("{}: first line longer than 4096 bytes", who));
    auto outcome = read_some(output->read.get(), line, deadline, &server.child_);
    if (!outcome) return std::unexpected(outcome.error().wrap(who + " stdout"));
    if (*outcome == ReadOutcome::data) continue;
    if (*outcome == ReadOutcome::timed_out) {
      return fail(fmt::format("{}: no 'listening on' line within {} ms", who, options.start_timeout.count()));
    }
    // Its stdout closed or it exited: the server is gone or going.
    const auto status = server.child_.wait_for(milliseconds(500));
    return fail(fmt::format("{}: {} before printing 'listening on'", who,
                            status ? status->describe() : "closed its stdout"));
  }
  line.resize(line.find('\n'));
  const auto port = parse_listening_line(line);
  if (!port) return fail(fmt::format("{}: first line is '{}', not 'listening on HOST:PORT'", who, line));
  server.port_ = *port;
  // Kept open until stop(), so that a late line from the server does not kill it with SIGPIPE.
  server.stdout_ = std::move(output->read);

  auto status = http_get_status(server.host_, server.port_, "/health",
                                std::max(milliseconds(1), milliseconds(poll_timeout_ms(deadline))));
  if (!status) return std::unexpected(status.error().wrap(who + ": GET /health"));
  if (*status != 200) return fail(fmt::format("{}: GET /health answered {}, not 200", who, *status));
  return server;
}

ServerProcess::ServerProcess(ServerProcess&& other) noexcept = default;

ServerProcess& ServerProcess::operator=(ServerProcess&& other) noexcept {
  if (this != &other) {
    (void)stop();
    child_ = std::move(other.child_);
    stdout_ = std::move(other.stdout_);
    host_ = std::move(other.host_);
    port_ = other.port_;
    executable_ = std::move(other.executable_);
    stop_timeout_ = other.stop_timeout_;
  }
  return *this;
}

ServerProcess::~ServerProcess() { (void)stop(); }

Status ServerProcess::stop() {
  stdout_.reset();
  if (!child_.running()) return {};
  const std::string who = fmt::format("server {} (pid {})", executable_, child_.pid());
  if (auto status = child_.try_wait()) {
    return fail(fmt::format("{}: {} while bench ran", who, status->describe()));
  }
  const auto stopped = child_.terminate(stop_timeout_);
  if (stopped.killed) {
    return fail(fmt::format("{}: still running {} ms after SIGTERM; killed", who, stop_timeout_.count()));
  }
  if (stopped.status.success()) return {};
  return fail(fmt::format("{}: {} on SIGTERM", who, stopped.status.describe()));
}

}  // namespace ringlab::bench
