#pragma once
// PaddedBuffer: one contiguous, owning byte buffer with kPadding spare bytes after its capacity.
//
// Why its own type: simdjson parses in place only if SIMDJSON_PADDING readable bytes follow the
// input; a receive buffer without them turns "zero-copy" into a hidden copy. json/ static_asserts
// that kPadding >= SIMDJSON_PADDING, so base/ needs no JSON header. It lives in base/ because both
// net/ (fixed buffers) and json/ (the parsers) use it, and json/ must not depend on net/.
//
// Ownership: the buffer owns its memory, taken from a std::pmr::memory_resource (default: new/delete)
// that must outlive it. Move-only. Views (data(), span()) live until the next reserve(), move or
// destruction; resize() within capacity() never moves the bytes.
#include <cstddef>
#include <memory_resource>
#include <span>
#include <string_view>

namespace ringlab::base {

inline constexpr std::size_t kPadding = 64;

class PaddedBuffer {
 public:
  explicit PaddedBuffer(std::pmr::memory_resource* resource = std::pmr::new_delete_resource()) noexcept
      : resource_(resource) {}
  PaddedBuffer(std::size_t capacity, std::pmr::memory_resource* resource = std::pmr::new_delete_resource());
  PaddedBuffer(PaddedBuffer&& other) noexcept;
  PaddedBuffer& operator=(PaddedBuffer&& other) noexcept;
  PaddedBuffer(const PaddedBuffer&) = delete;
  PaddedBuffer& operator=(const PaddedBuffer&) = delete;
  ~PaddedBuffer();

  // Grows capacity to at least `capacity` (copying the current bytes); never shrinks.
  void reserve(std::size_t capacity);
  // Sets size(); grows capacity by doubling when needed. New bytes are uninitialised.
  void resize(std::size_t size);
  void clear() noexcept { size_ = 0; }
  // Appends bytes, doubling capacity when needed (the copying path of buffered strategies).
  void append(std::string_view bytes);

  [[nodiscard]] char* data() noexcept { return data_; }
  [[nodiscard]] const char* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::string_view view() const noexcept { return {data_, size_}; }
  // The writable part beyond size(): where a receive should land next.
  [[nodiscard]] std::span<char> spare() noexcept { return {data_ + size_, capacity_ - size_}; }
  // Marks n bytes of spare() as received.
  void commit(std::size_t n) noexcept { size_ += n; }
  [[nodiscard]] std::pmr::memory_resource* resource() const noexcept { return resource_; }

 private:
  std::pmr::memory_resource* resource_;
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;  // usable bytes; the allocation is capacity_ + kPadding
};

}  // namespace ringlab::base
