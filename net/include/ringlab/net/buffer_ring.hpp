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
#include <cstdint>
#include <memory>
#include <span>

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

  [[nodiscard]] uint16_t group_id() const { return group_id_; }
  [[nodiscard]] unsigned buffer_size() const { return buffer_size_; }
  [[nodiscard]] unsigned count() const { return count_; }
  // The bytes of buffer `bid` (the full buffer; a CQE's res says how many were filled).
  [[nodiscard]] std::span<char> buffer(uint16_t bid);
  // Gives buffer `bid` back to the kernel.
  void recycle(uint16_t bid);
  // Buffer id carried by a CQE's flags (valid when flags & IORING_CQE_F_BUFFER).
  [[nodiscard]] static uint16_t buffer_id(uint32_t cqe_flags);

 private:
  BufferRing() = default;
  Ring* ring_ = nullptr;
  void* ring_memory_ = nullptr;  // io_uring_buf_ring, mmap'ed
  std::size_t ring_bytes_ = 0;
  char* buffers_ = nullptr;       // count_ * buffer_size_ bytes
  uint16_t group_id_ = 0;
  unsigned count_ = 0;
  unsigned buffer_size_ = 0;
  unsigned mask_ = 0;
};

}  // namespace ringlab::net
