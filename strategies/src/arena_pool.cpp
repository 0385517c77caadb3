// arena_pool: the body buffer and the owning models come from a std::pmr::unsynchronized_pool_resource;
// each request makes them and frees them (back into the pool, which keeps the memory for the next
// request). Unlike arena, freeing is per object; unlike the global heap, nothing is shared or locked.
//
// The pool's largest block is set at setup from one real body (Content-Length + padding, doubled for
// slack), so the body buffer too is served from a pool rather than passed through to the heap.
#include <algorithm>

#include "resource_strategy.hpp"
#include "ringlab/base/padded_buffer.hpp"

namespace ringlab::strategies::detail {
namespace {

class ArenaPool final : public ResourceStrategy {
 public:
  using ResourceStrategy::ResourceStrategy;
  ~ArenaPool() override { drop_objects(); }

  [[nodiscard]] std::optional<std::string> skip_case(const CaseConfig& config) const override {
    return no_fresh_client(config, "arena_pool sizes its largest block from one real body fetched at setup");
  }
  [[nodiscard]] std::string notes() const override {
    return "pool largest block " + std::to_string(largest_block_) + " bytes";
  }

 private:
  Status prepare() override {
    auto body_bytes = probe_body_bytes();
    if (!body_bytes) return std::unexpected(body_bytes.error());
    largest_block_ = std::max<std::size_t>(4096, 2 * (*body_bytes + base::kPadding));
    pool_.emplace(std::pmr::pool_options{.max_blocks_per_chunk = 0, .largest_required_pool_block = largest_block_},
                  std::pmr::new_delete_resource());
    return {};
  }

  Result<std::pmr::memory_resource*> next_resource() override { return &*pool_; }

  void release() override {
    drop_objects();
    pool_.reset();
  }

  std::size_t largest_block_ = 0;
  std::optional<std::pmr::unsynchronized_pool_resource> pool_;
};

}  // namespace

std::unique_ptr<Strategy> make_arena_pool(const Recipe& recipe) { return std::make_unique<ArenaPool>(recipe.name); }

}  // namespace ringlab::strategies::detail
