#pragma once
// Stream: one connected TCP socket driven through a Ring, one operation at a time, waiting in place.
//
// This is the client side's transport: each call queues an SQE (with a linked timeout when a
// deadline is given), runs the ring until that operation completes, and returns its result. It is
// still io_uring end to end (no blocking syscall), but sequential, which is what a request/response
// client measured one request at a time needs.
//
// Errors name the operation and the peer. A deadline that passes gives code ETIMEDOUT. A peer that
// closes makes recv return 0 bytes (not an error); a reset gives ECONNRESET.
//
// Deadlines: `timeout` bounds each kernel operation (an idle timeout), not the whole call: send_all
// of a large buffer that the peer drains slowly but steadily does not time out. Single-shot
// operations carry it as a linked timeout (IOSQE_IO_LINK + IORING_OP_LINK_TIMEOUT); the cancelled
// operation's -ECANCELED becomes ETIMEDOUT. Every call returns only after its operation's own CQE
// (and, for zero-copy sends, the notification) arrived, so nothing it started is left in flight.
// The linked timeout's CQE may come later; it carries no handler and is reaped silently.
//
// If the ring itself fails while an operation is in flight (io_uring_enter errors other than a
// timeout or a signal), the Stream cancels the operation and waits a bounded time for its CQE
// before returning the ring's error; the connection should then be closed.
//
// Ownership: a Stream owns its socket and refers to a Ring (and, for provided buffers, a BufferRing)
// that must outlive it.
#include <sys/uio.h>

#include <cstdint>
#include <optional>
#include <span>

#include "ringlab/net/endpoint.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/net/socket.hpp"

namespace ringlab::net {

class BufferRing;

// What a zero-copy send did: bytes sent and whether the kernel copied them anyway (it does on
// loopback; IORING_SEND_ZC_REPORT_USAGE tells).
struct ZeroCopyReport {
  std::size_t bytes = 0;
  unsigned sends = 0;        // SEND_ZC operations used
  unsigned copied_sends = 0;  // of those, how many the kernel reported as copied
};

// A buffer the kernel picked from a BufferRing for a multishot recv.
struct ProvidedChunk {
  uint16_t buffer_id = 0;
  std::size_t length = 0;  // 0 = peer closed
};

class Stream {
 public:
  static Result<Stream> connect(Ring& ring, const Endpoint& peer, std::optional<Duration> timeout);
  // Adopts an already connected socket.
  Stream(Ring& ring, Fd socket, Endpoint peer) noexcept;
  Stream(Stream&&) noexcept;
  Stream& operator=(Stream&&) noexcept;
  ~Stream();

  // Sends every byte of the iovecs (sendmsg; a short send is continued where it stopped).
  Status send_all(std::span<const iovec> parts, std::optional<Duration> timeout);
  Status send_all(std::span<const char> bytes, std::optional<Duration> timeout);
  // Sends every byte of `request` and receives once into `into`: the sendmsg and the recv are queued
  // as one link (Ring::prep_sendmsg_then_recv) and go to the kernel in one io_uring_enter, which also
  // waits for the recv, so a request whose answer fits one receive costs one system call. The kernel
  // continues a short send itself (MSG_WAITALL) before it starts the recv. Further enters only where
  // the request has more iovecs than one sendmsg takes (the rest is sent before the recv is waited
  // for) or a send stopped short (the rest is sent, then a recv of its own). A failed send cancels the
  // recv and is returned. Returns the bytes received (0 = the peer closed). `timeout` bounds the whole
  // exchange (send and first receive together) through the wait of the enter, not a linked timeout;
  // when it passes, what is in flight is cancelled and ETIMEDOUT is returned. An empty `into` is
  // EINVAL; nothing is sent then.
  Result<std::size_t> send_all_and_receive(std::span<const iovec> request, std::span<char> into,
                                           std::optional<Duration> timeout);
  // IORING_OP_SEND_ZC, waiting for each notification before returning, so the caller may reuse the
  // bytes as soon as this returns.
  Result<ZeroCopyReport> send_zero_copy(std::span<const char> bytes, std::optional<Duration> timeout);

  // One recv into `into`; 0 means the peer closed (an empty `into` is EINVAL, never a 0).
  Result<std::size_t> receive(std::span<char> into, std::optional<Duration> timeout);
  // One read into registered buffer `buf_index`; `into` must lie inside that buffer.
  Result<std::size_t> receive_fixed(std::span<char> into, int buf_index, std::optional<Duration> timeout);
  // The next completion of a multishot recv on `buffers` (armed on first use and re-armed, by the
  // next call, when the kernel ends it). Completions that arrive while nobody asks are queued in
  // arrival order (a fixed queue sized once from buffers.count(); no allocation per operation).
  // The caller recycles chunk.buffer_id when done with its bytes; chunk.length 0 = peer closed.
  // When the ring has no free buffer the kernel ends the multishot with ENOBUFS: that is returned
  // as an error (op names the ring running dry), never retried here; the next call re-arms.
  // The deadline bounds the wait (the multishot stays armed when it passes: ETIMEDOUT).
  // bundle (RingFeatures::recv_bundle): the multishot is armed as a bundle, so a chunk's length may
  // run past its buffer into the ones after it in ring order (BufferRing::take_pieces walks and
  // recycles them); taken when the multishot is armed.
  Result<ProvidedChunk> receive_provided(BufferRing& buffers, std::optional<Duration> timeout, bool bundle = false);

  [[nodiscard]] int fd() const noexcept { return socket_.get(); }
  [[nodiscard]] const Endpoint& peer() const noexcept { return peer_; }
  [[nodiscard]] Ring& ring() const noexcept { return *ring_; }
  // Closes now (synchronously); further calls fail with EBADF. An armed multishot recv is cancelled
  // first and its queued buffers are recycled (their bytes discarded).
  void close() noexcept;
  // As close(), but the close itself is queued on the ring (IORING_OP_CLOSE, result ignored) and goes
  // to the kernel with the ring's next submission: a retired connection costs no system call of its
  // own on the path of the request that retired it.
  void close_async() noexcept;

 private:
  // Links `timeout` (if any) to the operation just prepared into `op`, then runs the ring until `op`
  // completes: its result, or the error named `name` (ETIMEDOUT when the deadline cancelled it).
  template <class Handler>
  Result<int> wait(Handler& op, const char* name, std::optional<Duration> timeout);
  template <class Handler>
  void settle(Handler& op) noexcept;
  void disarm() noexcept;
  class IovecCursor;
  // Sends what `cursor` has left, one sendmsg (and one wait) at a time.
  Status send_rest(IovecCursor& cursor, std::optional<Duration> timeout);

  Ring* ring_;
  Fd socket_;
  Endpoint peer_;
  std::string peer_text_;
  // Multishot recv state (provided buffers). Completions that arrive while the caller is not waiting
  // are queued here in arrival order.
  struct MultishotState;
  std::unique_ptr<MultishotState> multishot_;
};

}  // namespace ringlab::net
