#include "inflight_connection.hpp"

#include <liburing.h>

#include <cerrno>
#include <string>

namespace ringlab::http::inflight {

// ---- ProvidedGate

void ProvidedGate::reset(net::BufferRing* ring_buffers, std::size_t connections, bool bundle_receives) {
  clear();
  buffers = ring_buffers;
  bundles = bundle_receives;
  queue_.assign(connections, nullptr);
}

void ProvidedGate::clear() noexcept {
  head_ = 0;
  count_ = 0;
  armed = 0;
  armed_bundles = 0;
  dry = 0;
}

void ProvidedGate::request(Connection& connection) {
  if (dry == 0 && count_ == 0) {
    connection.arm_provided();
    return;
  }
  // Each connection asks once per completion of its own and has none in flight while queued: the
  // queue, sized to the connections, never overflows.
  queue_[(head_ + count_) % queue_.size()] = &connection;
  ++count_;
  pump();
}

void ProvidedGate::pump() {
  while (count_ > 0) {
    Connection& front = *queue_[head_];
    // A connection that failed while it waited leaves the queue without a receive.
    if (front.outcome() == Connection::Outcome::pending && dry > 0 &&
        (armed >= buffers->count() || armed_bundles > 0)) {
      return;
    }
    head_ = (head_ + 1) % queue_.size();
    --count_;
    if (front.outcome() == Connection::Outcome::pending) front.arm_provided();
  }
}

// ---- Connection

Connection::Connection(Shared& shared, std::size_t index, std::size_t receive_buffer_bytes)
    : shared_(shared),
      index_(index),
      receiver_(shared.options->limits, receive_buffer_bytes),
      ring_(shared.gate.buffers) {}

void Connection::begin_phase() noexcept {
  outcome_ = Outcome::pending;
  error_.reset();
  settled_ = false;
  ++shared_.unsettled;
}

void Connection::begin_connect(const net::Endpoint& peer) {
  begin_phase();
  auto socket = net::tcp_socket_for(peer);
  if (!socket) {
    fail(Error::from(socket.error()));
    return;
  }
  socket_ = std::move(*socket);
  shared_.ring->prep_connect(socket_.get(), peer.addr(), peer.length, connect_done_);
  connecting_ = true;
  ++shared_.connecting;
}

void Connection::begin_exchange(BodySink& sink) {
  begin_phase();
  sent_ = 0;
  retiring_ = false;
  dry_ = false;
  status_ = 0;
  receiver_.start(sink, nullptr, nullptr);
  queue_send();
  // The answer cannot be there before the request has gone: wait for data before the first try.
  arm_receive(true);
}

void Connection::fail(Error error) {
  if (outcome_ == Outcome::failed) return;
  outcome_ = Outcome::failed;
  error.detail = "connection " + std::to_string(index_ + 1) + " of " + std::to_string(shared_.connections) + ": " +
                 error.detail;
  if (error.peer.empty()) error.peer = shared_.peer;
  error_ = std::move(error);
  leave_dry();
  if (held_count_ > 0) {
    receiver_.let_go();  // the sink's view of the held bytes goes with them
    release_held();
  }
  // The cancellations' own completions are ignored; the operations complete with -ECANCELED (or
  // normally, having won the race) and their handlers only take that in.
  if (connecting_) shared_.ring->prep_cancel(connect_done_, nullptr);
  if (sending_) shared_.ring->prep_cancel(send_done_, nullptr);
  if (receiving_) shared_.ring->prep_cancel(receive_done_, nullptr);
  check_settled();
}

void Connection::fail_net(const char* op, int code) { fail(Error::from(net::Error{op, code, {}})); }

void Connection::close_now() noexcept { socket_.reset(); }

void Connection::close_async() noexcept {
  if (socket_.valid()) shared_.ring->prep_close(socket_.release(), nullptr);
}

void Connection::check_settled() noexcept {
  if (settled_ || outcome_ == Outcome::pending || connecting_ || sending_ || receiving_) return;
  settled_ = true;
  --shared_.unsettled;
}

void Connection::leave_dry() noexcept {
  if (!dry_) return;
  dry_ = false;
  --shared_.gate.dry;
}

void Connection::on_connect(int res, uint32_t) {
  connecting_ = false;
  --shared_.connecting;
  if (outcome_ == Outcome::pending) {
    if (res < 0) {
      fail_net("connect", -res);
    } else {
      outcome_ = Outcome::complete;
    }
  }
  check_settled();
}

void Connection::queue_send() {
  const std::string_view rest = shared_.request.substr(sent_);
  shared_.ring->prep_send(socket_.get(), std::span<const char>(rest.data(), rest.size()), send_done_);
  sending_ = true;
  ++shared_.sending;
}

void Connection::on_send(int res, uint32_t) {
  sending_ = false;
  --shared_.sending;
  if (outcome_ == Outcome::complete && res <= 0) {
    // The whole response arrived while the request was still going out (a server that answers
    // before reading all of it): the round has its answer, the connection is done.
    retiring_ = true;
  } else if (outcome_ == Outcome::pending || outcome_ == Outcome::complete) {
    if (res < 0) {
      fail_net("send", -res);
    } else if (res == 0) {
      fail_net("send (sent nothing)", EPIPE);
    } else {
      sent_ += static_cast<std::size_t>(res);
      if (sent_ < shared_.request.size()) queue_send();  // a short send: the rest, at once
    }
  }
  check_settled();
}

void Connection::arm_receive(bool poll_first) {
  if (ring_ != nullptr) {
    poll_first_ = poll_first;
    if (own_ring_) {
      arm_provided();
    } else {
      shared_.gate.request(*this);
    }
    return;
  }
  auto window = receiver_.window();
  if (!window) {
    fail(std::move(window.error()));
    return;
  }
  window_bytes_ = window->bytes.size();
  window_fixed_ = window->fixed_buffer_index >= 0;
  if (window_fixed_) {
    shared_.ring->prep_read_fixed(socket_.get(), window->bytes, window->fixed_buffer_index, receive_done_);
  } else {
    // Ring::prep_recv has no POLL_FIRST: the SQE is filled here, as ring.hpp allows.
    io_uring_sqe* sqe = shared_.ring->sqe();
    io_uring_prep_recv(sqe, socket_.get(), window->bytes.data(), window->bytes.size(), 0);
    if (poll_first) sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
    net::Ring::set_handler(sqe, &receive_done_);
  }
  receiving_ = true;
  ++shared_.receiving;
}

void Connection::arm_provided() {
  bundle_armed_ = !own_ring_ && shared_.gate.bundle_now();
  shared_.ring->prep_recv_select(socket_.get(), *ring_, receive_done_, poll_first_, bundle_armed_);
  receiving_ = true;
  ++shared_.receiving;
  if (own_ring_) return;
  ++shared_.gate.armed;
  if (bundle_armed_) ++shared_.gate.armed_bundles;
}

void Connection::on_receive(int res, uint32_t flags) {
  receiving_ = false;
  --shared_.receiving;
  if (own_ring_) {
    received_provided(res, flags);
  } else if (ring_ != nullptr) {
    --shared_.gate.armed;
    if (bundle_armed_) --shared_.gate.armed_bundles;
    received_provided(res, flags);
    shared_.gate.pump();  // a receive fewer in flight, a buffer back: a waiting one may go
  } else {
    received_own(res);
  }
  check_settled();
}

void Connection::received_own(int res) {
  if (outcome_ != Outcome::pending) return;  // cancelled after a failure
  if (res < 0) {
    fail_net(window_fixed_ ? "read_fixed" : "recv", -res);
    return;
  }
  if (res == 0) {
    retiring_ = true;  // the peer closed: whatever the receiver says, the connection is done
    after(receiver_.closed(), true);
    return;
  }
  const auto received = static_cast<std::size_t>(res);
  after(receiver_.received(received), received < window_bytes_);
}

void Connection::received_provided(int res, uint32_t flags) {
  net::BufferRing& buffers = *ring_;
  const bool has_buffer = (flags & IORING_CQE_F_BUFFER) != 0;
  const uint16_t buffer_id = net::BufferRing::buffer_id(flags);
  if (outcome_ != Outcome::pending || res <= 0) {
    buffers.give_back(res, flags, bundle_armed_);  // what the completion consumed, unread
    if (outcome_ != Outcome::pending) return;  // cancelled after a failure
  }
  if (res == -ENOBUFS && own_ring_) {
    // Its own ring: only this connection's held buffers can be out of it, never more than half.
    fail_net("recv (the connection's own provided buffer ring ran dry)", ENOBUFS);
    return;
  }
  if (res == -ENOBUFS) {
    // The ring was empty; the bytes wait in the socket. The gate makes the next receive sure of a
    // buffer, so a second time with no byte between is not contention but a fault.
    if (dry_) {
      fail_net("recv (the provided buffer ring ran dry twice with no byte received between)", ENOBUFS);
      return;
    }
    dry_ = true;
    ++shared_.gate.dry;
    ++shared_.stats->provided_ring_dry;
    arm_receive(false);  // bytes are waiting: no poll first
    return;
  }
  leave_dry();
  if (res < 0) {
    fail_net("recv", -res);
    return;
  }
  if (res == 0) {
    retiring_ = true;
    after(receiver_.closed(), true);
    return;
  }
  if (!has_buffer) {
    fail_net("recv (completion without a provided buffer)", EPROTO);
    return;
  }
  const auto received = static_cast<std::size_t>(res);
  if (buffers.incremental()) {
    received_increment(buffers, buffer_id, received, flags);
    return;
  }
  // Each buffer goes back to the kernel as soon as the receiver is done with its bytes.
  Result<bool> done = false;
  const unsigned taken = buffers.take_pieces(buffer_id, received, [&](std::string_view piece) {
    done = receiver_.received_elsewhere(piece);
    return done.has_value();
  });
  if (taken > 1) ++shared_.stats->multi_buffer_receives;
  // A receive that did not fill its last buffer drained the socket.
  after(done, received % buffers.buffer_size() != 0);
}

void Connection::received_increment(net::BufferRing& buffers, uint16_t buffer_id, std::size_t received,
                                    uint32_t flags) {
  // The piece is the receiver's (and its sink's, in place) until received_elsewhere returns; the
  // buffer goes back to the kernel after that if the kernel is done with it. A connection alone on the
  // ring has its receives land one after the other (across the ring's end too, through its second view),
  // so its sink may keep a piece's last bytes where they lie for the next piece: the buffers they are in
  // are then held.
  const bool alone = own_ring_ || shared_.connections == 1;
  Result<bool> done = false;
  const bool taken = buffers.take_increment(buffer_id, received, flags, [&](std::span<char> piece) {
    std::span<char> seen = piece;
    if (alone) {
      const net::BufferRing::Seen after = buffers.view_after(piece, kept_end_);
      if (after.moved_by != 0) receiver_.kept_moved(after.moved_by);
      seen = after.piece;
    }
    done = receiver_.received_elsewhere(std::string_view(seen.data(), seen.size()),
                                        alone ? ResponseReceiver::Keep::in_place : ResponseReceiver::Keep::none);
    kept_end_ = seen.data() + seen.size();
    return alone && receiver_.kept_in_place() > 0;
  });
  if (!taken) {
    fail_net("recv (a completion past the end of its incremental buffer)", EPROTO);
    return;
  }
  if (alone) hold_kept(buffers, buffer_id);
  // The kernel stops a receive short of the buffer's end (and keeps the buffer) only when the socket had
  // no more: drained.
  after(done, (flags & net::BufferRing::kBufferMore) != 0);
}

void Connection::hold_kept(net::BufferRing& buffers, uint16_t buffer_id) {
  const std::size_t kept = receiver_.kept_in_place();
  if (kept == 0) {
    release_held();
    return;
  }
  if (held_count_ == 0 || held_[held_count_ - 1] != buffer_id) {
    if (held_count_ == kMostHeld) {
      receiver_.let_go();  // a cut record longer than the pieces of four buffers: copied after all
      buffers.release(buffer_id);
      release_held();
      return;
    }
    held_[held_count_++] = buffer_id;
  }
  // Earlier pieces' buffers the kept bytes no longer reach go back.
  std::size_t still = 0;
  for (std::size_t i = 0; i < held_count_; ++i) {
    if (buffers.overlaps(held_[i], kept_end_ - kept, kept)) {
      held_[still++] = held_[i];
    } else {
      buffers.release(held_[i]);
    }
  }
  held_count_ = still;
  if (2 * buffers.held_out_of_ring() > buffers.count()) {
    receiver_.let_go();  // the ring would keep less than half its buffers: copied instead
    release_held();
  }
}

void Connection::release_held() noexcept {
  for (std::size_t i = 0; i < held_count_; ++i) ring_->release(held_[i]);
  held_count_ = 0;
  kept_end_ = nullptr;
}

void Connection::after(const Result<bool>& done, bool drained) {
  if (!done) {
    fail(done.error());
    return;
  }
  if (!*done) {
    arm_receive(drained);  // a drained socket: wait for data first; a full window: more may be there
    return;
  }
  outcome_ = Outcome::complete;
  status_ = receiver_.status();
  if (!receiver_.keep_alive() || receiver_.close_delimited()) retiring_ = true;
}

}  // namespace ringlab::http::inflight
