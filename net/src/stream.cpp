#include "ringlab/net/stream.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "ringlab/net/buffer_ring.hpp"

// Stable kernel ABI (include/uapi/linux/io_uring.h, 6.2); liburing 2.3's copy predates it.
#ifndef IORING_NOTIF_USAGE_ZC_COPIED
#define IORING_NOTIF_USAGE_ZC_COPIED (1U << 31)
#endif

namespace ringlab::net {
namespace {

using namespace std::chrono_literals;

// How long a Stream waits for the kernel to acknowledge a cancellation it asked for (an operation
// cut short by a failing ring, a multishot recv being disarmed) before giving up on it.
constexpr Duration kSettleWait = 100ms;
constexpr int kSettleRounds = 10;

// The completion of one single-shot operation. It lives on the stack of the call that waits for it:
// the call does not return before `done`, so the kernel never writes to a dead frame.
class OpHandler final : public CompletionHandler {
 public:
  void on_completion(int res, uint32_t flags) override {
    res_ = res;
    flags_ = flags;
    done_ = true;
  }
  [[nodiscard]] bool done() const { return done_; }
  [[nodiscard]] int res() const { return res_; }
  [[nodiscard]] uint32_t flags() const { return flags_; }

 private:
  int res_ = 0;
  uint32_t flags_ = 0;
  bool done_ = false;
};

// A zero-copy send completes twice: the result (with F_MORE when a notification follows) and, once
// the kernel no longer needs the bytes, the notification (F_NOTIF).
class ZeroCopyHandler final : public CompletionHandler {
 public:
  void on_completion(int res, uint32_t flags) override {
    if ((flags & IORING_CQE_F_NOTIF) != 0) {
      notified_ = true;
      copied_ = (static_cast<uint32_t>(res) & IORING_NOTIF_USAGE_ZC_COPIED) != 0;
      return;
    }
    res_ = res;
    have_result_ = true;
    notification_follows_ = (flags & IORING_CQE_F_MORE) != 0;
  }
  [[nodiscard]] bool done() const { return have_result_ && (!notification_follows_ || notified_); }
  [[nodiscard]] int res() const { return res_; }
  [[nodiscard]] bool copied() const { return copied_; }

 private:
  int res_ = 0;
  bool have_result_ = false;
  bool notification_follows_ = false;
  bool notified_ = false;
  bool copied_ = false;
};

std::unexpected<Error> op_error(const char* op, int code, const std::string& peer) { return fail(op, code, peer); }

// A ring error seen while waiting for an operation of this stream: say which peer it concerned.
std::unexpected<Error> ring_error(Error error, const std::string& peer) {
  if (error.peer.empty()) error.peer = peer;
  return std::unexpected<Error>(std::move(error));
}

}  // namespace

// How far a sendmsg of a list of iovecs has got, and the next batch to send from there. A short send
// leaves the first unsent iovec partly sent: the remainder goes out from a small copy of the iovecs
// (on the stack; a longer list is sent in several sendmsg calls).
class Stream::IovecCursor {
 public:
  static constexpr std::size_t kBatch = 8;

  explicit IovecCursor(std::span<const iovec> parts) noexcept : parts_(parts) { skip_empty(); }

  [[nodiscard]] bool done() const noexcept { return index_ == parts_.size(); }
  // Whether the batch next_batch() gives now holds every unsent iovec.
  [[nodiscard]] bool last_batch() const noexcept { return parts_.size() - index_ <= kBatch; }

  // The unsent bytes, at most kBatch iovecs of them, described in `batch` and `msg`.
  void next_batch(iovec (&batch)[kBatch], msghdr& msg) const noexcept {
    std::size_t n = 0;
    for (std::size_t i = index_; i < parts_.size() && n < kBatch; ++i) {
      batch[n] = parts_[i];
      if (i == index_) {
        batch[n].iov_base = static_cast<char*>(batch[n].iov_base) + offset_;
        batch[n].iov_len -= offset_;
      }
      ++n;
    }
    msg = msghdr{};
    msg.msg_iov = batch;
    msg.msg_iovlen = n;
  }

