#include "ringlab/net/buffer_ring.hpp"

#include <liburing.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "ringlab/net/ring.hpp"

// Newer than liburing 2.3's header: a flag of io_uring_buf_reg (Linux 6.12), stable kernel ABI.
#ifndef IOU_PBUF_RING_INC
#define IOU_PBUF_RING_INC 2
#endif

namespace ringlab::net {
namespace {

constexpr std::size_t kPageSize = 4096;
constexpr unsigned kMaxBuffers = 32768;

std::size_t page_rounded(std::size_t bytes) { return (bytes + kPageSize - 1) / kPageSize * kPageSize; }

// `bytes` of memory mapped twice, back to back, and a page of readable slack after the second view (at
// least kReadableAfter): the first view's address and the distance between the views. Resident from the
// start (MAP_POPULATE on both views), so that no receive faults a page in inside whatever is measured.
Result<std::pair<char*, std::size_t>> map_twice(std::size_t bytes) {
  const std::size_t view = page_rounded(bytes);
  const std::size_t whole = 2 * view + kPageSize;
  const int fd = ::memfd_create("ringlab-buffer-ring", MFD_CLOEXEC);
  if (fd < 0) return fail("memfd_create (buffer ring)", errno);
  if (::ftruncate(fd, static_cast<off_t>(view)) != 0) {
    const int code = errno;
    ::close(fd);
    return fail("ftruncate (buffer ring)", code);
  }
  void* area = ::mmap(nullptr, whole, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (area == MAP_FAILED) {
    const int code = errno;
    ::close(fd);
    return fail("mmap (buffer ring, reserve)", code);
  }
  char* first = static_cast<char*>(area);
  const int shared = MAP_SHARED | MAP_FIXED | MAP_POPULATE;
  const bool mapped = ::mmap(first, view, PROT_READ | PROT_WRITE, shared, fd, 0) != MAP_FAILED &&
                      ::mmap(first + view, view, PROT_READ | PROT_WRITE, shared, fd, 0) != MAP_FAILED &&
                      ::mmap(first + 2 * view, kPageSize, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, -1, 0) != MAP_FAILED;
  const int code = errno;
  ::close(fd);  // the mappings keep the memory
  if (!mapped) {
    ::munmap(area, whole);
    return fail("mmap (buffer ring, views)", code);
  }
  return std::pair{first, view};
}

}  // namespace

Result<std::unique_ptr<BufferRing>> BufferRing::create(Ring& ring, uint16_t group_id, unsigned count,
                                                       unsigned buffer_size, bool incremental) {
  if (count == 0 || count > kMaxBuffers || (count & (count - 1)) != 0 || buffer_size == 0) {
    return fail("io_uring_register_buf_ring (count must be a power of two <= 32768)", EINVAL);
  }
  std::unique_ptr<BufferRing> buffers(new BufferRing());
  buffers->group_id_ = group_id;
  buffers->count_ = count;
  buffers->buffer_size_ = buffer_size;
  buffers->incremental_ = incremental;
  if (incremental) {
    buffers->filled_.assign(count, 0);
    buffers->held_.assign(count, 0);
    buffers->finished_.assign(count, 0);
  }
  buffers->mask_ = static_cast<unsigned>(io_uring_buf_ring_mask(count));

  // The kernel wants the ring page aligned (it pins those pages); mmap gives exactly that.
  const std::size_t ring_bytes = (sizeof(io_uring_buf) * count + kPageSize - 1) / kPageSize * kPageSize;
  void* memory = ::mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (memory == MAP_FAILED) return fail("mmap (buffer ring)", errno);
  buffers->ring_memory_ = memory;
  buffers->ring_bytes_ = ring_bytes;

  const std::size_t total = std::size_t{count} * buffer_size;
  if (incremental) {
    if (auto mapped = map_twice(total); !mapped) {
      return std::unexpected(mapped.error());
    } else {
      buffers->buffers_ = mapped->first;
      buffers->mirror_ = mapped->second;
    }
  } else {
    buffers->buffers_ =
        static_cast<char*>(::operator new(total + kReadableAfter, std::align_val_t{kPageSize}, std::nothrow));
    if (buffers->buffers_ == nullptr) return fail("io_uring_register_buf_ring (allocation)", ENOMEM);
    // Touched now, so the pages are resident from the start: the kernel fills these buffers, and a
    // first fill would otherwise fault inside whatever is being measured (and show up in a server's
    // RSS as if the first busy connection had taken it).
    std::memset(buffers->buffers_, 0, total + kReadableAfter);
  }

  auto* br = static_cast<io_uring_buf_ring*>(memory);
  io_uring_buf_ring_init(br);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uint64_t>(memory);
  reg.ring_entries = count;
  reg.bgid = group_id;
  reg.pad = incremental ? IOU_PBUF_RING_INC : 0;  // the 6.1 header's `pad` is the flags field since 6.4
  const int rc = io_uring_register_buf_ring(ring.raw(), &reg, 0);
  if (rc < 0) return fail("io_uring_register_buf_ring", -rc);
  buffers->ring_ = &ring;

  for (unsigned i = 0; i < count; ++i) {
    io_uring_buf_ring_add(br, buffers->buffers_ + std::size_t{i} * buffer_size, buffer_size,
                          static_cast<unsigned short>(i), static_cast<int>(buffers->mask_), static_cast<int>(i));
  }
  io_uring_buf_ring_advance(br, static_cast<int>(count));
  buffers->published_ = count;
  buffers->bid_at_.resize(count);
  buffers->slot_of_.resize(count);
  for (unsigned i = 0; i < count; ++i) {
    buffers->bid_at_[i] = static_cast<uint16_t>(i);
    buffers->slot_of_[i] = i;
  }
  return buffers;
}

BufferRing::~BufferRing() {
  if (ring_ != nullptr) io_uring_unregister_buf_ring(ring_->raw(), group_id_);
  if (ring_memory_ != nullptr) ::munmap(ring_memory_, ring_bytes_);
  if (mirror_ != 0) {
    ::munmap(buffers_, 2 * mirror_ + kPageSize);
  } else if (buffers_ != nullptr) {
    ::operator delete(buffers_, std::align_val_t{kPageSize});
  }
}

std::span<char> BufferRing::buffer(uint16_t bid) {
  if (bid >= count_) return {};
  return {buffers_ + std::size_t{bid} * buffer_size_, buffer_size_};
}

void BufferRing::recycle(uint16_t bid) {
  if (bid >= count_) return;
  auto* br = static_cast<io_uring_buf_ring*>(ring_memory_);
  io_uring_buf_ring_add(br, buffers_ + std::size_t{bid} * buffer_size_, buffer_size_, bid,
                        static_cast<int>(mask_), 0);
  io_uring_buf_ring_advance(br, 1);
  const uint32_t slot = published_ & mask_;  // the slot the add above wrote: the ring's tail
  bid_at_[slot] = bid;
  slot_of_[bid] = slot;
  ++published_;
}

void BufferRing::give_back(int res, uint32_t cqe_flags, bool bundle) {
  if ((cqe_flags & IORING_CQE_F_BUFFER) == 0) return;
  const uint16_t first = buffer_id(cqe_flags);
  if (incremental_) {
    if (res > 0) settle_increment(first, static_cast<std::size_t>(res), cqe_flags);
  } else if (!bundle) {
    recycle(first);
  } else if (res > 0) {
    take_pieces(first, static_cast<std::size_t>(res), [](std::string_view) { return false; });
  }
}

void BufferRing::settle_increment(uint16_t bid, std::size_t bytes, uint32_t cqe_flags) {
  if (!incremental_ || bid >= count_ || bytes == 0) return;
  if ((cqe_flags & kBufferMore) != 0) {
    filled_[bid] += static_cast<uint32_t>(bytes);
    return;
  }
  filled_[bid] = 0;
  if (held_[bid] != 0) {
    finished_[bid] = 1;
    ++withheld_;
    return;
  }
  recycle(bid);
}

void BufferRing::release(uint16_t bid) {
  if (!incremental_ || bid >= count_ || held_[bid] == 0) return;
  held_[bid] = 0;
  --held_count_;
  if (finished_[bid] == 0) return;
  finished_[bid] = 0;
  --withheld_;
  recycle(bid);
}

BufferRing::Seen BufferRing::view_after(std::span<char> piece, const char* previous_end) const noexcept {
  if (mirror_ == 0 || piece.data() == previous_end) return {piece};
  char* first = piece.data() < buffers_ + mirror_ ? piece.data() : piece.data() - mirror_;  // in the first view
  const auto span = static_cast<std::ptrdiff_t>(mirror_);
  if (first == previous_end) return {{first, piece.size()}};
  if (first + span == previous_end) return {{first + span, piece.size()}};
  // The bytes before ended at the second view's end: they are also the first view's last bytes.
  if (first + 2 * span == previous_end) return {{first + span, piece.size()}, -span};
  return {piece};
}

bool BufferRing::overlaps(uint16_t bid, const char* from, std::size_t bytes) const noexcept {
  if (bid >= count_ || bytes == 0 || from < buffers_) return false;
  auto offset = static_cast<std::size_t>(from - buffers_);
  const std::size_t span = mirror_ != 0 ? mirror_ : std::size_t{count_} * buffer_size_;
  if (offset >= span) offset -= span;
  const std::size_t begin = std::size_t{bid} * buffer_size_;
  const std::size_t end = begin + buffer_size_;
  // The bytes [offset, offset + bytes), wrapped at the ring's end into [0, ...).
  const std::size_t first_end = std::min(offset + bytes, span);
  if (offset < end && begin < first_end) return true;
  const std::size_t wrapped = offset + bytes > span ? offset + bytes - span : 0;
  return begin < wrapped;
}

uint16_t BufferRing::next_in_ring(uint16_t bid) const {
  if (bid >= count_) return 0;
  return bid_at_[(slot_of_[bid] + 1) & mask_];
}

uint16_t BufferRing::buffer_id(uint32_t cqe_flags) {
  return static_cast<uint16_t>(cqe_flags >> IORING_CQE_BUFFER_SHIFT);
}

}  // namespace ringlab::net
