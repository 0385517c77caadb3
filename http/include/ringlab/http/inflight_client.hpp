#pragma once
// InflightClient: N kept-alive connections to one origin on one net::Ring, each with one GET in
// flight at a time, all of them at once: the client side of a concurrency axis. http::Client
// measures one request in flight; this measures N, driven from one thread without blocking on any.
//
// Use:
//   InflightClient client(ring, options);
//   client.connect(url, 64);                      // 64 connects queued together
//   client.round("/weather?count=10", sinks);     // one GET on each, every response whole
//
// connect(url, n) closes whatever connections the client had and opens n new ones: the n connects
// are queued together and go to the kernel in as few io_uring_enter calls as the ring's submission
// queue allows; options.connect_timeout bounds them all together. If any fails, every connection is
// closed and the error is returned (connections() is 0 then).
//
// round(target, sinks) sends "GET target" on every connection, connection k of n (1-based, as
// errors count) to sinks[k-1]: every send and every connection's first receive are queued, then
// submitted together; each connection receives its response completely into its sink, and round()
// returns when all n are complete. options.io_timeout bounds the whole round (not each operation).
// The request is serialized once per target: a round with the target of the round before reuses
// the bytes, so a round in steady state allocates nothing. Every wait asks the kernel for the
// completions of every send still in flight plus one receive, so that sends completing during
// submission do not end a wait at once, and a connection whose receive completed is re-armed as soon
// as its completion is reaped, not after the others'.
//
// Receiving: each connection has its own http::ResponseReceiver (response_receiver.hpp: the one
// framing, 1xx and parse rule; nothing of it is repeated here). Two modes, as ClientOptions:
//   own_buffer        each receive lands in the receiver's window: its own buffer (receive_buffer_bytes,
//                     one per connection) until the head is parsed, then the sink's window when it
//                     offers one (a PresizedSink receives its body in place). A receive that did not
//                     fill its window is re-armed with IORING_RECVSEND_POLL_FIRST (the socket is
//                     drained: wait before trying).
//                     Registered buffers: a window that lies in one (ReceiveWindow::fixed_buffer_index,
//                     a PresizedSink made with that index) is received into by READ_FIXED with that
//                     index, as http::Client does; the client registers nothing. For N connections the
//                     caller registers N buffers with the ring (net::FixedBuffers, one registration)
//                     and gives connection k a sink over buffer k-1; a body larger than its buffer is
//                     the sink's Errc::body_too_large for that connection, and an index the ring does
//                     not have fails the receive ("read_fixed: ...") of that connection.
//   provided_buffers  ONE net::BufferRing (provided_buffer_count buffers of provided_buffer_bytes)
//                     shared by all the connections; each receive is a single-shot recv with buffer
//                     select (Ring::prep_recv_select), so a receive in flight holds at most one
//                     buffer; the bytes go to received_elsewhere() and the buffer back to the ring
//                     right after. The receivers then keep no buffer of their own.
//                     A receive that finds the ring empty completes with ENOBUFS (the bytes stay in
//                     the socket): counted in InflightStats::provided_ring_dry and re-armed. From
//                     then until that connection receives a byte, receives are armed only while
//                     fewer are in flight than the ring has buffers (the others wait in arrival
//                     order), so the re-armed one is sure of a buffer; a second ENOBUFS on it with
//                     no byte in between is therefore an error (Errc::io), not a race. With a ring
//                     smaller than the connections, a waiting connection waits for the others'
//                     receives, and the round's deadline covers that wait too.
//   provided_bundles  As provided_buffers, each receive a bundle (IORING_RECVSEND_BUNDLE, Linux 6.10):
//                     one completion carries as many of the ring's buffers as the socket's queued
//                     bytes fill (net::BufferRing::take_pieces walks them), each recycled once the
//                     receiver has its bytes. While a connection is dry, receives are single-buffer
//                     and wait for every bundle in flight to complete, so the rule above still holds.
//                     Errc::unsupported from connect() on a kernel without bundles.
//   provided_incremental  As provided_buffers on a ring registered with IOU_PBUF_RING_INC (Linux 6.12):
//                     the kernel fills a buffer piece by piece, each receive (of any connection) landing
//                     after the last one's bytes, and keeps it until a receive fills it; so the pieces of
//                     one body lie apart, between other connections' pieces. Each piece goes to
//                     received_elsewhere() where it landed, the sink getting it in place (client.hpp's
//                     ReceiveMode says what it may do with it: writable, readable past its end), and a
//                     buffer goes back to the ring once the kernel is done with it and its last piece
//                     has been handed over (net::BufferRing::take_increment). A receive the kernel
//                     stopped short of its buffer's end drained the socket. With one connection the
//                     ring is that connection's alone and its pieces lie one after the other (across
//                     the ring's end through the ring's second view, BufferRing::view_after): the sink
//                     may keep a piece's last bytes in place for the next piece (BodySink::kept_in_place),
//                     and the connection holds the buffers they lie in, at most 4 and never more than
//                     half the ring's out of it (else the sink lets go: copies them). With more, every
//                     piece is the sink's only during received_elsewhere(), unless each connection has a
//                     ring of its own (InflightOptions::ring_per_connection: made by connect(), each
//                     connection then alone on its ring, never waiting at the gate; an ENOBUFS on it is
//                     an error). Errc::unsupported from connect() on a kernel without incremental rings.
//
// Connections: a response that ends with "Connection: close", a close-delimited body or the peer
// closing retires its connection (counted in connections_closed; the close is queued on the ring and
// goes to the kernel with its next submission, so it costs the round no system call); the next
// round opens it again before its sends (bounded by connect_timeout) and counts it
// (connections_reopened, RoundInfo::reopened). A round in which a reopen fails sends nothing.
//
// Errors (http::Error; Errc as client.hpp): the detail names the connection and what happened
// ("connection 3 of 64: recv: Connection reset by peer (ECONNRESET)"), the peer is the origin
// ("127.0.0.1:8080"). When a connection fails, the others of the round still finish (or reach the
// deadline); then the round fails with the error of the lowest-numbered failed connection (the
// detail says how many failed), and every failed connection is closed. Nothing is retried. A
// connection closed by an error stays closed: later rounds fail at once (Errc::io) until connect()
// opens the connections again. The deadline fails every connection not yet complete with
// Errc::timeout. Calling round() before connect() or with a sink count other than connections() is
// Errc::io.
//
// Stats: InflightStats counts what the client did; its `ring` member counts the io_uring_enter
// calls, SQEs and CQEs of the ring during the client's own calls (RingStats differences), and
// RoundInfo::ring those of one round. receive_memory_bytes() is what the client holds for receiving
// (the receivers' own buffers plus the provided ring), for a bench to report memory per connection;
// not counted: what a parser keeps of a head split across receives (grown only when a head needs it).
//
// Ownership and lifetimes: the client refers to a net::Ring that must outlive it (and be used by no
// other thread); it owns its connections, their receivers and the provided BufferRing. Sinks belong
// to the caller and must outlive the round they are given to; the Url given to connect() may die
// when connect() returns (what is needed of it is copied).
//
// Threads: one thread, the ring's. No operation of the client is in flight between its calls: every
// call returns after the completions of what it started (operations it cancels included, waited for
// a bounded time).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/http/body_sink.hpp"
#include "ringlab/http/client.hpp"
#include "ringlab/http/error.hpp"
#include "ringlab/http/parser.hpp"
#include "ringlab/http/url.hpp"
#include "ringlab/net/endpoint.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::net {
class BufferRing;
}