  // `sent` bytes of the last batch went out.
  void advance(std::size_t sent) noexcept {
    while (sent > 0 && index_ < parts_.size()) {
      const std::size_t room = parts_[index_].iov_len - offset_;
      if (sent < room) {
        offset_ += sent;
        sent = 0;
      } else {
        sent -= room;
        ++index_;
        offset_ = 0;
      }
    }
    skip_empty();
  }

 private:
  void skip_empty() noexcept {
    while (index_ < parts_.size() && parts_[index_].iov_len == offset_) {
      ++index_;
      offset_ = 0;
    }
  }

  std::span<const iovec> parts_;
  std::size_t index_ = 0;
  std::size_t offset_ = 0;  // bytes of parts_[index_] already sent
};

// Multishot recv state. It is its own completion handler, on the heap so that its address survives
// moves of the Stream while the kernel holds it.
struct Stream::MultishotState final : public CompletionHandler {
  struct Entry {
    int res;
    uint32_t flags;
  };

  void on_completion(int res, uint32_t flags) override {
    if ((flags & IORING_CQE_F_MORE) == 0) armed = false;
    if (count == capacity) {
      // Cannot happen while capacity > buffers in the ring (each queued entry holds one buffer), but
      // if it did, losing bytes silently would be worse than failing the stream.
      give_back(Entry{res, flags});
      overflowed = true;
      return;
    }
    queue[(head + count) % capacity] = Entry{res, flags};
    ++count;
  }

  Entry pop() {
    Entry entry = queue[head];
    head = (head + 1) % capacity;
    --count;
    return entry;
  }

  // Gives back every buffer still queued (their bytes are discarded).
  void discard_queued() {
    while (count > 0) give_back(pop());
  }

  // Gives back, unread, the buffers a completion consumed: one for a single-buffer completion (even
  // one that received nothing), as many as its bytes filled for a bundle.
  void give_back(const Entry& entry) {
    if (buffers != nullptr) buffers->give_back(entry.res, entry.flags, bundle);
  }

  BufferRing* buffers = nullptr;
  std::unique_ptr<Entry[]> queue;
  unsigned capacity = 0;
  unsigned head = 0;
  unsigned count = 0;
  bool armed = false;
  bool bundle = false;  // the multishot was armed as a bundle
  bool overflowed = false;
};

Result<Stream> Stream::connect(Ring& ring, const Endpoint& peer, std::optional<Duration> timeout) {
  auto socket = tcp_socket_for(peer);
  if (!socket) return std::unexpected(socket.error());
  Stream stream(ring, std::move(*socket), peer);
  OpHandler op;
  ring.prep_connect(stream.fd(), peer.addr(), peer.length, op);
  auto res = stream.wait(op, "connect", timeout);
  if (!res) return std::unexpected(res.error());
  return stream;
}

Stream::Stream(Ring& ring, Fd socket, Endpoint peer) noexcept
    : ring_(&ring), socket_(std::move(socket)), peer_(peer), peer_text_(peer_.to_string()) {}

Stream::Stream(Stream&& other) noexcept = default;

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    close();
    ring_ = other.ring_;
    socket_ = std::move(other.socket_);
    peer_ = other.peer_;
    peer_text_ = std::move(other.peer_text_);
    multishot_ = std::move(other.multishot_);
  }
  return *this;
}

Stream::~Stream() { close(); }

void Stream::close() noexcept {
  disarm();
  socket_.reset();
}

void Stream::close_async() noexcept {
  disarm();
  if (socket_.valid()) ring_->prep_close(socket_.release(), nullptr);
}

void Stream::disarm() noexcept {
  if (!multishot_) return;
  MultishotState& m = *multishot_;
  if (m.armed) {
    ring_->prep_cancel(m, nullptr);
    // The kernel holds a pointer to `m` until the multishot's last CQE: wait for it, bounded.
    for (int round = 0; round < kSettleRounds && m.armed; ++round) {
      if (!ring_->run_once(kSettleWait)) break;
    }
  }
  m.discard_queued();
  m.overflowed = false;
}

