#include "ringlab/base/padded_buffer.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace ringlab::base {
namespace {

// Cache-line alignment: simdjson loads 64-byte blocks, and an aligned start keeps them in one line.
constexpr std::size_t kAlignment = 64;

}  // namespace

PaddedBuffer::PaddedBuffer(std::size_t capacity, std::pmr::memory_resource* resource) : resource_(resource) {
  reserve(capacity);
}

PaddedBuffer::PaddedBuffer(PaddedBuffer&& other) noexcept
    : resource_(other.resource_),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

PaddedBuffer& PaddedBuffer::operator=(PaddedBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) resource_->deallocate(data_, capacity_ + kPadding, kAlignment);
    // The memory belongs to the resource it came from: that resource comes along with it.
    resource_ = other.resource_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

PaddedBuffer::~PaddedBuffer() {
  if (data_ != nullptr) resource_->deallocate(data_, capacity_ + kPadding, kAlignment);
}

void PaddedBuffer::reserve(std::size_t capacity) {
  if (capacity <= capacity_ && data_ != nullptr) return;
  auto* fresh = static_cast<char*>(resource_->allocate(capacity + kPadding, kAlignment));
  if (size_ > 0) std::memcpy(fresh, data_, size_);
  // The padding is read (by SIMD loads past the end) but never meant as data: zero it so those reads
  // are deterministic.
  std::memset(fresh + capacity, 0, kPadding);
  if (data_ != nullptr) resource_->deallocate(data_, capacity_ + kPadding, kAlignment);
  data_ = fresh;
  capacity_ = capacity;
}

void PaddedBuffer::resize(std::size_t size) {
  if (size > capacity_) reserve(std::max(size, capacity_ * 2));
  size_ = size;
}

void PaddedBuffer::append(std::string_view bytes) {
  if (bytes.empty()) return;
  const std::size_t old_size = size_;
  resize(size_ + bytes.size());
  std::memcpy(data_ + old_size, bytes.data(), bytes.size());
}

}  // namespace ringlab::base
