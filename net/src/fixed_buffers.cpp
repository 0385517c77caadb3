#include "ringlab/net/fixed_buffers.hpp"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::net {
namespace {

// Page alignment: the kernel pins whole pages, and a buffer that starts on one wastes none.
constexpr std::size_t kPageSize = 4096;
constexpr std::size_t kStrideAlignment = 64;

}  // namespace

Result<std::unique_ptr<FixedBuffers>> FixedBuffers::create(Ring& ring, unsigned count, std::size_t buffer_size) {
  if (count == 0 || buffer_size == 0) return fail("io_uring_register_buffers", EINVAL);
  std::unique_ptr<FixedBuffers> buffers(new FixedBuffers());
  buffers->stride_ = (buffer_size + base::kPadding + kStrideAlignment - 1) / kStrideAlignment * kStrideAlignment;
  buffers->buffer_size_ = buffer_size;
  buffers->count_ = count;
  const std::size_t total = buffers->stride_ * count;
  buffers->memory_ = static_cast<char*>(::operator new(total, std::align_val_t{kPageSize}, std::nothrow));
  if (buffers->memory_ == nullptr) return fail("io_uring_register_buffers (allocation)", ENOMEM);
  // Padding after each buffer must be readable and deterministic; touching the pages also keeps
  // first-touch page faults out of the first measured receive.
  std::memset(buffers->memory_, 0, total);

  // The iovecs are read once by the kernel during registration; a temporary vector is fine here.
  std::vector<iovec> iovecs(count);
  for (unsigned i = 0; i < count; ++i) {
    iovecs[i] = iovec{buffers->memory_ + i * buffers->stride_, buffer_size};
  }
  const int rc = io_uring_register_buffers(ring.raw(), iovecs.data(), count);
  if (rc < 0) return fail("io_uring_register_buffers", -rc);
  buffers->ring_ = &ring;
  return buffers;
}

FixedBuffers::~FixedBuffers() {
  if (ring_ != nullptr) io_uring_unregister_buffers(ring_->raw());
  if (memory_ != nullptr) ::operator delete(memory_, std::align_val_t{kPageSize});
}

std::span<char> FixedBuffers::buffer(unsigned i) {
  if (i >= count_) return {};
  return {memory_ + i * stride_, buffer_size_};
}

}  // namespace ringlab::net