template <class Handler>
Result<int> Stream::wait(Handler& op, const char* name, std::optional<Duration> timeout) {
  if (timeout) ring_->link_timeout(*timeout);  // linked to the operation just prepared
  const bool deadline = timeout.has_value();
  auto ran = ring_->run_until([&] { return op.done(); });
  if (!ran) {
    settle(op);
    return ring_error(std::move(ran.error()), peer_text_);
  }
  // Only the linked timeout cancels operations of a Stream: a cancellation is the deadline passing.
  if (op.res() == -ECANCELED && deadline) return op_error(name, ETIMEDOUT, peer_text_);
  if (op.res() < 0) return op_error(name, -op.res(), peer_text_);
  return op.res();
}

template <class Handler>
void Stream::settle(Handler& op) noexcept {
  // The ring failed while `op` was in flight: cancel it and wait for its CQE, so the handler (on the
  // caller's stack) is not written to after the call returns. Bounded: a ring that fails again and
  // again cannot be waited on.
  if (op.done()) return;
  ring_->prep_cancel(op, nullptr);
  for (int round = 0; round < kSettleRounds && !op.done(); ++round) {
    if (!ring_->run_once(kSettleWait)) break;
  }
}

Status Stream::send_all(std::span<const iovec> parts, std::optional<Duration> timeout) {
  if (!socket_.valid()) return op_error("sendmsg", EBADF, peer_text_);
  IovecCursor cursor(parts);
  return send_rest(cursor, timeout);
}

Status Stream::send_rest(IovecCursor& cursor, std::optional<Duration> timeout) {
  while (!cursor.done()) {
    iovec batch[IovecCursor::kBatch];
    msghdr msg;
    cursor.next_batch(batch, msg);
    OpHandler op;
    ring_->prep_sendmsg(fd(), &msg, op);
    auto sent = wait(op, "sendmsg", timeout);
    if (!sent) return std::unexpected(sent.error());
    if (*sent == 0) return op_error("sendmsg (sent nothing)", EPIPE, peer_text_);
    cursor.advance(static_cast<std::size_t>(*sent));
  }
  return {};
}

