// The interposed allocation functions. See memory_diagnoser.hpp for what is counted and why.
//
// Rules for the code below: no allocation (we are the allocator's front door), no locks, no
// exceptions out of the C functions, no static objects with constructors (they may be called
// before any constructor has run), no sanitizer instrumentation (bench/CMakeLists.txt compiles this
// file with -fno-sanitize=all: the first calls arrive while ASan is still initialising, before its
// shadow memory is mapped).
#include "ringlab/bench/measure/memory_diagnoser.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

using MallocFn = void* (*)(std::size_t);
using CallocFn = void* (*)(std::size_t, std::size_t);
using ReallocFn = void* (*)(void*, std::size_t);
using FreeFn = void (*)(void*);
using AlignedAllocFn = void* (*)(std::size_t, std::size_t);
using PosixMemalignFn = int (*)(void**, std::size_t, std::size_t);
using MemalignFn = void* (*)(std::size_t, std::size_t);
using VallocFn = void* (*)(std::size_t);

// Plain pointers accessed with __atomic builtins rather than std::atomic: this file is compiled
// without sanitizer instrumentation (it runs before ASan's shadow memory exists), and an out-of-line
// std::atomic member instantiated by an instrumented file could be the copy the linker keeps.
struct RealFunctions {
  MallocFn malloc;
  CallocFn calloc;
  ReallocFn realloc;
  FreeFn free;
  AlignedAllocFn aligned_alloc;
  PosixMemalignFn posix_memalign;
  MemalignFn memalign;
  VallocFn valloc;
  VallocFn pvalloc;
};
constinit RealFunctions real{};

struct ThreadCounters {
  bool enabled = false;
  bool resolving = false;  // this thread is inside dlsym: serve from the bootstrap arena
  uint64_t allocations = 0;
  uint64_t bytes = 0;
  uint64_t frees = 0;
};
// initial-exec: a fixed offset from the thread pointer, no __tls_get_addr (which may allocate).
constinit thread_local ThreadCounters counters __attribute__((tls_model("initial-exec")));

// Bootstrap arena for allocations made while dlsym runs (glibc's dlsym may calloc an error
// buffer). A bump allocator: nothing is ever returned to it.
constexpr std::size_t kArenaBytes = 64 * 1024;
alignas(std::max_align_t) constinit unsigned char arena[kArenaBytes];
constinit std::size_t arena_used = 0;

bool in_arena(const void* p) noexcept {
  const auto* c = static_cast<const unsigned char*>(p);
  return c >= arena && c < arena + kArenaBytes;
}

void* arena_alloc(std::size_t size, std::size_t alignment = alignof(std::max_align_t)) noexcept {
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  std::size_t used = __atomic_load_n(&arena_used, __ATOMIC_RELAXED);
  for (;;) {
    const std::size_t start = (used + alignment - 1) & ~(alignment - 1);
    if (start + size > kArenaBytes || start + size < start) return nullptr;
    if (__atomic_compare_exchange_n(&arena_used, &used, start + size, true, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED)) {
      return arena + start;
    }
  }
}

