// Memory diagnoser: exact counts for code whose allocations are known. These run in the sanitizer
// build too: the diagnoser then forwards to ASan's allocator, and the counts must not change.
#include "ringlab/bench/measure/memory_diagnoser.hpp"

#include <doctest/doctest.h>
#include <malloc.h>

#include <cstdlib>
#include <ctime>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace rb = ringlab::bench;

#if defined(__SANITIZE_ADDRESS__)
// A failed allocation is part of what is tested; ASan would otherwise abort on it instead of
// returning null as the C library does.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace {

// Keeps the compiler from pairing and eliding an allocation with its free.
template <class T>
void escape(T* p) {
  asm volatile("" : : "r"(p) : "memory");
}

// Allocation functions called through volatile pointers: a direct call to malloc in a test may be
// folded away by the optimiser; a call through an opaque pointer is made.
void* (*volatile do_malloc)(std::size_t) = &std::malloc;
void* (*volatile do_calloc)(std::size_t, std::size_t) = &std::calloc;
void* (*volatile do_realloc)(void*, std::size_t) = &std::realloc;
void (*volatile do_free)(void*) = &std::free;

// What making a string of `length` characters allocates (its free, after counting, is not counted).
rb::AllocationCounts string_allocations(std::size_t length) {
  rb::start_counting_allocations();
  std::string s(length, 'x');
  escape(s.data());
  return rb::stop_counting_allocations();
}

struct alignas(64) CacheLine {
  char bytes[64];
};

}  // namespace

TEST_CASE("the allocation functions of this executable come through the diagnoser") {
  CHECK(rb::interposition_works());
}

TEST_CASE("malloc family: exact calls and requested bytes") {
  SUBCASE("malloc and free") {
    rb::start_counting_allocations();
    void* p = do_malloc(100);
    do_free(p);
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    CHECK(c.allocations == 1);
    CHECK(c.bytes == 100);
    CHECK(c.frees == 1);
  }
  SUBCASE("calloc counts n times size") {
    rb::start_counting_allocations();
    void* p = do_calloc(10, 8);
    do_free(p);
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    CHECK(c.allocations == 1);
    CHECK(c.bytes == 80);
  }
  SUBCASE("realloc counts each growth as one allocation of its new size, and realloc to 0 as a free") {
    rb::start_counting_allocations();
    void* p = do_realloc(nullptr, 50);
    p = do_realloc(p, 200);
    p = do_realloc(p, 1000);
    void* gone = do_realloc(p, 0);
    do_free(gone);  // realloc(p, 0) may return null or a unique pointer; free accepts either
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    CHECK(c.allocations == 3);
    CHECK(c.bytes == 1250);
    CHECK(c.frees >= 1);
  }
  SUBCASE("aligned_alloc, posix_memalign, memalign and valloc") {
    rb::start_counting_allocations();
    void* a = aligned_alloc(64, 128);
    escape(a);
    void* b = nullptr;
    REQUIRE(posix_memalign(&b, 256, 300) == 0);
    void* m = memalign(128, 10);
    escape(m);
    void* v = valloc(4096);
    escape(v);
    std::free(a);
    std::free(b);
    std::free(m);
    std::free(v);
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    CHECK(c.allocations == 4);
    CHECK(c.bytes == 128 + 300 + 10 + 4096);
    CHECK(c.frees == 4);
  }
  SUBCASE("a failed allocation is not counted") {
    rb::start_counting_allocations();
    void* p = do_malloc(static_cast<std::size_t>(-1) / 2);
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    CHECK(p == nullptr);
    CHECK(c.allocations == 0);
  }
}