Result<std::size_t> Stream::send_all_and_receive(std::span<const iovec> request, std::span<char> into,
                                                 std::optional<Duration> timeout) {
  if (!socket_.valid()) return op_error("sendmsg", EBADF, peer_text_);
  if (into.empty()) return op_error("recv (empty buffer)", EINVAL, peer_text_);
  const auto deadline =
      timeout ? std::chrono::steady_clock::now() + *timeout : std::chrono::steady_clock::time_point::max();

  IovecCursor cursor(request);
  iovec batch[IovecCursor::kBatch];
  msghdr msg;
  cursor.next_batch(batch, msg);
  std::size_t batch_bytes = 0;
  for (std::size_t i = 0; i < msg.msg_iovlen; ++i) batch_bytes += batch[i].iov_len;
  // The request in one sendmsg (the usual case: an HTTP request is two iovecs): the recv can wait for
  // the answer in the same enter. More iovecs than a batch: the rest goes out before the answer can
  // come, so the first wait is for the send alone.
  const bool whole_request = cursor.last_batch();

  // Linked (ring.hpp): the kernel continues a short send itself and starts the recv only after it; a
  // failed send cancels the recv, so both complete, whatever happens, and the wait can ask for both.
  OpHandler send_op;
  OpHandler recv_op;
  if (msg.msg_iovlen == 1) {
    // A request in one buffer (a GET): a plain send, no msghdr for the kernel to copy in.
    ring_->prep_send_then_recv(fd(), std::span<const char>(static_cast<const char*>(batch[0].iov_base), batch[0].iov_len),
                               into, send_op, recv_op);
  } else {
    ring_->prep_sendmsg_then_recv(fd(), &msg, into, send_op, recv_op);
  }

  // Both handlers live on this stack: every way out after an error goes through here, which cancels
  // what is still in flight and waits for it.
  const auto leave = [&](std::unexpected<Error> error) {
    settle(send_op);
    settle(recv_op);
    return error;
  };
  // Waits until `until()`, one io_uring_enter per round, asking the kernel for every completion it
  // waits on, so that the send's (posted during submission) does not end the wait early.
  const auto run = [&](auto until, bool with_recv) -> Status {
    while (!until()) {
      Duration remaining = Duration::max();
      if (timeout) {
        remaining = std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now());
        if (remaining <= Duration::zero()) return op_error(send_op.done() ? "recv" : "sendmsg", ETIMEDOUT, peer_text_);
      }
      const unsigned wanted = (send_op.done() ? 0u : 1u) + (with_recv && !recv_op.done() ? 1u : 0u);
      auto ran = ring_->run_once(remaining, wanted);
      if (!ran) return ring_error(std::move(ran.error()), peer_text_);
    }
    return {};
  };

  // One enter in the common case: it submits both and returns once the answer's first bytes are in.
  const auto sent_batch = [&] { return send_op.res() > 0 && static_cast<std::size_t>(send_op.res()) == batch_bytes; };
  if (auto ran = run([&] { return send_op.done() && (recv_op.done() || !whole_request || !sent_batch()); },
                     whole_request);
      !ran) {
    return leave(std::unexpected(ran.error()));
  }
  if (send_op.res() < 0) return leave(op_error("sendmsg", -send_op.res(), peer_text_));
  if (send_op.res() == 0) return leave(op_error("sendmsg (sent nothing)", EPIPE, peer_text_));
  cursor.advance(static_cast<std::size_t>(send_op.res()));
  if (cursor.done()) {
    if (auto ran = run([&] { return recv_op.done(); }, true); !ran) return leave(std::unexpected(ran.error()));
    if (recv_op.res() < 0) return op_error("recv", -recv_op.res(), peer_text_);
    return static_cast<std::size_t>(recv_op.res());
  }
  // The rest of the request goes out one sendmsg (one enter) at a time: iovecs beyond the first batch,
  // or what a send stopped short of (the kernel then cancelled the linked recv; the next sendmsg
  // reports why it stopped). The recv, when still waiting, takes the answer; otherwise one more does.
  if (auto sent = send_rest(cursor, timeout); !sent) return leave(std::unexpected(sent.error()));
  if (auto ran = run([&] { return recv_op.done(); }, true); !ran) return leave(std::unexpected(ran.error()));
  if (recv_op.res() == -ECANCELED) {
    const Duration remaining =
        timeout ? std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now()) : Duration::max();
    if (remaining <= Duration::zero()) return op_error("recv", ETIMEDOUT, peer_text_);
    return receive(into, timeout ? std::optional<Duration>(remaining) : std::nullopt);
  }
  if (recv_op.res() < 0) return op_error("recv", -recv_op.res(), peer_text_);
  return static_cast<std::size_t>(recv_op.res());
}

Status Stream::send_all(std::span<const char> bytes, std::optional<Duration> timeout) {
  if (!socket_.valid()) return op_error("send", EBADF, peer_text_);
  while (!bytes.empty()) {
    OpHandler op;
    ring_->prep_send(fd(), bytes, op);
    auto sent = wait(op, "send", timeout);
    if (!sent) return std::unexpected(sent.error());
    if (*sent == 0) return op_error("send (sent nothing)", EPIPE, peer_text_);
    bytes = bytes.subspan(static_cast<std::size_t>(*sent));
  }
  return {};
}

Result<ZeroCopyReport> Stream::send_zero_copy(std::span<const char> bytes, std::optional<Duration> timeout) {
  if (!socket_.valid()) return op_error("send_zc", EBADF, peer_text_);
  if (!ring_->features().send_zc) return op_error("send_zc", EOPNOTSUPP, peer_text_);
  ZeroCopyReport report;
  while (!bytes.empty()) {
    ZeroCopyHandler op;
    ring_->prep_send_zc(fd(), bytes, op);
    auto sent = wait(op, "send_zc", timeout);
    if (!sent) return std::unexpected(sent.error());
    ++report.sends;
    if (op.copied()) ++report.copied_sends;
    if (*sent == 0) return op_error("send_zc (sent nothing)", EPIPE, peer_text_);
    report.bytes += static_cast<std::size_t>(*sent);
    bytes = bytes.subspan(static_cast<std::size_t>(*sent));
  }
  return report;
}

