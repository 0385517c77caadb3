#pragma once
// Private to http/: one connection of an InflightClient (inflight_client.hpp), and what the
// connections of one client share while a call runs.
//
// A Connection takes part in one phase at a time, a connect or an exchange (the round's send and
// response). The phase begins with begin_connect() or begin_exchange(), which queue its operations;
// their completions arrive through the Ring, each to one of the connection's handlers, which
// queue what comes next (the rest of a short send, the next receive) from inside the dispatch.
// The phase has settled once it is complete or failed and none of its operations is in flight;
// Shared::unsettled counts the connections whose phase has not, and the client's drive loop runs the
// ring until it is 0. A failure cancels what the connection has in flight (the handlers then only
// take the completions in); the client closes the socket once it has settled.
//
// Handlers are members: a Connection never moves (the client holds it by unique_ptr) and outlives
// its operations. Threads: the ring's.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/http/error.hpp"
#include "ringlab/http/inflight_client.hpp"
#include "ringlab/http/response_receiver.hpp"
#include "ringlab/net/buffer_ring.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/net/socket.hpp"

namespace ringlab::http::inflight {

class Connection;

// provided_buffers and provided_bundles: who may arm a receive on the shared ring (inflight_client.hpp
// says why). While no connection is dry (an ENOBUFS seen, no byte since), every receive is armed at
// once (a bundle where the client receives bundles); while one is, receives are armed in arrival
// order, single-buffer, and only while fewer than the ring's buffers are in flight and no bundle is.
// Each receive in flight then holds at most one buffer and every buffer is recycled as soon as its
// completion is handled, so a receive armed then finds a buffer.
class ProvidedGate {
 public:
  // For a client of `connections` connections on `buffers` (null in own_buffer mode); `bundles`: the
  // client receives bundles.
  void reset(net::BufferRing* buffers, std::size_t connections, bool bundles = false);
  // Forgets the queue and the counts (between phases, when nothing is armed).
  void clear() noexcept;
  // `connection` wants a receive: armed now, or queued.
  void request(Connection& connection);
  // Arms queued receives as far as the rule allows; called after every provided completion.
  void pump();

  // The next receive is to be a bundle: the client receives bundles and no connection is dry.
  [[nodiscard]] bool bundle_now() const noexcept { return bundles && dry == 0; }

  net::BufferRing* buffers = nullptr;
  bool bundles = false;        // the client receives bundles
  unsigned armed = 0;          // receives in flight on the ring
  unsigned armed_bundles = 0;  // of those, bundles
  unsigned dry = 0;            // connections that saw ENOBUFS and no byte since

 private:
  std::vector<Connection*> queue_;  // a ring of capacity connections: each is in it at most once
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

// What the connections of one client share.
struct Shared {
  net::Ring* ring = nullptr;
  const InflightOptions* options = nullptr;
  InflightStats* stats = nullptr;
  std::string peer;             // the origin, every error's peer
  std::size_t connections = 0;  // n, for "connection k of n"
  std::string_view request;     // the round's serialized GET
  // Operations in flight, which the drive loop asks the kernel to complete.
  unsigned connecting = 0;
  unsigned sending = 0;
  unsigned receiving = 0;
  std::size_t unsettled = 0;    // connections in a phase that has not settled
  ProvidedGate gate;
};

class Connection {
 public:
  enum class Link { open, retired, broken };  // retired: reopened by the next round; broken: by connect()
  enum class Outcome { pending, complete, failed };

  Connection(Shared& shared, std::size_t index, std::size_t receive_buffer_bytes);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Opens a socket for `peer` and queues its connect. `peer` must outlive the phase.
  void begin_connect(const net::Endpoint& peer);
  // Queues the round's request and the first receive of its response, into `sink`.
  void begin_exchange(BodySink& sink);
  // Records the phase's failure (the first one stays) and cancels what is in flight.
  void fail(Error error);
  // Closes the socket now, or through the ring (the close goes with its next submission).
  void close_now() noexcept;
  void close_async() noexcept;

