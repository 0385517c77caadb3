#pragma once
// Counts every operator new of the test program on the calling thread, so a test can assert that a
// stretch of code allocated nothing: allocations_on_this_thread() before and after.
//
// This header DEFINES the replaceable global operator new/delete: include it in exactly one source
// file of a test executable. Another source file of the same executable that only reads the count
// defines RINGLAB_ALLOCATION_COUNTER_READ_ONLY before including it. Counted per thread, so test servers
// on other threads allocate freely.
#include <cstddef>
#include <cstdlib>
#include <new>

namespace ringlab::testing {
namespace detail {
inline thread_local std::size_t allocations = 0;
}  // namespace detail

[[nodiscard]] inline std::size_t allocations_on_this_thread() noexcept { return detail::allocations; }
}  // namespace ringlab::testing

#ifndef RINGLAB_ALLOCATION_COUNTER_READ_ONLY
void* operator new(std::size_t size) {
  ++ringlab::testing::detail::allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return ::operator new(size); }
// Not inlined: GCC would otherwise see free() applied to what operator new returned and warn.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#endif  // RINGLAB_ALLOCATION_COUNTER_READ_ONLY
