#include "ringlab/bench/measure/perf_control.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace ringlab::bench {

namespace {

constexpr std::string_view kAck = "ack\n";

std::string where(const std::string& path) { return "perf control: " + path; }

// Control characters shown as escapes, so that an error message stays on one line.
std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) out += "\\x" + std::string(1, "0123456789abcdef"[(c >> 4) & 0xf]) + "0123456789abcdef"[c & 0xf];
    else out += c;
  }
  return out;
}

Status check_fifo(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return fail(errno_message("perf control: stat", path, errno));
  if (!S_ISFIFO(st.st_mode)) return fail(where(path) + ": not a FIFO (make it with mkfifo; tools/profile does)");
  return {};
}

}  // namespace

Result<PerfControlPaths> parse_perf_control(std::string_view spec) {
  const std::size_t comma = spec.find(',');
  if (comma == std::string_view::npos || comma == 0 || comma + 1 == spec.size() ||
      spec.find(',', comma + 1) != std::string_view::npos) {
    return fail("'" + std::string(spec) + "': expected CONTROL_FIFO,ACK_FIFO");
  }
  return PerfControlPaths{std::string(spec.substr(0, comma)), std::string(spec.substr(comma + 1))};
}

Result<PerfControl> PerfControl::open(std::string_view spec, std::chrono::milliseconds ack_timeout) {
  auto paths = parse_perf_control(spec);
  if (!paths) return std::unexpected(paths.error());
  return open(*paths, ack_timeout);
}

Result<PerfControl> PerfControl::open(const PerfControlPaths& paths, std::chrono::milliseconds ack_timeout) {
  for (const std::string* path : {&paths.control, &paths.ack}) {
    if (auto ok = check_fifo(*path); !ok) return std::unexpected(ok.error());
  }
  PerfControl control;
  control.paths_ = paths;
  control.timeout_ = ack_timeout;
  // Non-blocking opens: a FIFO open waits for the other side by default, and bench must not hang
  // when perf is not there.
  control.ack_fd_ = ::open(paths.ack.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (control.ack_fd_ < 0) return fail(errno_message("perf control: open", paths.ack, errno));
  control.control_fd_ = ::open(paths.control.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (control.control_fd_ < 0) {
    const int code = errno;
    std::string message = errno_message("perf control: open", paths.control, code);
    if (code == ENXIO) message += ": no perf reading it (start bench under perf record --control=fifo:...)";
    return fail(std::move(message));
  }
  // Whatever an earlier run left unread on ACK would be taken for the answer to our first command.
  char stale[256];
  while (::read(control.ack_fd_, stale, sizeof stale) > 0) {
  }
  return control;
}

PerfControl::PerfControl(PerfControl&& other) noexcept
    : control_fd_(std::exchange(other.control_fd_, -1)),
      ack_fd_(std::exchange(other.ack_fd_, -1)),
      enabled_(std::exchange(other.enabled_, false)),
      timeout_(other.timeout_),
      paths_(std::move(other.paths_)) {}

PerfControl& PerfControl::operator=(PerfControl&& other) noexcept {
  if (this != &other) {
    close_all();
    control_fd_ = std::exchange(other.control_fd_, -1);
    ack_fd_ = std::exchange(other.ack_fd_, -1);
    enabled_ = std::exchange(other.enabled_, false);
    timeout_ = other.timeout_;
    paths_ = std::move(other.paths_);
  }
  return *this;
}

PerfControl::~PerfControl() { close_all(); }

void PerfControl::close_all() noexcept {
  if (enabled_ && control_fd_ >= 0) {
    // Best effort and without waiting: a destructor must not block on perf.
    constexpr std::string_view kDisable = "disable\n";
    (void)!::write(control_fd_, kDisable.data(), kDisable.size());
  }
  enabled_ = false;
  if (control_fd_ >= 0) ::close(control_fd_);
  if (ack_fd_ >= 0) ::close(ack_fd_);
  control_fd_ = -1;
  ack_fd_ = -1;
}

Status PerfControl::enable() {
  if (auto ok = command("enable"); !ok) return ok;
  enabled_ = true;
  return {};
}

Status PerfControl::disable() {
  if (auto ok = command("disable"); !ok) return ok;
  enabled_ = false;
  return {};
}

Status PerfControl::command(std::string_view name) {
  if (control_fd_ < 0) return fail("perf control: " + std::string(name) + ": not open");
  std::string line(name);
  line += '\n';
  // A FIFO write of fewer than PIPE_BUF bytes is all or nothing.
  ssize_t written;
  do {
    written = ::write(control_fd_, line.data(), line.size());
  } while (written < 0 && errno == EINTR);
  if (written < 0) {
    const int code = errno;
    std::string message = errno_message("perf control: write '" + std::string(name) + "' to", paths_.control, code);
    if (code == EAGAIN) message += ": FIFO full, perf is not reading it";
    if (code == EPIPE) message += ": perf has exited";
    return fail(std::move(message));
  }

  // perf answers "ack\n" and a NUL; the NUL may come in the same read or the next, and is skipped.
  std::string reply;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return fail(where(paths_.ack) + ": no ack for '" + std::string(name) + "' within " +
                  std::to_string(timeout_.count()) + " ms" + (reply.empty() ? "" : " (got '" + printable(reply) + "')"));
    }
    pollfd pfd{ack_fd_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return fail(errno_message("perf control: poll", paths_.ack, errno));
    }
    if (ready == 0) continue;
    char buffer[64];
    const ssize_t n = ::read(ack_fd_, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return fail(errno_message("perf control: read", paths_.ack, errno));
    }
    if (n == 0) {
      return fail(where(paths_.ack) + ": perf closed it before acknowledging '" + std::string(name) + "'");
    }
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] != '\0') reply += buffer[i];
    }
    if (reply == kAck) return {};
    if (!kAck.starts_with(reply)) {
      return fail(where(paths_.ack) + ": unexpected answer '" + printable(reply) + "' to '" + std::string(name) + "'");
    }
  }
}

}  // namespace ringlab::bench
