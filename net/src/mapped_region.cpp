#include "ringlab/net/mapped_region.hpp"

#include <linux/tcp.h>  // struct tcp_zerocopy_receive, TCP_ZEROCOPY_RECEIVE (Linux 4.18; in 6.1's headers)
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "ringlab/net/socket.hpp"

namespace ringlab::net {
namespace {

std::size_t round_up(std::size_t bytes, std::size_t unit) noexcept { return (bytes + unit - 1) / unit * unit; }

}  // namespace

std::size_t MappedRegion::page_bytes() noexcept {
  static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

Status MappedRegion::supported() {
  Fd probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe.valid()) return fail("socket", errno);
  void* at = ::mmap(nullptr, page_bytes(), PROT_READ, MAP_SHARED, probe.get(), 0);
  if (at == MAP_FAILED) return fail("mmap of a TCP socket", errno);
  ::munmap(at, page_bytes());
  return {};
}

MappedRegion::~MappedRegion() { release(); }

void MappedRegion::release() noexcept {
  if (base_ != nullptr) ::munmap(base_, reserved_);
  base_ = nullptr;
  reserved_ = 0;
  layout_valid_ = false;
  socket_part_ = laid_out_ = 0;
}

Status MappedRegion::reserve(std::size_t bytes) {
  if (bytes <= reserved_) return {};
  release();
  // Address space only: PROT_NONE, no swap reserved. prepare() maps over it with MAP_FIXED.
  ++syscalls_;
  void* at = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (at == MAP_FAILED) return fail("mmap of the mapped region's address space", errno);
  base_ = static_cast<char*>(at);
  reserved_ = bytes;
  return {};
}

Status MappedRegion::prepare(int socket, std::size_t bytes, std::size_t padding, std::size_t slots) {
  slots = slots == 0 ? 1 : slots;
  if (layout_valid_ && socket == socket_ && bytes == bytes_ && padding == padding_ && slots == slots_) return {};
  const std::size_t page = page_bytes();
  const std::size_t whole = bytes / page * page;
  const std::size_t tail = round_up(bytes - whole + padding, page);
  layout_valid_ = false;
  if (auto reserved = reserve((whole + tail) * slots); !reserved) return reserved;
  for (std::size_t i = 0; i < slots; ++i) {
    char* slot = base_ + i * (whole + tail);
    if (whole > 0) {
      ++syscalls_;
      void* at = ::mmap(slot, whole, PROT_READ, MAP_SHARED | MAP_FIXED, socket, 0);
      if (at == MAP_FAILED) return fail("mmap of the socket", errno);
    }
    ++syscalls_;
    void* at = ::mmap(slot + whole, tail, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) return fail("mmap of the mapped region's tail", errno);
  }
  // What a larger layout before left mapped beyond this one stays: it is unreachable through data() and
  // goes with the reservation.
  socket_ = socket;
  bytes_ = bytes;
  padding_ = padding;
  slots_ = slots;
  slot_ = 0;
  slot_bytes_ = whole + tail;
  whole_bytes_ = socket_part_ = whole;
  laid_out_ = (whole + tail) * slots;
  layout_valid_ = true;
  slot_clean_ = true;  // freshly mapped: no page in it
  return {};
}

Status MappedRegion::next_slot() {
  if (!layout_valid_) return {};
  if (slots_ == 1) {
    slot_clean_ = false;  // the last body's pages are where the next one goes: the kernel unmaps them first
    return {};
  }
  slot_ = (slot_ + 1) % slots_;
  if (slot_ == 0) {
    // Every slot's pages at once: one TLB flush for the K bodies.
    ++syscalls_;
    if (::madvise(base_, laid_out_, MADV_DONTNEED) != 0) return fail("madvise MADV_DONTNEED of the mapped region", errno);
    slot_clean_ = true;
  } else {
    slot_clean_ = true;  // slots are used in turn: this one has not been mapped into since the release
  }
  return {};
}

Result<MappedRegion::Mapped> MappedRegion::map(std::size_t offset, std::size_t bytes) {
  const std::size_t page = page_bytes();
  for (int call = 0;; ++call) {
    tcp_zerocopy_receive receive{};
    receive.address = reinterpret_cast<uint64_t>(data() + offset);
    receive.length = static_cast<uint32_t>(bytes);
    if (slot_clean_) receive.flags = TCP_RECEIVE_ZEROCOPY_FLAG_TLB_CLEAN_HINT;
    socklen_t length = sizeof(receive);
    ++syscalls_;
    if (::getsockopt(socket_, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &receive, &length) != 0) {
      // tcp_zerocopy_receive's answer for an empty queue after the peer's FIN (SOCK_DONE): the stream ended.
      if (errno == EIO) return Mapped{.bytes = 0, .queued = 0, .stream_ended = true};
      return fail("getsockopt TCP_ZEROCOPY_RECEIVE", errno);
    }
    if (receive.err != 0) return fail("getsockopt TCP_ZEROCOPY_RECEIVE", -receive.err);
    // The kernel decides from the queue as it looks (less than a page: nothing mapped, and the skip hint is what
    // it saw) but reports inq as it returns. Nothing mapped, a skip under a page and a page or more queued: the
    // rest arrived during the call, so ask again, once. A second such answer is a segment that is not whole pages.
    if (call == 0 && receive.length == 0 && receive.recv_skip_hint < page && receive.inq >= page) continue;
    return Mapped{.bytes = receive.length, .queued = receive.inq};
  }
}

Status MappedRegion::copy_from(std::size_t offset) {
  if (offset >= socket_part_) return {};
  ++syscalls_;
  void* at = ::mmap(data() + offset, socket_part_ - offset, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) return fail("mmap of the mapped region's copied part", errno);
  socket_part_ = offset;
  layout_valid_ = false;  // the next prepare() maps the socket over it again
  return {};
}

}  // namespace ringlab::net
