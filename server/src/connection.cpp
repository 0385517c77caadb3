// Connection: one accepted socket, from accept to close (see worker.hpp, server.hpp). This file
// holds its events: a socket taken over, each receive (paused while the output queue is full), each
// send of a batch of answers, the end of /proxy's fetch, and the close. What each request is
// answered is made in connection_answers.cpp; deadlines, stop and parse errors are handled in
// connection_limits.cpp.
#include <liburing.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <new>
#include <string>
#include <utility>

#include "worker.hpp"

// Newer than the kernel headers of Debian 12 (Linux 6.2); the Ring asks for usage reports only where
// the kernel has them.
#ifndef IORING_SEND_ZC_REPORT_USAGE
#define IORING_SEND_ZC_REPORT_USAGE (1U << 3)
#endif
#ifndef IORING_NOTIF_USAGE_ZC_COPIED
#define IORING_NOTIF_USAGE_ZC_COPIED (1U << 31)
#endif

namespace ringlab::server {

Connection::Connection(Worker& worker)
    : worker_(worker),
      parser_(http::ParserLimits{.max_header_bytes = worker.options().max_header_bytes,
                                 .max_body_bytes = worker.options().max_body_bytes}),
      batches_{OutputBatch(worker.options().inline_body_bytes), OutputBatch(worker.options().inline_body_bytes)} {
  content_type_.reserve(128);
  body_.reserve(4096);
  scratch_.reserve(256);
}

Connection::~Connection() { abandon(); }

void Connection::abandon() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  close_pipe();
}

void Connection::close_pipe() noexcept {
  for (int& end : pipe_) {
    if (end >= 0) ::close(end);
    end = -1;
  }
  pipe_capacity_ = 0;
  pipe_bytes_ = 0;
}

void Connection::open(int fd) {
  fd_ = fd;
  state_ = State::open;
  recv_armed_ = false;
  send_in_flight_ = false;
  batch_sent_ = false;
  send_cqes_ = 0;
  splice_fill_ = false;
  close_after_send_ = false;
  peer_closed_ = false;
  paused_ = false;
  head_seen_ = false;
  out_of_memory_ = false;
  held_.clear();
  last_active_ = worker_.now();
  head_since_ = last_active_;
  parser_.reset();
  request_ = Request{};
  arm_recv();
}

void Connection::arm_recv(bool drained) {
  // One buffer per arm by default: what a paused connection holds is then bounded by one buffer,
  // whatever the client keeps sending (ServerOptions::recv_multishot says what the other way costs).
  if (worker_.options().recv_multishot) {
    worker_.ring().prep_recv_multishot(fd_, worker_.buffers(), recv_op_);
  } else {
    worker_.ring().prep_recv_select(fd_, worker_.buffers(), recv_op_, drained);
  }
  recv_armed_ = true;
}

void Connection::on_recv(int res, uint32_t flags) {
  const bool more = (flags & IORING_CQE_F_MORE) != 0;
  if (!more) recv_armed_ = false;
  // A request that fit its buffer with room to spare was all the socket held (the usual case for
  // a kept-alive client waiting for its answer).
  bool drained = false;

  if (res > 0) {
    if ((flags & IORING_CQE_F_BUFFER) == 0) {
      // A buffer-select recv always names its buffer; anything else means the ring is misused.
      ++worker_.counters().connection_errors;
      start_close();
    } else {
      const uint16_t id = net::BufferRing::buffer_id(flags);
      auto buffer = worker_.buffers().buffer(id);
      drained = static_cast<std::size_t>(res) < buffer.size();
      if (state_ == State::open) {
        last_active_ = worker_.now();
        try {
          consume({buffer.data(), std::min<std::size_t>(static_cast<std::size_t>(res), buffer.size())});
        } catch (const std::bad_alloc&) {
          // Out of memory outside a handler (holding bytes, formatting an error): this connection
          // ends, the process does not.
          ++worker_.counters().connection_errors;
          start_close();
        }
      }
      // consume() left nothing pointing into the buffer (the parser detached a partial head).
      worker_.buffers().recycle(id);
    }
  } else if (res == 0) {
    on_peer_closed();
  } else if (res == -ENOBUFS && (state_ == State::open || state_ == State::draining)) {
    // Every provided buffer was in use when data arrived: the kernel ended the recv. The buffers of
    // this batch of completions are back by the time the re-arm below is submitted.
  } else if (res == -ECANCELED && paused_) {
    // pause_reading() cancelled it; resume_reading() re-arms.
  } else if (state_ != State::closing) {
    ++worker_.counters().connection_errors;
    start_close();
  }

  if (!recv_armed_ && !peer_closed_ && !paused_ && (state_ == State::open || state_ == State::draining)) {
    // A one-buffer recv ends after each completion by design; a multishot ends early.
    if (worker_.options().recv_multishot || res == -ENOBUFS) ++worker_.counters().recv_rearmed;
    arm_recv(drained);
  }
  flush();
  maybe_release();
}

