#include "common.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <span>

#include "ringlab/json/checksum.hpp"
#include "ringlab/json/consume.hpp"
#include "ringlab/json/profiles.hpp"
#include "ringlab/json/serialize.hpp"

namespace ringlab::strategies::detail {

std::string case_label(std::string_view strategy, const CaseConfig& config) {
  std::string label(strategy);
  label += ' ';
  label += payload_name(config.payload);
  label += ' ';
  label += std::to_string(config.count);
  if (config.inflight > 1) {  // as bench names the case
    label += " x";
    label += std::to_string(config.inflight);
  }
  if (config.client == Client::fresh) label += " fresh client";
  return label;
}

std::unexpected<Error> fail_on_connection(std::string_view label, std::size_t index, std::size_t count,
                                          std::string_view what) {
  if (count == 1) return fail(label, what);  // the case's only connection: naming it adds nothing
  return fail(label, "connection " + std::to_string(index + 1) + " of " + std::to_string(count) + ": " +
                         std::string(what));
}

std::optional<std::string> no_fresh_client(const CaseConfig& config, std::string_view why) {
  if (config.client != Client::fresh) return std::nullopt;
  std::string reason(why);
  reason += ": a fresh client would make that request inside every op";
  return reason;
}

std::unexpected<Error> fail(std::string_view label, std::string_view what) {
  std::string message(label);
  message += ": ";
  message += what;
  return std::unexpected<Error>(Error{std::move(message)});
}

std::string get_target(const CaseConfig& config, std::string_view extra_query) {
  std::string target = "/";
  target += payload_name(config.payload);
  target += "?count=";
  target += std::to_string(config.count);
  target += extra_query;
  if (config.server_mode == ServerMode::seed) {
    target += "&cache=0&chunked=1&chunk=";
    target += std::to_string(kSeedChunkBytes);
  }
  return target;
}

void append_payload_json(std::string& out, const CaseConfig& config) {
  switch (config.payload) {
    case Payload::repos: json::append_repos_json(out, config.count); return;
    case Payload::github: json::append_github_json(out, config.count); return;
    case Payload::profiles: json::append_profiles_json(out, config.count); return;
    case Payload::weather: break;
  }
  json::append_weather_json(out, config.count);
}

std::string authority(const CaseConfig& config) {
  const bool v6 = config.host.find(':') != std::string::npos;
  std::string text;
  if (v6) text += '[';
  text += config.host;
  if (v6) text += ']';
  text += ':';
  text += std::to_string(config.port);
  return text;
}

uint64_t expected_checksum(const CaseConfig& config) {
  switch (config.payload) {
    case Payload::repos: return json::checksum_repos(config.count);
    case Payload::github: return json::checksum_github(config.count);
    case Payload::profiles: return json::checksum_profiles(config.count);
    case Payload::weather: break;
  }
  return json::checksum_weather(config.count);
}

uint64_t echo_checksum(std::string_view answer) noexcept {
  uint64_t hash = 0xCBF29CE484222325ULL;  // FNV-1a's offset basis and prime
  for (const char c : answer) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001B3ULL;
  }
  hash ^= answer.size();
  return hash * 0x100000001B3ULL;
}

namespace {

std::string hex(uint64_t value) {
  std::array<char, 20> digits{};
  auto [end, ec] = std::to_chars(digits.data(), digits.data() + digits.size(), value, 16);
  (void)ec;
  return "0x" + std::string(digits.data(), end);
}

}  // namespace

std::string checksum_mismatch(uint64_t got, uint64_t expected, std::size_t count) {
  return "checksum " + hex(got) + " differs from the generator's " + hex(expected) + " for " +
         std::to_string(count) + " records: the body or its deserialization is wrong";
}

json::Result<uint64_t> OwningModels::parse(Payload payload, json::Parser& parser, simdjson::padded_string_view body) {
  return fill(payload, [&](auto& records) { return json::parse_array(parser, body, records); });
}

json::Result<uint64_t> ViewModels::parse(Payload payload, json::Parser& parser, json::PaddedBody body) {
  return fill(payload, [&](auto& records) { return json::parse_array(parser, body, records); });
}

std::string describe(const json::Error& error) { return "json: " + error.message; }

namespace {

// The next whitespace-separated field of `line`, advancing it.
std::string_view next_field(std::string_view& line) noexcept {
  const std::size_t start = line.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    line = {};
    return {};
  }
  line.remove_prefix(start);
  const std::size_t end = line.find(' ');
  std::string_view field = line.substr(0, end);
  line = end == std::string_view::npos ? std::string_view{} : line.substr(end);
  return field;
}

// The port of an "ADDRESS:PORT" field (both hex), or -1.
int port_of(std::string_view address) noexcept {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon + 1 >= address.size()) return -1;
  unsigned value = 0;
  const char* first = address.data() + colon + 1;
  const char* last = address.data() + address.size();
  auto [end, ec] = std::from_chars(first, last, value, 16);
  if (ec != std::errc{} || end != last || value > 0xFFFF) return -1;
  return static_cast<int>(value);
}

}  // namespace

std::size_t count_time_wait(std::string_view proc_net_tcp, uint16_t port) noexcept {
  constexpr std::string_view kTimeWait = "06";
  std::size_t count = 0;
  bool header = true;
  while (!proc_net_tcp.empty()) {
    const std::size_t newline = proc_net_tcp.find('\n');
    std::string_view line = proc_net_tcp.substr(0, newline);
    proc_net_tcp = newline == std::string_view::npos ? std::string_view{} : proc_net_tcp.substr(newline + 1);
    if (header) {  // "  sl  local_address rem_address   st tx_queue ..."
      header = false;
      continue;
    }
    const std::string_view slot = next_field(line);
    const std::string_view local = next_field(line);
    const std::string_view remote = next_field(line);
    const std::string_view state = next_field(line);
    if (slot.empty() || slot.back() != ':' || state != kTimeWait) continue;
    if (port == 0 || port_of(local) == port || port_of(remote) == port) ++count;
  }
  return count;
}

namespace {

// The whole of a /proc file (its size is not known before reading); empty when it cannot be read.
std::string read_proc_file(const char* path) {
  std::string text;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char chunk[16384];
  while (true) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace

std::size_t count_time_wait(uint16_t port) {
  std::size_t count = 0;
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) count += count_time_wait(read_proc_file(path), port);
  return count;
}

void take_thread_usage(IoCounters& counters) noexcept {
  const auto nanoseconds = [](const timeval& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_usec) * 1000u;
  };
  rusage usage{};
  if (::getrusage(RUSAGE_THREAD, &usage) != 0) return;
  counters.worker_user_ns = nanoseconds(usage.ru_utime);
  counters.worker_system_ns = nanoseconds(usage.ru_stime);
  counters.worker_minor_faults = static_cast<uint64_t>(usage.ru_minflt);
}

}  // namespace ringlab::strategies::detail
