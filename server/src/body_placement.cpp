#include "body_placement.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "ringlab/base/errno_text.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::server {
namespace {

constexpr std::size_t kAlign = 64;

std::size_t aligned(std::size_t bytes) noexcept { return (bytes + kAlign - 1) & ~(kAlign - 1); }

}  // namespace

Result<std::shared_ptr<FixedArea>> FixedArea::create(net::Ring& ring, std::size_t bytes) {
  std::shared_ptr<FixedArea> area(new FixedArea());
  bytes = aligned(bytes);
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    return std::unexpected(Error{base::errno_message("mmap of the fixed body area", {}, errno)});
  }
  area->memory_ = static_cast<char*>(memory);
  area->size_ = bytes;
  iovec whole{memory, bytes};
  if (int rc = io_uring_register_buffers(ring.raw(), &whole, 1); rc < 0) {
    return std::unexpected(Error{base::errno_message("io_uring_register_buffers", {}, -rc) +
                                 " (--fixed-body-bytes " + std::to_string(bytes) +
                                 ": lower it, or raise RLIMIT_MEMLOCK)"});
  }
  area->free_.emplace(0, bytes);
  area->free_bytes_ = bytes;
  return area;
}

FixedArea::~FixedArea() {
  if (memory_ != nullptr) ::munmap(memory_, size_);
}

bool FixedArea::place(Body& body) {
  const std::size_t length = aligned(body.bytes.size());
  if (length == 0) return false;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < length) continue;
    const std::size_t offset = it->first;
    const std::size_t rest = it->second - length;
    free_.erase(it);
    if (rest > 0) free_.emplace(offset + length, rest);
    free_bytes_ -= length;
    std::memcpy(memory_ + offset, body.bytes.data(), body.bytes.size());
    body.placement.fixed = memory_ + offset;
    body.placement.buf_index = 0;
    // A null pointer with a deleter: the deleter runs when the last copy goes.
    body.placement.keep = std::shared_ptr<const void>(
        nullptr, [area = shared_from_this(), offset, length](const void*) { area->release(offset, length); });
    return true;
  }
  return false;
}

void FixedArea::release(std::size_t offset, std::size_t length) noexcept {
  free_bytes_ += length;
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && offset + length == next->first) {
    length += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == offset) {
      previous->second += length;
      return;
    }
  }
  free_.emplace_hint(next, offset, length);
}

bool place_in_file(Body& body) {
  const char* dir = std::getenv("TMPDIR");
  if (dir == nullptr || *dir == '\0') dir = "/tmp";
  int fd = ::open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    // A file system without O_TMPFILE: a named file, unlinked at once.
    std::string path = std::string(dir) + "/ringlab-body-XXXXXX";
    fd = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd < 0) return false;
    ::unlink(path.c_str());
  }
  std::size_t written = 0;
  while (written < body.bytes.size()) {
    const ssize_t n = ::pwrite(fd, body.bytes.data() + written, body.bytes.size() - written,
                               static_cast<off_t>(written));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    written += static_cast<std::size_t>(n);
  }
  body.placement.file_fd = fd;
  body.placement.keep = std::shared_ptr<const void>(nullptr, [fd](const void*) { ::close(fd); });
  return true;
}

}  // namespace ringlab::server