  [[nodiscard]] bool settled() const noexcept { return settled_; }
  [[nodiscard]] Outcome outcome() const noexcept { return outcome_; }
  [[nodiscard]] const std::optional<Error>& error() const noexcept { return error_; }
  [[nodiscard]] Link link() const noexcept { return link_; }
  void set_link(Link link) noexcept { link_ = link; }
  // The exchange's response ended the connection (Connection: close, close-delimited, peer closed).
  [[nodiscard]] bool retiring() const noexcept { return retiring_; }
  [[nodiscard]] int status() const noexcept { return status_; }
  [[nodiscard]] uint64_t body_bytes() const noexcept { return receiver_.body_bytes(); }
  [[nodiscard]] std::size_t receive_buffer_bytes() const noexcept { return receiver_.buffer_bytes(); }

  // The gate's: arms a receive on the shared ring (or on the connection's own).
  void arm_provided();
  // Receives from `ring`, the connection's own (InflightOptions::ring_per_connection), instead of the
  // shared one; it must outlive the connection's receives.
  void receive_from(net::BufferRing& ring) noexcept {
    ring_ = &ring;
    own_ring_ = true;
  }

 private:
  void begin_phase() noexcept;
  void on_connect(int res, uint32_t flags);
  void on_send(int res, uint32_t flags);
  void on_receive(int res, uint32_t flags);
  // One completion of a receive, to the receiver: the bytes are in the window it offered (own_buffer)
  // or in a buffer of the shared ring (provided_buffers, recycled right after).
  void received_own(int res);
  void received_provided(int res, uint32_t flags);
  // provided_incremental: one completion's piece, where it landed in the shared incremental ring.
  void received_increment(net::BufferRing& buffers, uint16_t buffer_id, std::size_t received, uint32_t flags);
  // provided_incremental, the ring's only user: holds the buffers the bytes the sink keeps in place lie in
  // (`buffer_id` the last piece's), gives back the others, and makes the sink let go instead when that
  // would hold more than kMostHeld buffers or leave the ring less than half its buffers.
  void hold_kept(net::BufferRing& buffers, uint16_t buffer_id);
  // Gives back every buffer this connection holds.
  void release_held() noexcept;
  // After the receiver took bytes (or the end of the stream): complete, failed, or the next receive.
  void after(const Result<bool>& done, bool drained);
  void queue_send();
  void arm_receive(bool poll_first);
  void fail_net(const char* op, int code);
  void leave_dry() noexcept;
  void check_settled() noexcept;

  Shared& shared_;
  std::size_t index_;
  net::Fd socket_;
  ResponseReceiver receiver_;
  Link link_ = Link::broken;
  Outcome outcome_ = Outcome::complete;
  bool settled_ = true;
  std::optional<Error> error_;
  bool connecting_ = false;
  bool sending_ = false;
  bool receiving_ = false;
  std::size_t sent_ = 0;             // bytes of the request sent
  std::size_t window_bytes_ = 0;     // own_buffer: size of the window the receive in flight fills
  bool window_fixed_ = false;        // own_buffer: that receive is a read_fixed
  bool poll_first_ = false;          // provided_buffers: how the queued receive is to be armed
  bool bundle_armed_ = false;        // provided_bundles: the receive in flight is a bundle
  bool dry_ = false;                 // provided_buffers: ENOBUFS seen, no byte since
  bool retiring_ = false;
  int status_ = 0;
  net::BufferRing* ring_ = nullptr;  // provided_*: the ring receives select from (the gate's, or its own)
  bool own_ring_ = false;            // ring_ is this connection's alone: no gate
  // provided_incremental, the ring's only user: the sink's bytes kept in place end at kept_end_ (the last
  // piece's end, as the sink saw it) and lie in the buffers held_[0, held_count_).
  static constexpr std::size_t kMostHeld = 4;
  const char* kept_end_ = nullptr;
  std::array<uint16_t, kMostHeld> held_{};
  std::size_t held_count_ = 0;

  net::MemberCompletion<Connection, &Connection::on_connect> connect_done_{*this};
  net::MemberCompletion<Connection, &Connection::on_send> send_done_{*this};
  net::MemberCompletion<Connection, &Connection::on_receive> receive_done_{*this};
};

}  // namespace ringlab::http::inflight