Result<std::size_t> Stream::receive(std::span<char> into, std::optional<Duration> timeout) {
  if (!socket_.valid()) return op_error("recv", EBADF, peer_text_);
  // A recv of 0 bytes returns 0, which would read as "peer closed".
  if (into.empty()) return op_error("recv (empty buffer)", EINVAL, peer_text_);
  OpHandler op;
  ring_->prep_recv(fd(), into, op);
  auto received = wait(op, "recv", timeout);
  if (!received) return std::unexpected(received.error());
  return static_cast<std::size_t>(*received);
}

Result<std::size_t> Stream::receive_fixed(std::span<char> into, int buf_index, std::optional<Duration> timeout) {
  if (!socket_.valid()) return op_error("read_fixed", EBADF, peer_text_);
  if (into.empty()) return op_error("read_fixed (empty buffer)", EINVAL, peer_text_);
  OpHandler op;
  ring_->prep_read_fixed(fd(), into, buf_index, op);
  auto received = wait(op, "read_fixed", timeout);
  if (!received) return std::unexpected(received.error());
  return static_cast<std::size_t>(*received);
}

Result<ProvidedChunk> Stream::receive_provided(BufferRing& buffers, std::optional<Duration> timeout, bool bundle) {
  if (!socket_.valid()) return op_error("recv_multishot", EBADF, peer_text_);
  if (!ring_->features().recv_multishot) return op_error("recv_multishot", EOPNOTSUPP, peer_text_);
  if (!multishot_) multishot_ = std::make_unique<MultishotState>();
  MultishotState& m = *multishot_;
  if (m.buffers != &buffers) {
    // Another buffer ring: allowed only between multishots, once everything queued was consumed.
    if (m.armed || m.count > 0) return op_error("recv_multishot (buffer ring changed while armed)", EBUSY, peer_text_);
    m.buffers = &buffers;
  }
  // Each queued completion holds a distinct buffer, plus one final CQE without a buffer: the queue
  // can never overflow. It is sized once per buffer ring, not per operation.
  if (m.capacity < buffers.count() + 2 && m.count == 0) {
    m.capacity = buffers.count() + 2;
    m.queue = std::make_unique<MultishotState::Entry[]>(m.capacity);
    m.head = 0;
  }
  if (m.overflowed) return op_error("recv_multishot (completion queue overflow)", EOVERFLOW, peer_text_);
  if (m.count == 0 && !m.armed) {
    ring_->prep_recv_multishot(fd(), buffers, m, bundle);
    m.bundle = bundle;
    m.armed = true;
  }

  // No linked timeout here: it would bound the whole multishot, not this wait. The ring's own wait
  // carries the deadline instead, and nothing is left in flight on this stack when it passes.
  const auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout : std::chrono::steady_clock::time_point::max();
  while (m.count == 0) {
    Duration remaining = Duration::max();
    if (timeout) {
      remaining = std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now());
      if (remaining <= Duration::zero()) return op_error("recv_multishot", ETIMEDOUT, peer_text_);
    }
    auto ran = ring_->run_once(remaining);
    if (!ran) return ring_error(std::move(ran.error()), peer_text_);
  }

  const MultishotState::Entry entry = m.pop();
  const bool has_buffer = (entry.flags & IORING_CQE_F_BUFFER) != 0;
  if (entry.res <= 0) {
    m.give_back(entry);
    if (entry.res == -ENOBUFS) {
      // The kernel found no free buffer and ended the multishot. Not retried here: the caller
      // recycles buffers (or gives the ring more) and calls again, which re-arms.
      return op_error("recv_multishot (provided buffer ring ran dry)", ENOBUFS, peer_text_);
    }
    if (entry.res < 0) return op_error("recv_multishot", -entry.res, peer_text_);
    return ProvidedChunk{};  // peer closed
  }
  if (!has_buffer) return op_error("recv_multishot (completion without a buffer)", EPROTO, peer_text_);
  return ProvidedChunk{BufferRing::buffer_id(entry.flags), static_cast<std::size_t>(entry.res)};
}

}  // namespace ringlab::net
