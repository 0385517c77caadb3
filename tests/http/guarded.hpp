#pragma once
// Test inputs placed flush against a PROT_NONE page (as picohttpparser's tests do): a parser that
// reads one byte past the end of what it was given faults at once instead of reading garbage.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace ringlab::http::test {

class Guarded {
 public:
  explicit Guarded(std::string_view bytes) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t data_pages = (bytes.size() + page - 1) / page * page;
    size_ = data_pages + page;
    void* base = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) throw std::runtime_error("mmap of a guarded test buffer failed");
    base_ = static_cast<char*>(base);
    if (::mprotect(base_ + data_pages, page, PROT_NONE) != 0) {
      ::munmap(base_, size_);
      throw std::runtime_error("mprotect of a guard page failed");
    }
    data_ = base_ + data_pages - bytes.size();
    if (!bytes.empty()) std::memcpy(data_, bytes.data(), bytes.size());
    length_ = bytes.size();
  }
  ~Guarded() {
    if (base_ != nullptr) ::munmap(base_, size_);
  }
  Guarded(Guarded&& other) noexcept
      : base_(std::exchange(other.base_, nullptr)), size_(other.size_), data_(other.data_), length_(other.length_) {}
  Guarded& operator=(Guarded&&) = delete;
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;

  [[nodiscard]] std::string_view view() const noexcept { return {data_, length_}; }
  // For tests that overwrite what they fed, to prove the parser kept no view into it.
  [[nodiscard]] char* data() noexcept { return data_; }

 private:
  char* base_ = nullptr;
  std::size_t size_ = 0;
  char* data_ = nullptr;
  std::size_t length_ = 0;
};

}  // namespace ringlab::http::test
