// The before/after run's line protocol (ab_protocol.hpp).
#include "ab_protocol.hpp"

#include <unistd.h>

#include <cerrno>
#include <fmt/format.h>

#include "ringlab/base/errno_text.hpp"

namespace ringlab::bench::app {

Status LineChannel::send(std::string_view line) {
  std::string text(line);
  text += '\n';
  return send_raw(text);
}

Status LineChannel::send_raw(std::string_view text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(out_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(base::errno_message("write", "to " + peer_, errno));
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Status LineChannel::fill(ProcessClock::time_point deadline, std::string_view waiting_for) {
  auto outcome = read_some(in_, buffer_, deadline, watch_);
  if (!outcome) return std::unexpected(outcome.error().wrap(fmt::format("reading from {}", peer_)));
  switch (*outcome) {
    case ReadOutcome::data: return {};
    case ReadOutcome::end_of_file: return fail(fmt::format("{} closed its pipe while bench waited for {}", peer_, waiting_for));
    case ReadOutcome::timed_out: return fail(fmt::format("{} did not answer in time while bench waited for {}", peer_, waiting_for));
    case ReadOutcome::child_exited: return fail(fmt::format("{} exited while bench waited for {}", peer_, waiting_for));
  }
  return fail("unreachable");
}

Result<std::string> LineChannel::receive(std::chrono::milliseconds timeout) {
  const auto deadline = ProcessClock::now() + timeout;
  for (;;) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (auto filled = fill(deadline, "a line"); !filled) return std::unexpected(filled.error());
  }
}

Result<std::string> LineChannel::receive_bytes(std::size_t bytes, std::chrono::milliseconds timeout) {
  const auto deadline = ProcessClock::now() + timeout;
  while (buffer_.size() < bytes) {
    if (auto filled = fill(deadline, fmt::format("{} bytes of its report", bytes)); !filled) {
      return std::unexpected(filled.error());
    }
  }
  std::string out = buffer_.substr(0, bytes);
  buffer_.erase(0, bytes);
  return out;
}

std::vector<std::string> split_fields(std::string_view line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (;;) {
    const auto tab = line.find('\t', start);
    fields.emplace_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  return fields;
}

}  // namespace ringlab::bench::app
