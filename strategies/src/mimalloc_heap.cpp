// mimalloc_heap: the body buffer and the owning models come from a mimalloc heap made at the start of
// each request (mi_heap_new) and destroyed whole when the next one starts (mi_heap_destroy): nothing is
// freed object by object.
//
// mimalloc is loaded with dlopen(RTLD_LOCAL), not linked: libmimalloc.so exports malloc and free, and
// linking it would make it the allocator of the whole process, every other strategy included. Loaded
// locally, only the four functions below are used, through pointers, and the process keeps the
// allocator bench chose for it. When the library cannot be loaded the strategy is skipped, with
// dlerror()'s reason.
#include <dlfcn.h>
#include <mimalloc.h>

#include <new>
#include <string>

#include "resource_strategy.hpp"

namespace ringlab::strategies::detail {
namespace {

constexpr const char* kLibrary = "libmimalloc.so.2";

struct Mimalloc {
  decltype(&::mi_heap_new) heap_new = nullptr;
  decltype(&::mi_heap_destroy) heap_destroy = nullptr;
  decltype(&::mi_heap_malloc_aligned) heap_malloc_aligned = nullptr;
  std::string error;  // why it could not be loaded; empty when loaded
};

// Loaded once per process and never unloaded (mimalloc keeps per-thread state for the process's life).
const Mimalloc& mimalloc() {
  static const Mimalloc loaded = [] {
    Mimalloc m;
    void* library = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* why = ::dlerror();
      m.error = why != nullptr ? why : kLibrary;
      return m;
    }
    m.heap_new = reinterpret_cast<decltype(m.heap_new)>(::dlsym(library, "mi_heap_new"));
    m.heap_destroy = reinterpret_cast<decltype(m.heap_destroy)>(::dlsym(library, "mi_heap_destroy"));
    m.heap_malloc_aligned =
        reinterpret_cast<decltype(m.heap_malloc_aligned)>(::dlsym(library, "mi_heap_malloc_aligned"));
    if (m.heap_new == nullptr || m.heap_destroy == nullptr || m.heap_malloc_aligned == nullptr) {
      m.error = std::string(kLibrary) + " lacks mi_heap_new, mi_heap_destroy or mi_heap_malloc_aligned";
    }
    return m;
  }();
  return loaded;
}

// A memory_resource on one mimalloc heap. deallocate() does nothing: the heap is destroyed whole.
class HeapResource final : public std::pmr::memory_resource {
 public:
  explicit HeapResource(mi_heap_t* heap) noexcept : heap_(heap) {}

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    void* p = mimalloc().heap_malloc_aligned(heap_, bytes, alignment);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void do_deallocate(void*, std::size_t, std::size_t) override {}
  [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
  mi_heap_t* heap_;
};

class MimallocHeap final : public ResourceStrategy {
 public:
  using ResourceStrategy::ResourceStrategy;
  ~MimallocHeap() override { destroy_heap(); }

  [[nodiscard]] std::optional<std::string> skip_reason(const net::RingFeatures&) const override {
    if (!mimalloc().error.empty()) return "mimalloc not loadable: " + mimalloc().error;
    return std::nullopt;
  }

 private:
  Status prepare() override {
    if (!mimalloc().error.empty()) return fail(label(), "mimalloc not loadable: " + mimalloc().error);
    return {};
  }

  Result<std::pmr::memory_resource*> next_resource() override {
    destroy_heap();
    mi_heap_t* heap = mimalloc().heap_new();
    if (heap == nullptr) return fail(label(), "mi_heap_new failed");
    heap_ = heap;
    resource_.emplace(heap);
    return &*resource_;
  }

  void destroy_heap() noexcept {
    drop_objects();
    resource_.reset();
    if (heap_ != nullptr) mimalloc().heap_destroy(heap_);
    heap_ = nullptr;
  }

  void release() override { destroy_heap(); }

  mi_heap_t* heap_ = nullptr;
  std::optional<HeapResource> resource_;
};

}  // namespace

std::unique_ptr<Strategy> make_mimalloc_heap(const Recipe& recipe) {
  return std::make_unique<MimallocHeap>(recipe.name);
}

}  // namespace ringlab::strategies::detail
