#pragma once
// FixedBuffers: buffers registered with a Ring (io_uring_register_buffers), so the kernel pins and
// maps them once instead of at every operation. Each buffer has kPadding spare bytes after it, so a
// body received into one can be parsed in place by simdjson.
//
// Ownership: FixedBuffers owns the memory and the registration; a Ring has one registration at a time
// (EBUSY otherwise). Destroy it before its Ring. buffer(i) is valid for its lifetime.
#include <memory>
#include <span>

#include "ringlab/net/error.hpp"

namespace ringlab::net {

class Ring;

class FixedBuffers {
 public:
  static Result<std::unique_ptr<FixedBuffers>> create(Ring& ring, unsigned count, std::size_t buffer_size);
  ~FixedBuffers();
  FixedBuffers(const FixedBuffers&) = delete;
  FixedBuffers& operator=(const FixedBuffers&) = delete;

  [[nodiscard]] unsigned count() const { return count_; }
  [[nodiscard]] std::size_t buffer_size() const { return buffer_size_; }
  // Usable bytes of buffer i (padding not included); its index for prep_read_fixed is i.
  [[nodiscard]] std::span<char> buffer(unsigned i);

 private:
  FixedBuffers() = default;
  Ring* ring_ = nullptr;
  char* memory_ = nullptr;
  std::size_t stride_ = 0;
  std::size_t buffer_size_ = 0;
  unsigned count_ = 0;
};

}  // namespace ringlab::net