void Connection::consume(std::string_view bytes) {
  while (!bytes.empty() && state_ == State::open && !close_after_send_) {
    if (paused_ || fetch_ != nullptr || output_full()) {
      pause_reading(bytes);
      break;
    }
    // A head starts no earlier than the bytes that follow a completed message (header_timeout).
    if (!parser_.in_message()) head_since_ = worker_.now();
    auto used = parser_.feed(bytes, *this);
    if (!used) {
      on_parse_error(used.error());
      return;
    }
    if (*used == 0) break;  // the parser stops only at a message end or an error; never loop on it
    bytes.remove_prefix(*used);
  }
  if (state_ == State::open && !close_after_send_ && parser_.in_message()) {
    // The buffer goes back to the kernel next: a head still incomplete is copied into the parser's
    // scratch (per connection) first. No-op when the head is complete (a body in progress).
    if (auto detached = parser_.detach(); !detached) on_parse_error(detached.error());
  }
}

bool Connection::output_full() noexcept {
  // Both batches count, with the memory their answers own or reference (queued_bytes()); an
  // unfinished chunked answer counts as full until its last window is appended.
  return !stream_.rest.empty() || serializing_.active ||
         pending().queued_bytes() + in_flight().queued_bytes() >= worker_.options().max_queued_output_bytes;
}

void Connection::pause_reading(std::string_view rest) {
  if (!paused_) {
    paused_ = true;
    ++worker_.counters().read_pauses;
    // A one-buffer recv is never armed here (consume() runs from its completion or from resume,
    // which arms after it). A multishot is cancelled: completions already on their way still
    // arrive and are held, then it ends.
    if (recv_armed_) worker_.ring().prep_cancel(recv_op_, nullptr);
  }
  held_.append(rest);
}

void Connection::resume_reading() {
  paused_ = false;
  std::string input = std::exchange(held_, take_spare());
  consume(input);  // may pause again, holding the rest
  // consume() detached any partial head from `input`: nothing refers to it any more.
  keep_spare(std::move(input));
  if (!paused_ && !recv_armed_ && !peer_closed_ && state_ == State::open) arm_recv();
  flush();
}

void Connection::on_upstream_done(std::expected<void, UpstreamFailure> result, std::string& body) {
  fetch_ = nullptr;
  if (state_ != State::open) return;  // cannot happen: a closing connection abandons its fetch
  // Decided now, not when the fetch started: a stop may have begun meanwhile.
  const bool close = !request_.keep_alive || worker_.stopping();
  try {
    if (!result) {
      ++worker_.counters().upstream_errors;
      scratch_.assign("upstream: ");
      scratch_.append(result.error().message);
      respond_error(result.error().status, scratch_, {}, request_.routed->head_only, close);
    } else {
      body_.swap(body);  // the fetch keeps our old string for its next body
      if (request_.routed->status_only) body_.clear();
      ResponseHead head = base_head(close);
      head.chunked = request_.routed->chunked && !request_.http10;
      head.content_type = kJsonContentType;
      answer_body_string(head, close);
    }
  } catch (const std::bad_alloc&) {
    ++worker_.counters().connection_errors;
    start_close();
    return;
  }
  flush();
  // Requests that arrived meanwhile were held (consume); they are read now, in order.
  if (paused_ && !output_full()) resume_reading();
}

void Connection::on_peer_closed() {
  peer_closed_ = true;
  if (state_ != State::open) {
    start_close();
    return;
  }
  // A /proxy fetch in flight is abandoned, as nginx aborts its upstream request when the client
  // goes (proxy_ignore_client_abort off): the upstream's answer would have nobody to go to.
  if (fetch_ != nullptr) {
    start_close();
    return;
  }
  // Requests held while paused are still answered; on_sent closes once everything went out.
  if (paused_) return;
  if (parser_.in_message()) {
    // A request cut short: there is nobody to answer it to.
    start_close();
    return;
  }
  // A client may half-close after its last request and still read: answers in progress are sent,
  // then the connection is closed (finish_batch; a batch whose zero-copy notifications are still to
  // come has bytes in the socket that a reset would drop).
  if (!send_in_flight_ && !batch_sent_ && pending().empty()) start_close();
}

