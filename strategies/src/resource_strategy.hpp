#pragma once
// ResourceStrategy: presized, with the body buffer and the owning models taken from a memory resource
// that the derived strategy manages per request (arena, arena_pool, mimalloc_heap).
//
// At the start of every request the previous request's buffer and models are destroyed (their memory
// goes back to their resource, which may do nothing with it), then next_resource() gives the resource
// for this request (the arena is released, a new heap is made...), and an empty buffer and empty model
// vector are made on it, the vector reserved for the case's record count. So each request allocates its
// body buffer (Content-Length + padding) and its models from the resource, and nothing from anywhere
// else once the client and the parser are warm.
#include <memory_resource>
#include <optional>

#include "client_strategy.hpp"
#include "recipe.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/base/padded_buffer.hpp"

namespace ringlab::strategies::detail {

class ResourceStrategy : public ClientStrategy {
 public:
  using ClientStrategy::ClientStrategy;

 protected:
  // The resource for the request about to start. The previous request's objects are gone.
  virtual Result<std::pmr::memory_resource*> next_resource() = 0;

  // Destroys the current request's objects (before a derived strategy destroys their resource).
  void drop_objects() noexcept {
    models_.reset();
    body_ = base::PaddedBuffer();
  }

  Status before_request() final {
    drop_objects();
    auto resource = next_resource();
    if (!resource) return std::unexpected(resource.error());
    body_ = base::PaddedBuffer(*resource);
    models_.emplace(*resource);
    models_->reserve(config().payload, config().count);
    return {};
  }
  http::BodySink& sink() final { return sink_; }
  json::Result<uint64_t> deserialize() final {
    return models_->parse(config().payload, parser(), json::padded_view(body_));
  }
  uint64_t checksum() final { return models_->checksum(config().payload); }

 private:
  base::PaddedBuffer body_;
  http::PresizedSink sink_{body_};
  std::optional<OwningModels> models_;
};

// The rows on a memory resource (registry.cpp), each defined with its resource's code: arena.cpp,
// arena_pool.cpp, mimalloc_heap.cpp.
std::unique_ptr<Strategy> make_arena(const Recipe& recipe);
std::unique_ptr<Strategy> make_arena_pool(const Recipe& recipe);
std::unique_ptr<Strategy> make_mimalloc_heap(const Recipe& recipe);

}  // namespace ringlab::strategies::detail
