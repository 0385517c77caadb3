// One connection of the load generator: connect, send the request when due, frame the answer with
// http/'s response receiver, count what went wrong and reconnect.
#include <liburing.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <span>
#include <string_view>

#include "load_threads.hpp"
#include "ringlab/net/socket.hpp"

namespace ringlab::bench::load_generator {

void LoadConnection::connect() {
  auto socket = net::tcp_socket_for(thread_.plan().peer);
  if (!socket) {
    if (thread_.plan().start == 0) thread_.note_setup_error(socket.error().message());
    thread_.count(&LoadErrors::connect);
    return;
  }
  fd_ = socket->release();
  connecting_ = true;
  const net::Endpoint& peer = thread_.plan().peer;
  thread_.ring().prep_connect(fd_, peer.addr(), peer.length, connect_op_);
  thread_.ring().link_timeout(thread_.plan().spec->timeout);
}

void LoadConnection::on_connected(int res, uint32_t) {
  connecting_ = false;
  if (res < 0) {
    // Before the run, a connect that fails is the run's error; during it, a count.
    if (thread_.plan().start == 0) {
      thread_.note_setup_error(net::Error{"connect", -res, thread_.plan().peer.to_string()}.message());
    }
    thread_.count(&LoadErrors::connect);
    close_fd();
    return;  // stays closed
  }
  connected_ = true;
  arm_recv();
  // A reconnect during the run resumes this connection's requests: first the one that came due
  // while it was down (its latency includes the reconnect), then the schedule.
  if (thread_.plan().start == 0 || thread_.stopping()) return;
  if (due_pending_) {
    due_pending_ = false;
    send_due(pending_due_, now_ns());
  } else {
    schedule_next(now_ns());
  }
}

void LoadConnection::arm_recv() {
  recv_armed_ = true;
  thread_.ring().prep_recv_multishot(fd_, thread_.buffers(), recv_op_);
}

void LoadConnection::begin(Nanos now) {
  if (!connected_) return;
  schedule_next(now);
}

void LoadConnection::schedule_next(Nanos now) {
  if (stopped_ || in_flight_ || !connected_ || closing_ || waiting_ || due_pending_) return;
  if (!thread_.open_loop()) {
    if (now < thread_.plan().window_end) {
      started_ = now;
      send_request(now);
    }
    return;
  }
  const Plan& plan = thread_.plan();
  const uint64_t number = index_ + sequence_ * plan.spec->connections;
  const Nanos due = thread_.due_of(number);
  if (due >= plan.window_end) return;
  ++sequence_;
  if (due <= now) {
    send_due(due, now);
  } else {
    waiting_ = true;
    thread_.wait_for(due, *this);
  }
}

void LoadConnection::send_due(Nanos due, Nanos now) {
  waiting_ = false;
  if (stopped_ || in_flight_) return;
  if (!connected_ || closing_) {
    // Being reopened: the request goes out once connected (a connection that cannot be reopened
    // has counted its connect error).
    due_pending_ = true;
    pending_due_ = due;
    return;
  }
  started_ = due;
  send_request(now);
}

void LoadConnection::send_request(Nanos now) {
  in_flight_ = true;
  sent_at_ = now;
  thread_.note_in_flight(1);
  receiver_.start(body_, nullptr, nullptr);
  sent_ = 0;
  submit_send();
}

void LoadConnection::submit_send() {
  const std::string& request = thread_.plan().request;
  send_in_flight_ = true;
  thread_.ring().prep_send(fd_, std::span<const char>(request).subspan(sent_), send_op_);
  thread_.note_send_queued();
}

void LoadConnection::on_sent(int res, uint32_t) {
  send_in_flight_ = false;
  if (closing_) {
    close_when_quiet();
    return;
  }
  if (stopped_) return;
  if (res < 0) {
    fail(&LoadErrors::send);
    return;
  }
  sent_ += static_cast<std::size_t>(res);
  if (sent_ < thread_.plan().request.size()) submit_send();
}

void LoadConnection::on_recv(int res, uint32_t flags) {
  const bool more = (flags & IORING_CQE_F_MORE) != 0;
  if (!more) recv_armed_ = false;
  if (res > 0 && (flags & IORING_CQE_F_BUFFER) != 0) {
    const uint16_t bid = net::BufferRing::buffer_id(flags);
    const std::span<char> buffer = thread_.buffers().buffer(bid);
    // The receiver copies out an incomplete head before the buffer goes back to the ring.
    if (!closing_ && !stopped_) consume(std::string_view(buffer.data(), static_cast<std::size_t>(res)), now_ns());
    thread_.buffers().recycle(bid);
  } else if (res == 0) {
    if (!closing_ && !stopped_) {
      // The server closed: an error when a request was waiting for its answer.
      fail(in_flight_ ? &LoadErrors::closed : nullptr);
    }
  } else if (res == -ENOBUFS) {
    thread_.count_shortage();
  } else if (res < 0 && !closing_ && !stopped_) {
    fail(&LoadErrors::receive);
  }
  if (recv_armed_) return;
  if (closing_) {
    close_when_quiet();
    return;
  }
  if (!stopped_ && connected_) arm_recv();
}

void LoadConnection::consume(std::string_view bytes, Nanos now) {
  // Requests are not pipelined: bytes with no request waiting, or after the answer, are malformed.
  if (!in_flight_) {
    fail(&LoadErrors::malformed);
    return;
  }
  auto done = receiver_.received_elsewhere(bytes);
  if (!done) {
    fail(&LoadErrors::malformed);
    return;
  }
  if (*done) response_done(now);
}

void LoadConnection::response_done(Nanos now) {
  in_flight_ = false;
  thread_.note_in_flight(-1);
  thread_.record(started_, now, receiver_.body_bytes(), receiver_.status() >= 200 && receiver_.status() < 300);
  if (!receiver_.keep_alive()) {
    // The server ends the connection after this answer: open a new one (counted, not an error).
    fail(nullptr);
    return;
  }
  schedule_next(now);
}

void LoadConnection::time_out_if_sent_before(Nanos sent_before) {
  // fail() clears in_flight_, so a connection being closed is never timed out twice.
  if (in_flight_ && sent_at_ < sent_before) fail(&LoadErrors::timeout);
}

void LoadConnection::fail(uint64_t LoadErrors::*kind) {
  if (kind != nullptr) thread_.count(kind);
  if (in_flight_) {
    in_flight_ = false;
    thread_.note_in_flight(-1);
  }
  connected_ = false;
  closing_ = true;
  ::shutdown(fd_, SHUT_RDWR);
  close_when_quiet();
}

void LoadConnection::close_when_quiet() {
  if (!closing_ || recv_armed_ || send_in_flight_) return;
  closing_ = false;
  close_fd();
  if (stopped_ || thread_.stopping()) return;
  thread_.count_reconnect();
  connect();
}

void LoadConnection::shut_down() noexcept {
  stopped_ = true;
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void LoadConnection::close_fd() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  connected_ = false;
}

}  // namespace ringlab::bench::load_generator