template <class Fn>
Fn lookup(const char* name) noexcept {
  // NOLINTNEXTLINE: dlsym returns an object pointer for a function; POSIX guarantees the cast.
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

void resolve() noexcept {
  ThreadCounters& tc = counters;
  if (tc.resolving) return;
  tc.resolving = true;
  __atomic_store_n(&real.malloc, lookup<MallocFn>("malloc"), __ATOMIC_RELEASE);
  __atomic_store_n(&real.calloc, lookup<CallocFn>("calloc"), __ATOMIC_RELEASE);
  __atomic_store_n(&real.realloc, lookup<ReallocFn>("realloc"), __ATOMIC_RELEASE);
  __atomic_store_n(&real.free, lookup<FreeFn>("free"), __ATOMIC_RELEASE);
  __atomic_store_n(&real.aligned_alloc, lookup<AlignedAllocFn>("aligned_alloc"), __ATOMIC_RELEASE);
  __atomic_store_n(&real.posix_memalign, lookup<PosixMemalignFn>("posix_memalign"), __ATOMIC_RELEASE);
  __atomic_store_n(&real.memalign, lookup<MemalignFn>("memalign"), __ATOMIC_RELEASE);
  __atomic_store_n(&real.valloc, lookup<VallocFn>("valloc"), __ATOMIC_RELEASE);
  __atomic_store_n(&real.pvalloc, lookup<VallocFn>("pvalloc"), __ATOMIC_RELEASE);
  tc.resolving = false;
}

// The real function, resolving on first use; null while this thread is resolving.
template <class Fn>
Fn get(Fn& slot) noexcept {
  Fn fn = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
  if (fn != nullptr) return fn;
  if (counters.resolving) return nullptr;
  resolve();
  fn = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
  if (fn == nullptr) {
    // No next allocator at all: nothing sensible can be done without one.
    std::abort();
  }
  return fn;
}

inline void count_allocation(std::size_t bytes) noexcept {
  ThreadCounters& tc = counters;
  if (tc.enabled) {
    ++tc.allocations;
    tc.bytes += bytes;
  }
}

// What an allocation function returns, counted when it is memory.
inline void* counted(void* p, std::size_t bytes) noexcept {
  if (p != nullptr) count_allocation(bytes);
  return p;
}

inline void count_free(void* p) noexcept {
  ThreadCounters& tc = counters;
  if (tc.enabled && p != nullptr) ++tc.frees;
}

void real_free(void* p) noexcept {
  if (p == nullptr || in_arena(p)) return;
  get(real.free)(p);
}

// operator new's contract: loop on the new-handler, then throw.
void* new_impl(std::size_t size) {
  if (size == 0) size = 1;
  for (;;) {
    MallocFn fn = get(real.malloc);
    void* p = fn != nullptr ? fn(size) : arena_alloc(size);
    if (p != nullptr) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* new_aligned_impl(std::size_t size, std::size_t alignment) {
  if (size == 0) size = 1;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  for (;;) {
    void* p = nullptr;
    PosixMemalignFn fn = get(real.posix_memalign);
    if (fn != nullptr) {
      if (fn(&p, alignment, size) != 0) p = nullptr;
    } else {
      p = arena_alloc(size, alignment);
    }
    if (p != nullptr) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The C allocation functions.

extern "C" {

void* malloc(std::size_t size) {
  MallocFn fn = get(real.malloc);
  if (fn == nullptr) return arena_alloc(size);
  return counted(fn(size), size);
}

void* calloc(std::size_t n, std::size_t size) {
  CallocFn fn = get(real.calloc);
  if (fn == nullptr) {
    if (size != 0 && n > static_cast<std::size_t>(-1) / size) return nullptr;
    return arena_alloc(n * size);  // static storage: already zero
  }
  return counted(fn(n, size), n * size);
}

void* realloc(void* old, std::size_t size) {
  if (old != nullptr && in_arena(old)) {
    // Out of the bootstrap arena into the real heap; the arena keeps its copy.
    void* p = malloc(size);
    if (p != nullptr) {
      const auto* from = static_cast<const unsigned char*>(old);
      auto* to = static_cast<unsigned char*>(p);
      const std::size_t room = static_cast<std::size_t>(arena + kArenaBytes - from);
      for (std::size_t i = 0; i < size && i < room; ++i) to[i] = from[i];
    }
    return p;
  }
  ReallocFn fn = get(real.realloc);
  if (fn == nullptr) return arena_alloc(size);
  void* p = fn(old, size);
  if (size == 0) {
    if (old != nullptr) count_free(old);  // realloc(p, 0) frees p
  } else if (p != nullptr) {
    count_allocation(size);
  }
  return p;
}

void free(void* p) {
  if (p == nullptr || in_arena(p)) return;
  count_free(p);
  get(real.free)(p);
}

void* aligned_alloc(std::size_t alignment, std::size_t size) {
  AlignedAllocFn fn = get(real.aligned_alloc);
  if (fn == nullptr) return arena_alloc(size, alignment);
  return counted(fn(alignment, size), size);
}

int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  PosixMemalignFn fn = get(real.posix_memalign);
  if (fn == nullptr) {
    *out = arena_alloc(size, alignment);
    return *out != nullptr ? 0 : ENOMEM;
  }
  const int rc = fn(out, alignment, size);
  if (rc == 0) count_allocation(size);
  return rc;
}

void* memalign(std::size_t alignment, std::size_t size) {
  MemalignFn fn = get(real.memalign);
  if (fn == nullptr) return arena_alloc(size, alignment);
  return counted(fn(alignment, size), size);
}

void* valloc(std::size_t size) {
  VallocFn fn = get(real.valloc);
  if (fn == nullptr) return arena_alloc(size, 4096);
  return counted(fn(size), size);
}

void* pvalloc(std::size_t size) {
  VallocFn fn = get(real.pvalloc);
  if (fn == nullptr) return arena_alloc(size, 4096);
  return counted(fn(size), size);
}

}  // extern "C"

// ---------------------------------------------------------------------------------------------
// The global operator new and delete, every form. Each counts once and calls the real allocator
// directly, so the malloc underneath is not counted a second time.

void* operator new(std::size_t size) {
  void* p = new_impl(size);
  count_allocation(size);
  return p;
}
void* operator new[](std::size_t size) {
  void* p = new_impl(size);
  count_allocation(size);
  return p;
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return operator new(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return operator new[](size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  void* p = new_aligned_impl(size, static_cast<std::size_t>(alignment));
  count_allocation(size);
  return p;
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  void* p = new_aligned_impl(size, static_cast<std::size_t>(alignment));
  count_allocation(size);
  return p;
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return operator new(size, alignment);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return operator new[](size, alignment);
  } catch (...) {
    return nullptr;
  }
}

namespace {
void delete_impl(void* p) noexcept {
  if (p == nullptr) return;
  count_free(p);
  real_free(p);
}
}  // namespace

void operator delete(void* p) noexcept { delete_impl(p); }
void operator delete[](void* p) noexcept { delete_impl(p); }
void operator delete(void* p, std::size_t) noexcept { delete_impl(p); }
void operator delete[](void* p, std::size_t) noexcept { delete_impl(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { delete_impl(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { delete_impl(p); }
void operator delete(void* p, std::align_val_t) noexcept { delete_impl(p); }
void operator delete[](void* p, std::align_val_t) noexcept { delete_impl(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { delete_impl(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { delete_impl(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { delete_impl(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { delete_impl(p); }

// ---------------------------------------------------------------------------------------------

namespace ringlab::bench {

void start_counting_allocations() noexcept {
  ThreadCounters& tc = counters;
  tc.allocations = 0;
  tc.bytes = 0;
  tc.frees = 0;
  tc.enabled = true;
}

AllocationCounts stop_counting_allocations() noexcept {
  ThreadCounters& tc = counters;
  tc.enabled = false;
  return AllocationCounts{tc.allocations, tc.bytes, tc.frees};
}

AllocationCounts allocation_counts() noexcept {
  const ThreadCounters& tc = counters;
  return AllocationCounts{tc.allocations, tc.bytes, tc.frees};
}

namespace {
bool probe_interposition() noexcept {
  // Through volatile pointers, so the compiler cannot pair and elide the calls.
  void* (*volatile do_malloc)(std::size_t) = &::malloc;
  void (*volatile do_free)(void*) = &::free;
  start_counting_allocations();
  void* p = do_malloc(1);
  do_free(p);
  const AllocationCounts c = stop_counting_allocations();
  bool ok = c.allocations == 1 && c.bytes == 1 && c.frees == 1;
  start_counting_allocations();
  try {
    auto* boxed = new char(0);
    asm volatile("" : : "r"(boxed) : "memory");
    delete boxed;
  } catch (...) {
    ok = false;
  }
  const AllocationCounts n = stop_counting_allocations();
  return ok && n.allocations == 1 && n.bytes == 1 && n.frees == 1;
}
}  // namespace

bool interposition_works() noexcept {
  static const bool works = probe_interposition();
  return works;
}

ResourceUsage read_resource_usage() noexcept {
  ResourceUsage usage;
  rusage process{};
  if (getrusage(RUSAGE_SELF, &process) == 0) {
    usage.peak_rss_bytes = static_cast<uint64_t>(process.ru_maxrss) * 1024u;  // ru_maxrss is in KiB
  }
  rusage thread{};
  if (getrusage(RUSAGE_THREAD, &thread) == 0) {
    usage.minor_faults = static_cast<uint64_t>(thread.ru_minflt);
    usage.major_faults = static_cast<uint64_t>(thread.ru_majflt);
    const auto ns = [](const timeval& t) {
      return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_usec) * 1000u;
    };
    usage.user_ns = ns(thread.ru_utime);
    usage.system_ns = ns(thread.ru_stime);
  }
  return usage;
}

std::optional<uint64_t> read_resident_bytes() noexcept {
  // open and read, not a stream: nothing allocated, so that a count in progress is not disturbed.
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char text[128];
  const ssize_t got = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (got <= 0) return std::nullopt;
  text[got] = '\0';
  // "size resident shared text lib data dt", in pages: the second field.
  const char* field = std::strchr(text, ' ');
  if (field == nullptr) return std::nullopt;
  char* end = nullptr;
  const unsigned long long pages = std::strtoull(field + 1, &end, 10);
  const long page_bytes = ::sysconf(_SC_PAGESIZE);
  if (end == field + 1 || page_bytes <= 0) return std::nullopt;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_bytes);
}

}  // namespace ringlab::bench
