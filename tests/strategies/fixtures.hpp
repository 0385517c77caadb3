#pragma once
// What the strategy tests share: the built `server` binary as a child process, a raw-socket server
// that answers every request with canned bytes (the bad responses), and running one strategy for a
// case. Processes are started and killed by PID (tests/e2e/support.hpp's Child); every wait is bounded.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ringlab/strategies/strategy.hpp"
#include "../support/feature_gate.hpp"
#include "../support/net_loopback_acceptor.hpp"
#include "support.hpp"

namespace ringlab::strategies::testing {

using namespace std::chrono_literals;

// A case of `count` records of `payload` with `inflight` requests in flight, against `port`.
inline CaseConfig case_at(uint16_t port, std::size_t count, std::size_t inflight = 1,
                          Payload payload = Payload::weather) {
  CaseConfig config;
  config.port = port;
  config.payload = payload;
  config.count = count;
  config.inflight = inflight;
  return config;
}

// The `server` binary, started with --port 0 and one thread; its port read from its
// "listening on HOST:PORT" line.
class ServerProcess {
 public:
  ServerProcess() : child_(e2e::Child::with_stdout_pipe({RINGLAB_SERVER_BINARY, "--port", "0", "--threads", "1"})) {
    const auto line = child_.read_line(10s);
    REQUIRE_MESSAGE(line.has_value(), "the server printed no line");
    const std::string_view text = *line;
    INFO("server said: " << text);
    REQUIRE(text.starts_with("listening on "));
    const auto colon = text.rfind(':');
    REQUIRE(colon != std::string_view::npos);
    port_ = static_cast<uint16_t>(std::stoul(std::string(text.substr(colon + 1))));
    REQUIRE(port_ != 0);
  }
  [[nodiscard]] uint16_t port() const noexcept { return port_; }

 private:
  e2e::Child child_;
  uint16_t port_ = 0;
};

// A loopback server on its own thread that reads each request (head, then Content-Length bytes of
// body) and answers it with `response`, then closes the connection (close_after) or waits for the
// next request. With `stall`, it answers nothing and holds the connection open: the client's
// deadline must end the request. Accept and reads poll in 20 ms steps, so the destructor stops it
// within that.
class CannedServer {
 public:
  explicit CannedServer(std::string response, bool close_after = true, bool stall = false)
      : response_(std::move(response)),
        close_after_(close_after),
        stall_(stall),
        acceptor_([this](int fd) { serve_connection(fd); }) {}
  CannedServer(const CannedServer&) = delete;
  CannedServer& operator=(const CannedServer&) = delete;

  [[nodiscard]] uint16_t port() const noexcept { return acceptor_.port(); }
  [[nodiscard]] unsigned requests() const noexcept { return requests_.load(); }

 private:
  // Reads one request; false when the client closed or the server is stopping.
  bool read_request(int fd, std::string& pending) {
    while (true) {
      const auto end = pending.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::size_t body = 0;
        const std::string head = pending.substr(0, end);
        for (const char* name : {"Content-Length: ", "content-length: "}) {
          if (auto at = head.find(name); at != std::string::npos) body = std::stoul(head.substr(at + 16));
        }
        if (pending.size() >= end + 4 + body) {
          pending.erase(0, end + 4 + body);
          return true;
        }
      }
      if (!acceptor_.wait_readable(fd)) return false;
      char buffer[65536];
      const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) return false;
      pending.append(buffer, static_cast<std::size_t>(n));
    }
  }

  void serve_connection(int fd) {
    std::string pending;
    while (read_request(fd, pending)) {
      ++requests_;
      if (stall_) {
        while (acceptor_.wait_readable(fd)) {
          char sink[4096];
          if (::recv(fd, sink, sizeof(sink), 0) <= 0) break;
        }
        break;
      }
      std::string_view rest = response_;
      while (!rest.empty()) {
        const ssize_t n = ::send(fd, rest.data(), rest.size(), MSG_NOSIGNAL);
        if (n <= 0) break;
        rest.remove_prefix(static_cast<std::size_t>(n));
      }
      if (close_after_) break;
    }
    ::close(fd);
  }

  std::string response_;
  bool close_after_;
  bool stall_;
  std::atomic<unsigned> requests_{0};
  ringlab::testing::LoopbackAcceptor acceptor_;  // last: its thread starts once the rest exists
};

