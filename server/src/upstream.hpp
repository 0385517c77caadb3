#pragma once
// Upstream: /proxy's fetches of /weather?count=N from the upstream, on the worker's own ring. Private
// to server/src.
//
// A fetch is a small state machine driven by completions (connect, send, receive), so the worker
// goes on serving its other connections while the upstream answers: nothing blocks its thread. The
// exchange itself is http::ResponseReceiver (the one the client and the socket peers drive), with
// the body received straight into the fetch's string; the request head comes from http::serialize.
// Each operation carries a linked timeout of --upstream-timeout: one that fires answers 504.
//
// Connections: UpstreamConnection::pooled takes an idle kept-alive connection when there is one (at
// most kIdleConnections are kept) and gives it back after a complete keep-alive answer; fresh opens
// one per fetch and closes it after. A fetch that fails on a reused connection before any byte of
// the answer (the upstream closed it while idle: http::failed_on_stale_connection) is sent once more
// on a new connection, counted in ServerStats::upstream_retries. Idle connections the upstream closed
// are dropped at the worker's tick (drop_closed_idle), counted in ServerStats::upstream_idle_dropped.
//
// Ownership and lifetimes: the Upstream owns every fetch, in flight or free (at most kFreeFetches
// free ones are kept), and every idle connection. The requester (a Connection) is called back once,
// unless it abandon()s the fetch first (it is closing): the fetch then cancels its operation and
// returns to the pool once the cancellation completes. The body lives in the fetch until the
// callback, which swaps it with a string of the requester's. The Upstream must outlive its fetches'
// operations: the worker does not finish while in_flight() > 0.
//
// Two ways in, as the typed-vs-manual article's two endpoints (/proxy?client=manual|typed): the
// handler calls start() itself, naming the route's count and the connection mode (manual, the
// ManualClient that configures its HttpClient by hand), or it calls a TypedUpstreamClient that the
// worker made once from this Upstream per connection mode (typed_client(): the factory, as
// IHttpClientFactory hands a TypedClient its configured HttpClient over the pooled handler). Both end
// in the same start(), the same pool of fetches and connections and the same callback: nothing is
// added to either, so a typed row measures the indirection alone.
//
// Errors: a failure is UpstreamFailure{502 or 504, text}; a non-200 answer is 502. Threads: the
// worker's thread only.
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ringlab/http/error.hpp"
#include "ringlab/http/response_receiver.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/http/url.hpp"
#include "ringlab/net/endpoint.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/net/socket.hpp"
#include "ringlab/server/routes.hpp"
#include "ringlab/server/server.hpp"

namespace ringlab::server {

struct UpstreamFailure {
  int status = 502;  // 502, or 504 when the upstream timed out
  std::string message;
};

// Told once when its fetch ends (unless it abandoned the fetch). `body` holds the answer's body on
// success; the requester may swap it with a string of its own.
class UpstreamRequester {
 public:
  virtual void on_upstream_done(std::expected<void, UpstreamFailure> result, std::string& body) = 0;

 protected:
  ~UpstreamRequester() = default;
};

class Upstream;

class UpstreamFetch final {
 public:
  explicit UpstreamFetch(Upstream& upstream);
  UpstreamFetch(const UpstreamFetch&) = delete;
  UpstreamFetch& operator=(const UpstreamFetch&) = delete;
  ~UpstreamFetch();

  // The requester is closing: no callback; the operation in flight is cancelled.
  void abandon() noexcept;

 private:
  friend class Upstream;
  enum class Phase : uint8_t { idle, connecting, sending, receiving };

  template <void (UpstreamFetch::*Method)(int)>
  class Op final : public net::CompletionHandler {
   public:
    explicit Op(UpstreamFetch& owner) noexcept : owner_(&owner) {}
    void on_completion(int res, uint32_t /*flags*/) override { (owner_->*Method)(res); }

   private:
    UpstreamFetch* owner_;
  };

  // Starts the GET on an idle connection (reuse) or a new one; a failure before any operation was
  // queued is returned, not called back.
  std::optional<UpstreamFailure> begin(bool reuse);
  void send();
  void receive();
  void on_connected(int res);
  void on_sent(int res);
  void on_received(int res);
  // Ends the fetch: the callback (unless abandoned), the connection kept or closed, back to the pool.
  void finish(std::expected<void, UpstreamFailure> result, bool keep_connection);
  // A failure of the exchange: retried once when the connection was stale, else finish()ed.
  void fail(const http::Error& error);

