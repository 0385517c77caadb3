#pragma once
// A memory resource that counts the allocations passing through it to new/delete, so a json test can
// tell which resource a record's strings were allocated from, and whether a parse allocated at all.
// Threads: one at a time (the count is not atomic).
#include <cstddef>
#include <memory_resource>

namespace ringlab::testing {

class CountingResource final : public std::pmr::memory_resource {
 public:
  std::size_t allocations = 0;

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    ++allocations;
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const memory_resource& other) const noexcept override { return this == &other; }
};

}  // namespace ringlab::testing
