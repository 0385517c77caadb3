// Measurements of the path to a server before the cases: the link's RTT and rate, and the
// server's /env. Plain blocking sockets with deadlines: these are probes of the path, not of a
// strategy, and must not depend on the code under test.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <cstring>
#include <nlohmann/json.hpp>

#include "ringlab/bench/core/statistics.hpp"
#include "ringlab/bench/link/link_session.hpp"
#include "ringlab/http/response_receiver.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/http/timeline.hpp"

namespace ringlab::bench {
namespace {

using Clock = std::chrono::steady_clock;

class Connection {
 public:
  static Result<Connection> open(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (const int code = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); code != 0)
      return fail(fmt::format("resolve {}: {}", host, ::gai_strerror(code)));
    const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      ::freeaddrinfo(found);
      return fail(errno_message("socket", host, errno));
    }
    Connection connection(fd, fmt::format("{}:{}", host, port));
    timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const int connected = ::connect(fd, found->ai_addr, found->ai_addrlen);
    const int code = errno;
    ::freeaddrinfo(found);
    if (connected != 0) return fail(errno_message("connect", connection.peer_, code));
    return connection;
  }

  Connection(Connection&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), peer_(std::move(other.peer_)), receiver_(http::ParserLimits{}, 64 * 1024) {}
  Connection& operator=(Connection&&) = delete;
  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
  }

  // One GET on the kept-alive connection, framed by http::ResponseReceiver (the project's one
  // response exchange), driven here with blocking recv(). The body goes to `body` when given, else
  // is counted and dropped. Returns the status code; `first_byte` is when the response began.
  Result<int> get(std::string_view target, std::string* body, std::size_t* body_bytes = nullptr,
                  Clock::time_point* first_byte = nullptr) {
    const std::string request = fmt::format("GET {} HTTP/1.1\r\nHost: {}\r\n\r\n", target, peer_);
    for (std::size_t sent = 0; sent < request.size();) {
      const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return fail(errno_message("send", peer_, n < 0 ? errno : EPIPE));
      sent += static_cast<std::size_t>(n);
    }
    http::DiscardSink discard;
    std::optional<http::StringSink> keep;
    if (body != nullptr) keep.emplace(*body);
    http::BodySink& sink = keep ? static_cast<http::BodySink&>(*keep) : discard;
    http::Timeline timeline;
    receiver_.start(sink, &timeline, &steady_ticks);
    for (;;) {
      auto window = receiver_.window();
      if (!window) return fail(fmt::format("GET {}: {}", target, window.error().message()));
      const ssize_t n = ::recv(fd_, window->bytes.data(), window->bytes.size(), 0);
      if (n < 0) return fail(errno_message("recv", peer_, errno));
      auto done = n == 0 ? receiver_.closed() : receiver_.received(static_cast<std::size_t>(n));
      if (!done) return fail(fmt::format("GET {} from {}: {}", target, peer_, done.error().message()));
      if (*done) break;
    }
    if (first_byte != nullptr) *first_byte = Clock::time_point(Clock::duration(timeline.first_byte));
    if (body_bytes != nullptr) *body_bytes = receiver_.body_bytes();
    return receiver_.status();
  }

 private:
  Connection(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}
  // Ticks of the probe's timeline: steady_clock's, so first_byte converts back to a time_point.
  static uint64_t steady_ticks() noexcept { return static_cast<uint64_t>(Clock::now().time_since_epoch().count()); }

  int fd_;
  std::string peer_;
  http::ResponseReceiver receiver_{http::ParserLimits{}, 64 * 1024};
};

constexpr double kWeatherRecordBytes = 77.2;  // average size of one /weather record
constexpr std::size_t kMaxProbeRecords = 400'000;  // ~31 MB, under the server's default answer limit

}  // namespace

Status measure_link(const std::string& host, uint16_t port, const link::LinkSpec& spec, LinkInfo& info,
                    std::chrono::milliseconds timeout) {
  auto connection = Connection::open(host, port, timeout);
  if (!connection) return std::unexpected(connection.error().wrap("link probe"));
  // RTT: as many ping-pongs as fit in about one second (20..200), after 3 that warm the path.
  const double configured_rtt_s = std::chrono::duration<double>(spec.configured_rtt()).count();
  const auto samples = static_cast<unsigned>(std::clamp(1.0 / std::max(configured_rtt_s, 1e-6), 20.0, 200.0));
  std::vector<double> rtts;
  std::string body;
  for (unsigned i = 0; i < samples + 3; ++i) {
    const auto start = Clock::now();
    auto status = connection->get("/health", &body);
    if (!status) return std::unexpected(status.error().wrap("link probe: GET /health"));
    if (i >= 3) rtts.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  info.configured_rtt_us = configured_rtt_s * 1e6;
  info.measured_rtt_us = median_of(rtts);
  info.measured_rtt_min_us = *std::min_element(rtts.begin(), rtts.end());
  info.rtt_samples = static_cast<unsigned>(rtts.size());

  // Rate: about 100 ms of the configured rate, 1 to 64 MiB; the best of two transfers (the first
  // also fills the server's body cache and grows the congestion window).
  const double rate_bytes = spec.rate_bits_per_second == 0 ? 16.0 * (1 << 20) : static_cast<double>(spec.rate_bits_per_second) / 8 * 0.1;
  const std::size_t records = std::min<std::size_t>(
      kMaxProbeRecords, static_cast<std::size_t>(std::clamp(rate_bytes, 1.0 * (1 << 20), 64.0 * (1 << 20)) / kWeatherRecordBytes));
  const std::string target = fmt::format("/weather?count={}", records);
  double best = 0;
  for (int round = 0; round < 2; ++round) {
    std::size_t bytes = 0;
    Clock::time_point first{};
    auto status = connection->get(target, nullptr, &bytes, &first);
    const auto last = Clock::now();
    if (!status) return std::unexpected(status.error().wrap("link probe: GET " + target));
    if (*status != 200) return fail(fmt::format("link probe: GET {} answered {}", target, *status));
    const double seconds = std::chrono::duration<double>(last - first).count();
    if (seconds > 0) best = std::max(best, static_cast<double>(bytes) * 8 / seconds / 1e6);
    info.rate_sample_bytes = static_cast<double>(bytes);
  }
  info.measured_rate_mbit = best;
  return {};
}

Result<std::map<std::string, std::string>> fetch_server_json(const std::string& host, uint16_t port,
                                                             const std::string& target,
                                                             std::chrono::milliseconds timeout) {
  auto connection = Connection::open(host, port, timeout);
  if (!connection) return std::unexpected(connection.error());
  std::string body;
  auto status = connection->get(target, &body);
  if (!status) return std::unexpected(status.error());
  if (*status != 200) return fail(fmt::format("GET {} answered {}", target, *status));
  const auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (!parsed.is_object()) return fail(fmt::format("GET {}: the body is not a JSON object", target));
  std::map<std::string, std::string> values;
  for (const auto& [key, value] : parsed.items()) {
    values[key] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  return values;
}

Result<std::map<std::string, std::string>> fetch_server_environment(const std::string& host, uint16_t port,
                                                                     std::chrono::milliseconds timeout) {
  return fetch_server_json(host, port, "/env", timeout);
}

}  // namespace ringlab::bench