void Connection::submit_send() {
  const BodySource* source = in_flight().current_source();
  auto parts = in_flight().iovecs();
  if (source == nullptr && parts.size() == 1) {
    // One contiguous answer (a head with its inline body, the usual kept-alive case): a plain send,
    // with no msghdr and iovec array for the kernel to copy in.
    worker_.ring().prep_send(fd_, {static_cast<const char*>(parts.front().iov_base), parts.front().iov_len},
                             send_op_);
  } else if (source == nullptr) {
    message_ = msghdr{};
    message_.msg_iov = const_cast<iovec*>(parts.data());
    message_.msg_iovlen = std::min<std::size_t>(parts.size(), IOV_MAX);
    // The Ring adds MSG_NOSIGNAL: a peer that went away gives EPIPE, not a SIGPIPE to the process.
    worker_.ring().prep_sendmsg(fd_, &message_, send_op_);
  } else if (source->kind == BodySource::Kind::file) {
    submit_splice(*source);
    return;
  } else {
    // One body (or what a short send left of it), from the cached bytes or their registered copy.
    const char* at = static_cast<const char*>(parts.front().iov_base);
    const std::size_t length = parts.front().iov_len;
    if (source->kind == BodySource::Kind::zero_copy) {
      worker_.ring().prep_send_zc(fd_, {at, length}, send_op_);
    } else {
      net::Ring& ring = worker_.ring();
      const unsigned zc_flags = ring.features().send_zc_report_usage ? IORING_SEND_ZC_REPORT_USAGE : 0;
      io_uring_sqe* sqe = ring.sqe();
      io_uring_prep_send_zc_fixed(sqe, fd_, source->fixed + (at - source->origin), length, MSG_NOSIGNAL, zc_flags,
                                  source->buf_index);
      net::Ring::set_handler(sqe, &send_op_);
    }
  }
  send_in_flight_ = true;
  ++send_cqes_;
  ++worker_.counters().sends;
}

void Connection::submit_splice(const BodySource& source) {
  io_uring_sqe* sqe = worker_.ring().sqe();
  if (pipe_bytes_ == 0) {
    const iovec& part = in_flight().iovecs().front();
    const auto offset = static_cast<int64_t>(static_cast<const char*>(part.iov_base) - source.origin);
    const auto length = static_cast<unsigned>(std::min(part.iov_len, pipe_capacity_));
    io_uring_prep_splice(sqe, source.file_fd, offset, pipe_[1], -1, length, 0);
    splice_fill_ = true;
  } else {
    // Runs in the kernel's worker thread (splices are never done inline), where SIGPIPE is blocked:
    // a peer that went away gives EPIPE.
    io_uring_prep_splice(sqe, pipe_[0], -1, fd_, -1, static_cast<unsigned>(pipe_bytes_), 0);
    splice_fill_ = false;
  }
  net::Ring::set_handler(sqe, &send_op_);
  send_in_flight_ = true;
  ++send_cqes_;
  ++worker_.counters().sends;
}

void Connection::on_sent(int res, uint32_t flags) {
  // A zero-copy send completes twice: its result (with F_MORE), then the notification (F_NOTIF)
  // once the kernel no longer reads its bytes.
  if ((flags & IORING_CQE_F_MORE) == 0) --send_cqes_;
  if ((flags & IORING_CQE_F_NOTIF) != 0) {
    if ((static_cast<uint32_t>(res) & IORING_NOTIF_USAGE_ZC_COPIED) != 0) {
      ++worker_.counters().zc_copied;
    } else {
      ++worker_.counters().zc_sends;
    }
    if (state_ == State::closing) {
      maybe_release();
    } else if (batch_sent_ && send_cqes_ == 0) {
      last_active_ = worker_.now();
      finish_batch();
    }
    return;
  }
  send_in_flight_ = false;
  if (state_ == State::closing) {
    maybe_release();
    return;
  }
  if (res <= 0) {
    // EPIPE/ECONNRESET: the peer is gone. 0 bytes for a non-empty batch cannot make progress (nor
    // an end of file where a body file has bytes).
    ++worker_.counters().connection_errors;
    start_close();
    return;
  }
  last_active_ = worker_.now();
  if (splice_fill_) {
    splice_fill_ = false;
    pipe_bytes_ = static_cast<std::size_t>(res);
    submit_send();  // now from the pipe to the socket
    return;
  }
  if (pipe_bytes_ > 0) pipe_bytes_ -= std::min(pipe_bytes_, static_cast<std::size_t>(res));
  if (!in_flight().consume(static_cast<std::size_t>(res))) {
    submit_send();  // a short send: continue where it stopped
    return;
  }
  if (send_cqes_ > 0) {
    batch_sent_ = true;  // finish_batch() when the last notification arrives
    return;
  }
  finish_batch();
}

