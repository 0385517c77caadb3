#pragma once
// Memory diagnoser: counts the heap allocations the calling thread makes while counting is on.
//
// How: memory_diagnoser.cpp defines malloc, calloc, realloc, free, aligned_alloc, posix_memalign,
// memalign, valloc, pvalloc and every form of the global operator new/delete (plain, array, sized,
// aligned, nothrow). Linked into an executable, these definitions take precedence over the C
// library's for every caller in the process (the dynamic linker binds to the executable first), and
// each forwards to the next definition found by dlsym(RTLD_NEXT): the C library's allocator, or an
// allocator loaded with LD_PRELOAD (mimalloc, jemalloc, tcmalloc), or the sanitizer's allocator in an
// ASan build. So the allocator under test still does the work; this file only counts.
//
// Any executable that calls a function of this header links the object and so gets the
// interposition; one that does not, does not. interposition_works() checks at run time that the
// calls really come through here (a statically linked binary, or a preloaded library that binds
// its own calls directly, would bypass it); bench reports memory as n/a when it does not.
//
// What is counted: one allocation per successful call of malloc, calloc, realloc (any size but 0),
// aligned_alloc, posix_memalign, memalign, valloc, pvalloc or operator new; bytes are the bytes
// *requested* (calloc: n * size; the allocator's rounding and headers are not included). A
// realloc counts as one allocation of its new size. operator new forwards to the allocator's
// malloc/posix_memalign directly, so it is counted once, not twice. Frees are counted separately.
// Not counted: memory the allocator or the kernel takes without a call here (mmap by a library,
// reallocarray under ASan, which intercepts it itself).
//
// During start-up dlsym may itself allocate before the real functions are known; those requests
// are served from a small static arena, never freed to the real allocator, and never counted.
//
// Sanitizers: AddressSanitizer interposes malloc too. In a sanitized build this file's definitions
// win (the executable comes first) and forward to ASan's, so ASan still sees every block and the
// counts are the same as without it. memory_diagnoser.cpp is compiled without instrumentation
// (bench/CMakeLists.txt), because its first calls come from ASan's own initialisation, before ASan's
// shadow memory exists. What is lost: ASan's new/delete mismatch check (both arrive as malloc/free).
//
// Threading: counters are thread-local; counting on one thread does not see other threads. Nothing
// is locked; an allocation call costs one thread-local load and branch more when counting is off.
#include <cstdint>
#include <optional>

namespace ringlab::bench {

struct AllocationCounts {
  uint64_t allocations = 0;
  uint64_t bytes = 0;  // requested
  uint64_t frees = 0;
};

// Zeroes the calling thread's counters and starts counting.
void start_counting_allocations() noexcept;
// Stops counting on the calling thread and returns what was counted since start.
AllocationCounts stop_counting_allocations() noexcept;
// What was counted so far, without stopping.
[[nodiscard]] AllocationCounts allocation_counts() noexcept;

// True when malloc and operator new of this process are seen by the diagnoser (checked once by
// allocating and freeing one byte through each while counting).
[[nodiscard]] bool interposition_works() noexcept;

// Process-wide facts from getrusage, read around a case.
struct ResourceUsage {
  uint64_t peak_rss_bytes = 0;  // high-water mark of the process
  uint64_t minor_faults = 0;    // of the calling thread
  uint64_t major_faults = 0;
  // CPU time of the calling thread in user space and in the kernel (getrusage(RUSAGE_THREAD): the
  // scheduler's exact run time, split between the two by tick sampling).
  uint64_t user_ns = 0;
  uint64_t system_ns = 0;
};
[[nodiscard]] ResourceUsage read_resource_usage() noexcept;

// The process's resident memory now, in bytes (/proc/self/statm's resident pages x the page size): what
// it holds at this moment, where ResourceUsage has only the high-water mark. nullopt when /proc cannot
// be read. Opens and reads a file: never next to the clock.
[[nodiscard]] std::optional<uint64_t> read_resident_bytes() noexcept;

}  // namespace ringlab::bench