  Upstream& upstream_;
  Op<&UpstreamFetch::on_connected> connect_op_{*this};
  Op<&UpstreamFetch::on_sent> send_op_{*this};
  Op<&UpstreamFetch::on_received> recv_op_{*this};
  UpstreamRequester* requester_ = nullptr;
  Phase phase_ = Phase::idle;
  net::Fd fd_;
  bool reused_ = false;
  bool retried_ = false;
  bool abandoned_ = false;
  UpstreamConnection mode_ = UpstreamConnection::pooled;
  std::string head_;       // the request head being sent (kept capacity: no allocation per fetch)
  std::size_t head_sent_ = 0;
  std::string body_;       // the answer's body (StringSink)
  http::StringSink sink_{body_};
  http::ResponseReceiver receiver_;
};

class TypedUpstreamClient;

class Upstream {
 public:
  static constexpr std::size_t kIdleConnections = 8;
  static constexpr std::size_t kFreeFetches = 4;

  // `url`: the upstream's origin (empty: none, every fetch answers 502). `stats`: where retries and
  // connection counts go. All references must outlive the Upstream.
  Upstream(net::Ring& ring, const ServerOptions& options, std::optional<http::Url> url, ServerStats& stats);
  ~Upstream();
  Upstream(const Upstream&) = delete;
  Upstream& operator=(const Upstream&) = delete;

  // Starts fetching /weather?count=N for `requester`; the fetch in flight, or the failure at once.
  std::expected<UpstreamFetch*, UpstreamFailure> start(UpstreamRequester& requester, uint32_t count,
                                                       UpstreamConnection mode);
  // The typed client of `mode` (above), bound to this Upstream: it must not outlive it.
  [[nodiscard]] TypedUpstreamClient typed_client(UpstreamConnection mode) noexcept;
  // Fetches whose operations are still in flight (abandoned ones included).
  [[nodiscard]] std::size_t in_flight() const noexcept { return in_flight_; }
  // Closes the idle connections now (the worker is stopping).
  void close_idle() noexcept;
  // Closes the idle connections the upstream has closed (or sent unasked bytes on), as nginx does
  // with its upstream keepalive connections: their descriptors are not held until a reuse finds
  // them stale. One non-blocking MSG_PEEK recv each (at most kIdleConnections); the worker calls it
  // at its tick. A close that lands between two sweeps is still caught by the retry.
  void drop_closed_idle() noexcept;

 private:
  friend class UpstreamFetch;
  void recycle(UpstreamFetch& fetch) noexcept;

  net::Ring& ring_;
  const ServerOptions& options_;
  std::optional<http::Url> url_;
  std::optional<net::Endpoint> endpoint_;
  std::string host_header_;
  ServerStats& stats_;
  std::vector<net::Fd> idle_;
  std::vector<std::unique_ptr<UpstreamFetch>> free_;
  std::vector<std::unique_ptr<UpstreamFetch>> busy_;
  std::size_t in_flight_ = 0;
};

// /proxy?client=typed's way to the upstream: a client configured once (its Upstream, its connection
// mode), whose one method fetches the route's records and reports the outcome as start() does: the
// fetch in flight, whose result (200, or UpstreamFailure 502/504) comes to `requester`, or the failure
// at once. Cheap to copy; made by Upstream::typed_client.
class TypedUpstreamClient {
 public:
  std::expected<UpstreamFetch*, UpstreamFailure> fetch_weather(UpstreamRequester& requester, uint32_t count) {
    return upstream_->start(requester, count, mode_);
  }
  [[nodiscard]] UpstreamConnection mode() const noexcept { return mode_; }

 private:
  friend class Upstream;
  TypedUpstreamClient(Upstream& upstream, UpstreamConnection mode) noexcept : upstream_(&upstream), mode_(mode) {}

  Upstream* upstream_;
  UpstreamConnection mode_;
};

inline TypedUpstreamClient Upstream::typed_client(UpstreamConnection mode) noexcept { return {*this, mode}; }

}  // namespace ringlab::server