void Connection::finish_batch() {
  batch_sent_ = false;
  // Freed answer memory counts towards the worker's next malloc_trim().
  worker_.note_released(in_flight().queued_bytes());
  in_flight().clear(&spare_bodies_);
  if (!stream_.rest.empty()) continue_stream();  // the next window of a chunked answer
  if (serializing_.active) continue_serializing(pending_index_ ^ 1u);
  if (state_ != State::open) return;  // the next chunk could not be serialized: closing
  flush();  // the pending batch, if any, goes out now
  if (paused_ && fetch_ == nullptr && !output_full()) resume_reading();
  // A /proxy answer is still to come: the connection ends, if it must, after that one.
  if (send_in_flight_ || state_ != State::open || fetch_ != nullptr) return;
  held_.clear();  // left over only when an answer ended the connection: never to be parsed
  if (peer_closed_) {
    start_close();
  } else if (close_after_send_) {
    begin_drain();
  }
}

void Connection::begin_drain() {
  // Our FIN goes out after the answer; what the client still sends is read and dropped until it
  // closes, so its kernel does not see a reset (which could discard the answer before it is read).
  // A synchronous syscall: this is the rare path, and it must happen before any close of the fd.
  if (::shutdown(fd_, SHUT_WR) != 0) {
    start_close();
    return;
  }
  state_ = State::draining;
  drain_since_ = worker_.now();
  if (!recv_armed_) start_close();
}

void Connection::trim() {
  // What an unusual request grew stays with the pooled object otherwise (a 72 MB chunked body that
  // got 413, megabytes held while paused).
  auto shrink = [this](std::string& text, std::size_t keep) {
    if (text.capacity() <= keep) {
      text.clear();
      return;
    }
    worker_.note_released(text.capacity());
    std::string().swap(text);
    text.reserve(keep);
  };
  shrink(body_, 4096);
  shrink(held_, 0);
  std::erase_if(spare_bodies_, [this](const std::string& spare) {
    if (spare.capacity() <= 64u << 10) return false;
    worker_.note_released(spare.capacity());
    return true;
  });
  stream_ = ChunkStream{};
  serializing_.active = false;
  if (serializing_.chunk.capacity() > 64u << 10) {
    worker_.note_released(serializing_.chunk.capacity());
    std::string().swap(serializing_.chunk);
  }
}

void Connection::start_close() {
  if (state_ == State::closing || state_ == State::free) return;
  state_ = State::closing;
  if (fetch_ != nullptr) std::exchange(fetch_, nullptr)->abandon();
  if (recv_armed_) worker_.ring().prep_cancel(recv_op_, nullptr);
  if (send_in_flight_) worker_.ring().prep_cancel(send_op_, nullptr);
  maybe_release();
}

void Connection::maybe_release() {
  if (state_ != State::closing || recv_armed_ || send_in_flight_) return;
  if (fd_ >= 0) {
    if (send_cqes_ > 0) {
      // Zero-copy notifications are still to come: the kernel sends them once the socket holds no
      // more of their bytes, which a peer that stopped reading may never allow. The answer was cut
      // short and will not be delivered: a reset (SO_LINGER 0) drops what is queued, so they come now.
      const linger hard_close{.l_onoff = 1, .l_linger = 0};
      ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &hard_close, sizeof hard_close);
    }
    worker_.ring().prep_close(fd_, nullptr);
    fd_ = -1;
  }
  // The bodies those sends read stay held (by the batches) until the last notification.
  if (send_cqes_ > 0) return;
  // A pipe with bytes of an answer that will never go out is not reused.
  if (pipe_bytes_ > 0) close_pipe();
  batch_sent_ = false;
  splice_fill_ = false;
  batches_[0].clear(&spare_bodies_);
  batches_[1].clear(&spare_bodies_);
  trim();
  request_ = Request{};
  state_ = State::free;
  worker_.release(*this);
}

}  // namespace ringlab::server
