#pragma once
// BufferRing: an io_uring provided-buffer ring (IORING_REGISTER_PBUF_RING).
//
// liburing 2.3 (Debian 12) has no io_uring_setup_buf_ring(): the ring memory is mmap'ed here and
// registered with io_uring_register_buf_ring().
//
// Ownership: the BufferRing owns `count` buffers of `buffer_size` bytes each. After the kernel hands
// one out (a CQE with IORING_CQE_F_BUFFER), the bytes of buffer(bid) belong to the caller until it
// calls recycle(bid); views into it die at recycle(). A BufferRing must be destroyed before its Ring.
// The buffers are touched at create(): resident from then on (count * buffer_size bytes), so that no
// receive faults them in.
//
// Bundles (IORING_RECVSEND_BUNDLE): one completion carries several buffers, the ones the kernel took
// one after another from the ring's head, every one full but the last; the CQE names the first. Which
// buffers follow is the order this ring published them in (create(), then each recycle()), which it
// remembers slot by slot: take_pieces() walks a completion's buffers through it. A recycle reuses the
// oldest free slot, so the slots of a completion not yet handled are never overwritten as long as
// completions are handled in the order they arrive (the kernel takes buffers in that order) and each
// completion's buffers are walked before the next one's are recycled, which take_pieces() does.
//
// Incremental rings (IOU_PBUF_RING_INC, Linux 6.12): the kernel keeps the buffer at the ring's head
// across receives, each receive taking at most what is left of it and landing after the last one's
// bytes, whichever socket that was for, and flags IORING_CQE_F_BUF_MORE while room is left. A buffer
// belongs to the caller only once a completion for it comes without that flag. take_increment() finds
// where a completion's bytes start (this side counts what the kernel filled of each buffer) and gives
// the buffer back once the kernel is done with it. A zero-length completion never gives one back: it
// consumed nothing, yet kernels before the fix of 3ecd3e03144b ("io_uring/kbuf: fix for incremental
// buffer consumption with 0 length") flag it as if it had consumed the buffer, which would then be on
// the ring twice.
//
// Holding an incremental buffer: a caller that parses pieces where they lie may still need a piece's
// last bytes when its completion is in (a record cut at its end, to be parsed with the next piece). It
// says so by returning true from take_increment()'s `take`: the buffer then stays out of the ring, even
// once the kernel is done with it, until release(); the kernel never writes into a held buffer it is
// done with. Holding buffers starves the ring: a caller holds few, and only while it alone receives into
// the ring (another connection's receive may finish a buffer it holds bytes in, which is fine, but the
// ring then shrinks for everyone).
//
// Memory: every buffer is followed by at least kReadableAfter readable bytes (the next buffer, or slack
// after the last one), so that a parser which loads past the end of a piece (simdjson's padding) stays
// inside the allocation; it must not interpret them. An incremental ring's buffers are mapped twice, back
// to back (one memfd, the second view followed by a page of slack): the ring's last bytes are then also
// the bytes right before its first, so a piece at the ring's start can be viewed where it follows a piece
// at the ring's end (view_after). The pages are resident once; both views count in the process's RSS.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ringlab/net/error.hpp"

namespace ringlab::net {

class Ring;

class BufferRing {
 public:
  // count must be a power of two (kernel rule), at most 32768. `incremental` registers the ring with
  // IOU_PBUF_RING_INC (Linux 6.12; RingFeatures::provided_buffer_ring_incremental): the kernel then consumes
  // a buffer piece by piece, a receive continuing where the last one left it, and flags a completion
  // IORING_CQE_F_BUF_MORE while the buffer still has room. An older kernel refuses it (EINVAL).
  static Result<std::unique_ptr<BufferRing>> create(Ring& ring, uint16_t group_id, unsigned count,
                                                    unsigned buffer_size, bool incremental = false);
  ~BufferRing();
  BufferRing(const BufferRing&) = delete;
  BufferRing& operator=(const BufferRing&) = delete;

  static constexpr std::size_t kReadableAfter = 64;
  static constexpr uint32_t kBufferMore = 1U << 4;  // IORING_CQE_F_BUF_MORE (6.12), newer than liburing 2.3