namespace ringlab::http {

namespace inflight {
class Connection;
struct Shared;
}  // namespace inflight

struct InflightOptions {
  net::Duration connect_timeout = 2s;  // all the connects of connect(), or of a round's reopens, together
  net::Duration io_timeout = 10s;      // a whole round: every send and every response
  ParserLimits limits{.max_header_bytes = 16 * 1024, .max_body_bytes = 1ull << 30};
  ReceiveMode receive = ReceiveMode::own_buffer;
  std::size_t receive_buffer_bytes = 64 * 1024;  // own_buffer: each connection's receive buffer
  unsigned provided_buffer_count = 64;           // provided_*: the shared ring's size (power of two)
  unsigned provided_buffer_bytes = 64 * 1024;    // provided_*: bytes of each buffer
  // provided_incremental: a ring of provided_buffer_count x provided_buffer_bytes for each connection,
  // its own, instead of one shared by all (see provided_incremental above).
  bool ring_per_connection = false;
  std::size_t max_connections = 1024;            // connect() refuses more
};

struct RoundInfo {
  std::size_t responses = 0;  // complete responses: every connection's
  uint64_t body_bytes = 0;    // their bodies together
  std::size_t reopened = 0;   // retired connections opened again before this round's sends
  std::size_t retired = 0;    // connections this round's responses retired (the next round reopens them)
  net::RingStats ring{};      // this round's io_uring_enter calls, SQEs and CQEs (reopens included)
};

struct InflightStats {
  uint64_t rounds = 0;                // rounds that completed
  uint64_t failed_rounds = 0;
  uint64_t connections_opened = 0;    // by connect() and by rounds reopening retired connections
  uint64_t connections_reopened = 0;  // of those, by rounds
  uint64_t connections_closed = 0;    // retired, failed, or closed by connect()/close()
  uint64_t provided_ring_dry = 0;     // provided_buffers: receives that found the shared ring empty
  uint64_t multi_buffer_receives = 0;  // provided_bundles: completions that carried more than one buffer
  net::RingStats ring{};              // the ring's work during this client's calls
};

class InflightClient {
 public:
  InflightClient(net::Ring& ring, InflightOptions options = {});
  ~InflightClient();
  InflightClient(const InflightClient&) = delete;
  InflightClient& operator=(const InflightClient&) = delete;

