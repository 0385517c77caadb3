#pragma once
// Strategy: one way of fetching and deserializing a response, and the registry bench knows them by.
//
// A strategy owns one whole request: it picks a connection (pooled or fresh), sends through the
// http::Client over a net::Ring (or, for peers, through libcurl, blocking sockets or epoll), decides
// where the body lands through its BodySink, deserializes with json/, and returns the checksum of
// every field it read. Strategies differ only in body sink, connection policy, send mode and
// deserialization, so that a difference in the table is a difference in those.
//
// Life of a strategy in a benchmark case:
//   make()                  untimed
//   skip_reason(features)   a kernel feature it needs is missing -> the case is shown as skipped
//   setup(config)           untimed: ring, client, buffers, first connection
//   run(timeline)           timed, many times; must not allocate unless the strategy is about allocating
//   io_counters()           read before and after the timed iterations
//   teardown()              untimed
//
// Errors: a Result whose Error says which step failed, for which case ("presized weather 1000:
// truncated 127.0.0.1:8080: peer closed after 512 of 77123 body bytes").
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ringlab/http/client.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::strategies {

enum class Payload { weather, repos };
enum class Method { get, post };

[[nodiscard]] std::string_view payload_name(Payload payload) noexcept;
[[nodiscard]] std::optional<Payload> parse_payload(std::string_view name) noexcept;

struct Error {
  std::string message;
};
template <class T>
using Result = std::expected<T, Error>;
using Status = Result<void>;

struct CaseConfig {
  std::string host = "127.0.0.1";  // the server under test
  uint16_t port = 0;
  Payload payload = Payload::weather;
  std::size_t count = 10;           // records per response (GET) or per posted body (POST)
  http::TickSource ticks = nullptr;  // for the phase timeline; null = no stamps
};

// io_uring work and other per-operation facts a strategy can report; summed over the timed run.
struct IoCounters {
  uint64_t ring_enters = 0;
  uint64_t sqes_submitted = 0;
  uint64_t cqes_reaped = 0;
  uint64_t connections_opened = 0;
  uint64_t zero_copy_sends = 0;
  uint64_t zero_copy_copied = 0;  // sends the kernel reported as copied anyway
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  [[nodiscard]] virtual std::optional<std::string> skip_reason(const net::RingFeatures& features) const {
    (void)features;
    return std::nullopt;
  }
  virtual Status setup(const CaseConfig& config) = 0;
  // One whole request; returns the checksum of every field deserialized. `timeline` may be null.
  virtual Result<uint64_t> run(http::Timeline* timeline) = 0;
  [[nodiscard]] virtual IoCounters io_counters() const { return {}; }
  // Extra facts shown under the table (e.g. "sockets left in TIME_WAIT: 1234").
  [[nodiscard]] virtual std::string notes() const { return {}; }
  virtual void teardown() {}
};

struct Descriptor {
  std::string_view name;         // "presized"
  std::string_view description;  // one line: where the bytes land, how often they are copied
  std::string_view mirrors;      // the .NET pattern of the seeds it corresponds to
  Method method = Method::get;
  bool baseline = false;         // the Ratio column's 1.00 for its method
  bool peer = false;             // not ringlab's io_uring stack (libcurl, blocking sockets, epoll)
  std::unique_ptr<Strategy> (*make)() = nullptr;
};

// Every registered strategy, in table order (baseline first within each method).
[[nodiscard]] std::span<const Descriptor> registry();
[[nodiscard]] const Descriptor* find(std::string_view name);

}  // namespace ringlab::strategies