  [[nodiscard]] uint16_t group_id() const { return group_id_; }
  [[nodiscard]] bool incremental() const { return incremental_; }
  [[nodiscard]] unsigned buffer_size() const { return buffer_size_; }
  [[nodiscard]] unsigned count() const { return count_; }
  // What the ring holds: its buffers (once, however many views) and the page-rounded ring of entries the
  // kernel reads them from.
  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return std::size_t{count_} * buffer_size_ + ring_bytes_;
  }
  // The bytes of buffer `bid` (the full buffer; a CQE's res says how many were filled).
  [[nodiscard]] std::span<char> buffer(uint16_t bid);
  // Gives buffer `bid` back to the kernel.
  void recycle(uint16_t bid);
  // The buffer published after `bid` (the next in ring order): a bundle's next buffer.
  [[nodiscard]] uint16_t next_in_ring(uint16_t bid) const;
  // The bytes of one completion, `bytes` > 0 from buffer `first` on (past its end, in the buffers that
  // follow it in ring order: a bundle), to `take(std::string_view piece)` one buffer at a time, each
  // buffer recycled as soon as `take` returns. When `take` returns false the remaining buffers are
  // recycled unread. Returns the buffers the completion carried.
  template <class Take>
  unsigned take_pieces(uint16_t first, std::size_t bytes, Take&& take) {
    unsigned buffers = 0;
    bool taking = true;
    uint16_t bid = first;
    while (bytes > 0 && buffers < count_) {
      const std::size_t length = bytes < buffer_size_ ? bytes : buffer_size_;
      const uint16_t next = next_in_ring(bid);  // read before the recycle below reuses a slot
      if (taking) taking = take(std::string_view(buffer(bid).data(), length));
      recycle(bid);
      ++buffers;
      bytes -= length;
      bid = next;
    }
    return buffers;
  }
  // Incremental rings: the `bytes` > 0 of one completion (its `cqe_flags`) in buffer `bid`, where the
  // kernel's last receive into that buffer left off, to `take(std::span<char> piece)`; the piece is
  // writable and followed by kReadableAfter readable bytes, and is the caller's until `take` returns.
  // Then the buffer goes back to the kernel if the completion says the kernel is done with it, unless
  // `take` returned true (a `take` returning bool): the caller holds the buffer until release(bid). False,
  // with nothing taken or given back, on a ring that is not incremental or for a completion that claims
  // more than is left of its buffer (a kernel that does not do what this side counts on).
  template <class Take>
  bool take_increment(uint16_t bid, std::size_t bytes, uint32_t cqe_flags, Take&& take) {
    if (!incremental_ || bid >= count_ || filled_[bid] + bytes > buffer_size_) return false;
    const std::span<char> piece(buffer(bid).data() + filled_[bid], bytes);
    if constexpr (std::is_void_v<std::invoke_result_t<Take, std::span<char>>>) {
      take(piece);
    } else if (take(piece) && held_[bid] == 0) {
      held_[bid] = 1;
      ++held_count_;
    }
    settle_increment(bid, bytes, cqe_flags);
    return true;
  }
  // Incremental rings: gives back a buffer held through take_increment() once the kernel is done with it
  // (at once if it already is); nothing for a buffer not held.
  void release(uint16_t bid);
  // Buffers held now (see take_increment), and of them those the kernel is done with: out of the ring.
  [[nodiscard]] unsigned held() const noexcept { return held_count_; }
  [[nodiscard]] unsigned held_out_of_ring() const noexcept { return withheld_; }
  // Incremental rings: `piece` (bytes of this ring, either view) seen where it follows the bytes that end
  // at `previous_end` (a view of the ring too) when it comes next in the ring after them: the piece itself
  // when it starts there, else its view in the ring's other mapping when that one does (a piece at the
  // ring's start after one that ended at the ring's end). When the bytes before ended at the end of the
  // second view, the piece is seen at the start of the second view and `moved_by` says where the same
  // bytes before it lie now (one ring's length back, in the first view): nothing moves, only the address
  // they are read at, so a run of pieces goes round the ring any number of times. A piece that does not
  // come next is seen where it is. Either view is followed by kReadableAfter readable bytes.
  struct Seen {
    std::span<char> piece;
    std::ptrdiff_t moved_by = 0;  // for the address of the bytes before it
  };
  [[nodiscard]] Seen view_after(std::span<char> piece, const char* previous_end) const noexcept;
  // Whether any of the `bytes` ring bytes from `from` (either view, wrapping past the ring's end) lie in
  // buffer `bid`.
  [[nodiscard]] bool overlaps(uint16_t bid, const char* from, std::size_t bytes) const noexcept;
  // Gives back, unread, what one completion (`res`, `cqe_flags`) consumed: nothing without
  // IORING_CQE_F_BUFFER; its one buffer for a single-buffer receive, even one that received nothing; for a
  // bundle as many buffers as its bytes filled, none when it received nothing; on an incremental ring,
  // the buffer once the kernel is done with it, as take_increment() would.
  void give_back(int res, uint32_t cqe_flags, bool bundle);
  // Incremental rings: counts `bytes` more filled in buffer `bid` and gives it back when `cqe_flags` say
  // the kernel is done with it and it is not held (a zero-length completion never gives it back; see
  // above).
  void settle_increment(uint16_t bid, std::size_t bytes, uint32_t cqe_flags);
  // Buffer id carried by a CQE's flags (valid when flags & IORING_CQE_F_BUFFER).
  [[nodiscard]] static uint16_t buffer_id(uint32_t cqe_flags);

 private:
  BufferRing() = default;
  Ring* ring_ = nullptr;
  void* ring_memory_ = nullptr;  // io_uring_buf_ring, mmap'ed
  std::size_t ring_bytes_ = 0;
  char* buffers_ = nullptr;       // count_ * buffer_size_ bytes
  std::size_t mirror_ = 0;        // incremental: the second view's distance from the first (the bytes
                                  // mapped, page-rounded); 0 when the buffers are allocated once
  uint16_t group_id_ = 0;
  unsigned count_ = 0;
  unsigned buffer_size_ = 0;
  unsigned mask_ = 0;
  bool incremental_ = false;
  std::vector<uint32_t> filled_;   // incremental: bytes the kernel has filled of each buffer so far
  std::vector<uint8_t> held_;      // incremental: held by the caller (take_increment, release)
  std::vector<uint8_t> finished_;  // incremental: held, and the kernel is done with it: given back on release
  unsigned held_count_ = 0;        // buffers held
  unsigned withheld_ = 0;          // buffers held and finished
  uint32_t published_ = 0;         // buffers published so far (the ring's tail, as this side counts it)
  std::vector<uint16_t> bid_at_;   // ring slot -> the buffer last published there
  std::vector<uint32_t> slot_of_;  // buffer -> the slot it was last published at
};

}  // namespace ringlab::net
