#pragma once
// MappedRegion: one stretch of address space into which a TCP stream's next N bytes land contiguously,
// with as many of them as the kernel allows mapped instead of copied (TCP_ZEROCOPY_RECEIVE, Linux 4.18).
//
// How: prepare(socket, N, padding) lays the region out as [whole pages of N: a mapping of the socket]
// [the rest of N and `padding` readable bytes: anonymous memory]. map() then asks the kernel to map the
// receive queue's next pages at an offset of the socket part: each page of a received segment that is a
// whole page of its own is inserted into the page tables there, and no byte is copied. Bytes the kernel
// cannot map (less than a page in the queue, a segment that is not whole pages) are reported as a skip
// hint; the caller receives those by copy, into memory made writable by copy_from(), so the stream stays
// contiguous. What maps depends on the sender: on loopback, a zero-copy send of page-aligned memory
// whose segments are whole pages (the client's TCP_MAXSEG at 4096 + 12) maps; a plain send never does.
//
// Reuse: the layout of the last prepare() is kept while N, the padding and the slot count stay the same,
// so a kept-alive connection that receives bodies of one size makes no mmap per response. The region has
// `slots` such layouts side by side, used in turn (next_slot()): with one slot the kernel unmaps the
// last body's pages as it maps the next ones over them, a TLB flush per response; with K slots a body's
// pages stay mapped until its slot comes round again, and when the first slot does, one madvise
// (MADV_DONTNEED) unmaps the K bodies' pages at once, so K responses share one TLB flush and each map()
// into a slot so released tells the kernel that there is nothing to unmap (TCP_RECEIVE_ZEROCOPY_FLAG_-
// TLB_CLEAN_HINT). The cost is memory: K bodies stay mapped. Views into a slot's body live until that slot
// is used again (K - 1 more responses). A different N, a different socket or a copy_from() lays the
// region out again (two mmap calls per slot). The reserved address space grows to the largest layout
// seen, never shrinks, and goes with the object.
//
// Errors: net::Error naming the system call ("mmap", "getsockopt TCP_ZEROCOPY_RECEIVE") and errno; a
// kernel or socket that cannot be mapped gives ENODEV or EINVAL at the first prepare() (supported()
// asks the kernel beforehand). Threads: one at a time.
#include <cstddef>
#include <cstdint>

#include "ringlab/net/error.hpp"

namespace ringlab::net {

class MappedRegion {
 public:
  MappedRegion() = default;
  ~MappedRegion();
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;

  // Whether this kernel maps a TCP socket (mmap on a fresh TCP socket succeeds); the error says why not.
  [[nodiscard]] static Status supported();

  // The next `bytes` bytes of `socket`'s stream will land at data(); `padding` readable bytes follow
  // them; `slots` (at least 1) bodies of that size are laid out side by side. Views into what the region
  // received before end here when the layout changes.
  Status prepare(int socket, std::size_t bytes, std::size_t padding, std::size_t slots = 1);
  // Unmaps the whole region (views into it end). A mapping of a socket holds the socket open after its
  // descriptor is closed: call this when the connection closes, so that it closes, and so that the next
  // prepare() maps the next socket, whatever descriptor number it gets.
  void reset() noexcept { release(); }
  // Call before each body after the first: moves data() to the next slot. Coming round to the first slot
  // of several, unmaps every slot's pages (one madvise): views into any earlier body end. With one slot,
  // the next map() has the kernel unmap the last body's pages first.
  Status next_slot();

  struct Mapped {
    std::size_t bytes = 0;   // mapped at the offset, a multiple of the page size
    std::size_t queued = 0;  // bytes in the receive queue after those mapped (the kernel's inq)
    // The peer closed and nothing is queued: the stream has ended (the kernel answers EIO then, which is
    // not an error of the call), so nothing more will map; receiving by copy reads the end of the stream.
    bool stream_ended = false;
  };
  // Maps at most `bytes` (a multiple of the page size) of the stream at data() + offset, which must be a
  // multiple of the page size within the socket part (mappable_bytes()). Into a slot released by
  // next_slot() and not mapped into since, the kernel is told there is nothing to unmap first. Nothing
  // mapped with a page or more queued means a segment that is not whole pages: the kernel's answer for a
  // queue that grew during the call is asked again here (one more getsockopt), not passed on. The end of
  // the stream is an answer (Mapped::stream_ended), not an error.
  Result<Mapped> map(std::size_t offset, std::size_t bytes);
  // Makes [offset, the end of the region) writable anonymous memory, so that the stream's bytes from
  // offset on can be received there by copy (offset a multiple of the page size).
  Status copy_from(std::size_t offset);

  [[nodiscard]] char* data() const noexcept { return base_ + slot_ * slot_bytes_; }
  // The bytes from data() that map() may map: the whole pages of the last prepare()'s bytes, less what
  // copy_from() took.
  [[nodiscard]] std::size_t mappable_bytes() const noexcept { return socket_part_; }
  // The address space the region holds laid out now, every slot (HeldMemory: the mapped pages and the tails).
  [[nodiscard]] std::size_t laid_out_bytes() const noexcept { return laid_out_; }
  // mmap, madvise and getsockopt calls made so far (cumulative).
  [[nodiscard]] uint64_t syscalls() const noexcept { return syscalls_; }
  [[nodiscard]] static std::size_t page_bytes() noexcept;

 private:
  Status reserve(std::size_t bytes);
  void release() noexcept;

  char* base_ = nullptr;
  std::size_t reserved_ = 0;
  int socket_ = -1;
  std::size_t bytes_ = 0;        // the last prepare()'s
  std::size_t padding_ = 0;
  std::size_t slots_ = 1;
  std::size_t slot_ = 0;           // data()'s
  std::size_t slot_bytes_ = 0;     // one slot's socket part and anonymous tail
  std::size_t whole_bytes_ = 0;    // one slot's socket part as laid out
  std::size_t socket_part_ = 0;    // bytes from data() mapped from the socket (less after copy_from())
  std::size_t laid_out_ = 0;       // bytes from base_ laid out, every slot
  bool layout_valid_ = false;
  bool slot_clean_ = false;        // no body mapped into data()'s slot since it was laid out or released
  uint64_t syscalls_ = 0;
};

}  // namespace ringlab::net