  // Opens `connections` connections to url's origin (its target is not used). Errc::io for 0 or more
  // than options.max_connections, or an option that cannot work (a zero buffer, a ring size that is
  // not a power of two); Errc::unsupported for a host name or, in provided_buffers mode, a kernel
  // without buffer rings; otherwise the first failed connect's error.
  Status connect(const Url& url, std::size_t connections);
  // One GET `target` on every connection, each response into its sink (sinks.size() ==
  // connections(); connection k to sinks[k-1]).
  Result<RoundInfo> round(std::string_view target, std::span<BodySink* const> sinks);
  // Closes every connection (connections() is 0 after).
  void close() noexcept;

  [[nodiscard]] std::size_t connections() const noexcept;
  // Connections open now: connections() less those retired or closed by an error.
  [[nodiscard]] std::size_t open_connections() const noexcept;
  // Status of connection `index`'s (0-based) last complete response; 0 when it has none.
  [[nodiscard]] int status(std::size_t index) const noexcept;
  [[nodiscard]] std::size_t receive_memory_bytes() const noexcept;
  [[nodiscard]] const InflightStats& stats() const noexcept { return stats_; }
  [[nodiscard]] const InflightOptions& options() const noexcept { return options_; }

 private:
  using Clock = std::chrono::steady_clock;
  Status check_options();
  Status prepare_request(std::string_view target);
  // Runs the ring until every connection taking part has settled; once `limit` has passed every
  // one still busy fails with Errc::timeout, "`late` (limit)". Then waits, bounded, for what the
  // failures cancelled.
  void drive(net::Duration limit, const char* late);
  // The error of the lowest-numbered failed connection, with how many failed; nullopt when none.
  [[nodiscard]] std::optional<Error> first_failure() const;
  Status reopen_retired(RoundInfo& info);
  void account(const net::RingStats& before, net::RingStats* round) noexcept;

  net::Ring* ring_;
  InflightOptions options_;
  InflightStats stats_;
  std::unique_ptr<net::BufferRing> provided_;  // provided_buffers: made at the first connect()
  std::vector<std::unique_ptr<net::BufferRing>> own_rings_;  // ring_per_connection: connection k's at k-1
  std::unique_ptr<inflight::Shared> shared_;
  net::Endpoint endpoint_;
  std::string host_header_;  // "127.0.0.1:8080", "[::1]:80": the Host header and every error's peer
  std::unique_ptr<char[]> head_buffer_;  // the serialized request
  std::string request_target_;           // the target head_buffer_ holds a request for
  std::string_view request_;             // the request's bytes, in head_buffer_; empty: none yet
  // Declared last: destroyed first, before the buffer ring their receives may hold buffers of.
  std::vector<std::unique_ptr<inflight::Connection>> connections_;
};

}  // namespace ringlab::http
