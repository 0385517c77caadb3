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

Status MappedRegion::prepare(int socket, std::size_t bytes, std::size_t padding) {
  if (layout_valid_ && socket == socket_ && bytes == bytes_ && padding == padding_) return {};
  const std::size_t page = page_bytes();
  const std::size_t whole = bytes / page * page;
  const std::size_t tail = round_up(bytes - whole + padding, page);
  layout_valid_ = false;
  if (auto reserved = reserve(whole + tail); !reserved) return reserved;
  if (whole > 0) {
    ++syscalls_;
    void* at = ::mmap(base_, whole, PROT_READ, MAP_SHARED | MAP_FIXED, socket, 0);
    if (at == MAP_FAILED) return fail("mmap of the socket", errno);
  }
  ++syscalls_;
  void* at = ::mmap(base_ + whole, tail, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) return fail("mmap of the mapped region's tail", errno);
  // What a larger layout before left mapped beyond this one stays: it is unreachable through data() and
  // goes with the reservation.
  socket_ = socket;
  bytes_ = bytes;
  padding_ = padding;
  socket_part_ = whole;
  laid_out_ = whole + tail;
  layout_valid_ = true;
  return {};
}

Result<MappedRegion::Mapped> MappedRegion::map(std::size_t offset, std::size_t bytes) {
  tcp_zerocopy_receive receive{};
  receive.address = reinterpret_cast<uint64_t>(base_ + offset);
  receive.length = static_cast<uint32_t>(bytes);
  socklen_t length = sizeof(receive);
  ++syscalls_;
  if (::getsockopt(socket_, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &receive, &length) != 0) {
    return fail("getsockopt TCP_ZEROCOPY_RECEIVE", errno);
  }
  if (receive.err != 0) return fail("getsockopt TCP_ZEROCOPY_RECEIVE", -receive.err);
  return Mapped{.bytes = receive.length, .skip = receive.recv_skip_hint, .queued = receive.inq};
}

Status MappedRegion::copy_from(std::size_t offset) {
  if (offset >= socket_part_) return {};
  ++syscalls_;
  void* at = ::mmap(base_ + offset, socket_part_ - offset, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) return fail("mmap of the mapped region's copied part", errno);
  socket_part_ = offset;
  layout_valid_ = false;  // the next prepare() maps the socket over it again
  return {};
}

}  // namespace ringlab::net