TEST_CASE("operator new and delete: every form is counted once") {
  SUBCASE("new int") {
    rb::start_counting_allocations();
    int* p = new int(7);
    escape(p);
    delete p;
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    CHECK(c.allocations == 1);
    CHECK(c.bytes == sizeof(int));
    CHECK(c.frees == 1);
  }
  SUBCASE("new int[10]") {
    rb::start_counting_allocations();
    int* p = new int[10];
    escape(p);
    delete[] p;
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    CHECK(c.allocations == 1);
    CHECK(c.bytes == 10 * sizeof(int));  // trivially destructible: no array cookie
  }
  SUBCASE("nothrow new") {
    rb::start_counting_allocations();
    int* p = new (std::nothrow) int(1);
    escape(p);
    delete p;
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    CHECK(c.allocations == 1);
    CHECK(c.bytes == sizeof(int));
  }
  SUBCASE("over-aligned new goes through the aligned form") {
    rb::start_counting_allocations();
    auto* p = new CacheLine{};
    escape(p);
    const bool aligned = reinterpret_cast<std::uintptr_t>(p) % 64 == 0;
    delete p;
    auto* q = new CacheLine[3];
    escape(q);
    delete[] q;
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    CHECK(aligned);
    CHECK(c.allocations == 2);
    CHECK(c.bytes == 64 + 3 * 64);
    CHECK(c.frees == 2);
  }
  SUBCASE("a failing new throws bad_alloc and its request is not counted") {
    volatile std::size_t huge = static_cast<std::size_t>(-1) / 2;
    rb::start_counting_allocations();
    bool threw = false;
    try {
      char* p = new char[huge];
      escape(p);
      delete[] p;
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    CHECK(threw);
    // Throwing allocates the exception object itself (__cxa_allocate_exception -> malloc): that
    // one allocation of a few bytes is real and counted; the failed request is not.
    CHECK(c.allocations <= 1);
    CHECK(c.bytes < 1024);
  }
}

TEST_CASE("standard containers: the allocations their documentation implies") {
  SUBCASE("vector reserve allocates once, exactly the capacity asked") {
    rb::start_counting_allocations();
    std::vector<int> v;
    v.reserve(100);
    for (int i = 0; i < 100; ++i) v.push_back(i);
    escape(v.data());
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    CHECK(c.allocations == 1);
    CHECK(c.bytes == 100 * sizeof(int));
  }
  SUBCASE("a string longer than the small buffer allocates length + 1") {
    const rb::AllocationCounts c = string_allocations(100);
    CHECK(c.allocations == 1);
    CHECK(c.bytes == 101);
  }
  SUBCASE("a short string allocates nothing") {
    const rb::AllocationCounts c = string_allocations(10);
    CHECK(c.allocations == 0);
    CHECK(c.bytes == 0);
  }
}

TEST_CASE("counting is off outside start/stop and per thread") {
  SUBCASE("allocations after stop are not counted") {
    rb::start_counting_allocations();
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    void* p = do_malloc(64);
    do_free(p);
    CHECK(c.allocations == 0);
    CHECK(rb::allocation_counts().allocations == 0);
  }
  SUBCASE("another thread's allocations do not show in this thread's counts") {
    // Thread creation itself allocates (the thread state); start counting after it.
    std::vector<int>* other = nullptr;
    std::thread worker;
    rb::start_counting_allocations();
    {
      worker = std::thread([&other] {
        other = new std::vector<int>(1000);
      });
    }
    worker.join();
    const rb::AllocationCounts c = rb::stop_counting_allocations();
    delete other;
    INFO("allocations on the counting thread: " << c.allocations);
    // The std::thread state is allocated by this thread (one allocation); the vector by the worker.
    CHECK(c.bytes < 1000 * sizeof(int));
  }
}

TEST_CASE("resource usage reads a peak RSS and fault counts") {
  const rb::ResourceUsage before = rb::read_resource_usage();
  CHECK(before.peak_rss_bytes > 0);
  // Touch fresh pages: the thread's minor faults must grow.
  const std::size_t bytes = 8u << 20;
  void* raw = do_malloc(bytes);
  REQUIRE(raw != nullptr);
  auto* block = static_cast<volatile char*>(raw);
  for (std::size_t i = 0; i < bytes; i += 4096) block[i] = 1;
  const rb::ResourceUsage after = rb::read_resource_usage();
  do_free(raw);
  CHECK(after.minor_faults > before.minor_faults);
}

TEST_CASE("resource usage reads the calling thread's CPU time, user and system") {
  // Spin until the thread's own CPU clock has advanced 50 ms: getrusage(RUSAGE_THREAD) must show at
  // least most of it (its total is the scheduler's run time; only the user/system split is sampled).
  const auto thread_cpu_ns = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_nsec);
  };
  const rb::ResourceUsage before = rb::read_resource_usage();
  const uint64_t start = thread_cpu_ns();
  volatile uint64_t spin = 0;
  while (thread_cpu_ns() - start < 50'000'000u) spin = spin + 1;
  const rb::ResourceUsage after = rb::read_resource_usage();
  const uint64_t spent = (after.user_ns + after.system_ns) - (before.user_ns + before.system_ns);
  CHECK(after.user_ns >= before.user_ns);
  CHECK(after.system_ns >= before.system_ns);
  CHECK(spent >= 40'000'000u);
}