// One strategy for one case: setup, then `runs` verified run()s (Check::verify: the full checksum, which
// the strategy compares with the generator's). The checksums of every run, or the first error (from
// setup or run), with teardown always called.
struct Outcome {
  std::optional<std::string> skipped;
  std::optional<std::string> error;
  std::vector<uint64_t> checksums;
  IoCounters counters_after_setup;
  IoCounters counters;
  std::string notes;
};

// Why the kernel here cannot run `strategy`, in the strategy's words; nullopt when it can. The
// features are a fresh ring's, less those RINGLAB_TEST_WITHOUT forces off (support/feature_gate.hpp),
// so that the skipped path shows on a machine that has them all.
inline std::optional<std::string> kernel_skip_reason(const Strategy& strategy) {
  auto ring = net::Ring::create();
  REQUIRE(ring);
  net::RingFeatures features = (*ring)->features();
  if (auto reason = strategy.skip_reason(features)) return reason;
  using Flag = bool net::RingFeatures::*;
  const std::pair<std::string_view, Flag> named[] = {
      {"send_zc", &net::RingFeatures::send_zc},
      {"send_zc_report_usage", &net::RingFeatures::send_zc_report_usage},
      {"recv_multishot", &net::RingFeatures::recv_multishot},
      {"accept_multishot", &net::RingFeatures::accept_multishot},
      {"provided_buffer_ring", &net::RingFeatures::provided_buffer_ring},
      {"fixed_buffers", &net::RingFeatures::fixed_buffers},
  };
  for (const auto& [name, flag] : named) {
    if (ringlab::testing::forced_off(name)) features.*flag = false;
  }
  if (auto reason = strategy.skip_reason(features)) return *reason + " (forced off by RINGLAB_TEST_WITHOUT)";
  return std::nullopt;
}

// Which strategies a case covers. A strategy that names a reason to skip on a ring without any
// feature needs one: the feature-gated cases cover those, so that where the kernel lacks it ctest
// shows a skip instead of a pass; the plain cases cover the rest, which must run everywhere.
enum class Needs { nothing_of_the_kernel, a_kernel_feature };

inline bool needs_kernel_feature(const Descriptor& descriptor) {
  return descriptor.make()->skip_reason(net::RingFeatures{}).has_value();
}

// The registered strategies of `group`. Of those that need a kernel feature, one the kernel here
// lacks is left out and recorded as skipped, with its reason: call it once per test case.
inline std::vector<const Descriptor*> strategies(Needs group) {
  std::vector<const Descriptor*> out;
  for (const Descriptor& descriptor : registry()) {
    const bool needs = needs_kernel_feature(descriptor);
    if (needs != (group == Needs::a_kernel_feature)) continue;
    if (needs) {
      const auto reason = kernel_skip_reason(*descriptor.make());
      const std::string strategy = "strategy " + std::string(descriptor.name);
      if (!ringlab::testing::feature_available(strategy, !reason, reason.value_or(""))) continue;
    }
    out.push_back(&descriptor);
  }
  return out;
}

inline Outcome run_strategy(const Descriptor& descriptor, const CaseConfig& config, unsigned runs) {
  Outcome outcome;
  auto strategy = descriptor.make();
  REQUIRE(strategy != nullptr);
  if (auto reason = kernel_skip_reason(*strategy)) {
    outcome.skipped = *reason;
    return outcome;
  }
  if (auto reason = strategy->skip_case(config)) {
    outcome.skipped = *reason;
    return outcome;
  }
  if (auto status = strategy->setup(config); !status) {
    outcome.error = status.error().message;
    strategy->teardown();
    return outcome;
  }
  outcome.counters_after_setup = strategy->io_counters();
  for (unsigned i = 0; i < runs; ++i) {
    auto ran = strategy->run(nullptr, Check::verify);
    if (!ran) {
      outcome.error = ran.error().message;
      break;
    }
    outcome.checksums.push_back(ran->checksum);
  }
  outcome.counters = strategy->io_counters();
  outcome.notes = strategy->notes();
  strategy->teardown();
  return outcome;
}

}  // namespace ringlab::strategies::testing
