// arena: the body buffer and the owning models come from a std::pmr::monotonic_buffer_resource that is
// released at the start of every request. Its initial buffer is sized once, at setup, from one real
// request (what that request took from upstream, plus a quarter for slack), so in steady state a
// request takes nothing from the heap: allocation is a pointer bump, freeing is release().
//
// A body larger than the one measured at setup makes the arena go to its upstream (the heap) for
// the rest: that shows in the table's bytes per op, it is not an error.
#include <cstring>
#include <memory>

#include "resource_strategy.hpp"

namespace ringlab::strategies::detail {
namespace {

// Upstream that remembers how many bytes the arena asked for: how big the arena's own buffer must be.
class CountingResource final : public std::pmr::memory_resource {
 public:
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    bytes_ += bytes + alignment;  // room for the arena to align within its buffer
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
  std::size_t bytes_ = 0;
};

class Arena final : public ResourceStrategy {
 public:
  using ResourceStrategy::ResourceStrategy;
  ~Arena() override { drop_objects(); }

  [[nodiscard]] std::optional<std::string> skip_case(const CaseConfig& config) const override {
    return no_fresh_client(config, "arena sizes its buffer from one real request made at setup");
  }
  [[nodiscard]] std::string notes() const override {
    return "arena buffer " + std::to_string(arena_bytes_) + " bytes, sized at setup";
  }

 private:
  Status prepare() override {
    // One request with the arena on a counting upstream: how much one request takes.
    CountingResource counting;
    arena_.emplace(&counting);
    auto measured = [this]() -> Status {
      if (auto ran = before_request(); !ran) return ran;
      auto response = fetch_once(sink());
      if (!response) return std::unexpected(response.error());
      if (auto parsed = deserialize(); !parsed) return fail(label(), describe(parsed.error()));
      return {};
    }();
    drop_objects();  // before the counting upstream goes, whatever happened
    arena_.reset();
    if (!measured) return measured;

    arena_bytes_ = counting.bytes() + counting.bytes() / 4 + 4096;
    memory_ = std::make_unique<std::byte[]>(arena_bytes_);  // zeroed: its pages are touched here, not in run()
    arena_.emplace(memory_.get(), arena_bytes_, std::pmr::new_delete_resource());
    return {};
  }

  Result<std::pmr::memory_resource*> next_resource() override {
    arena_->release();
    return &*arena_;
  }

  void release() override {
    drop_objects();
    arena_.reset();
    memory_.reset();
  }

  std::unique_ptr<std::byte[]> memory_;
  std::size_t arena_bytes_ = 0;
  std::optional<std::pmr::monotonic_buffer_resource> arena_;
};

}  // namespace

std::unique_ptr<Strategy> make_arena(const Recipe& recipe) { return std::make_unique<Arena>(recipe.name); }

}  // namespace ringlab::strategies::detail
