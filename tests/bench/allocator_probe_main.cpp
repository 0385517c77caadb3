// allocator_probe: stands in for a bench child in tests/bench/allocators_test.cpp. It takes the
// hidden options a child gets (--job-output-fd N --job-allocator NAME), checks the allocator it runs
// on the way bench does, and writes a one-case report to fd N (or the error, exiting 1). Like bench,
// it links the memory diagnoser, whose malloc sits in front of the allocator's; exit status 4 says
// that interposition did not happen, so the test would not be testing detection through it.
//
// Built without sanitizers on purpose: AddressSanitizer must own malloc and be loaded first, so a
// sanitized probe could not run under LD_PRELOAD of another allocator at all.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/results.hpp"
#include "ringlab/bench/measure/memory_diagnoser.hpp"
#include "ringlab/bench/process/allocators.hpp"

namespace alloc = ringlab::bench::alloc;

int main(int argc, char** argv) {
  int fd = -1;
  std::string expected_name;
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--job-output-fd") fd = std::atoi(argv[++i]);
    else if (arg == "--job-allocator") expected_name = argv[++i];
    // A library loaded after start-up (as a strategy might load mimalloc for its heaps). With
    // RTLD_GLOBAL its symbols, mi_version included, resolve from anywhere, yet malloc stays bound to
    // the allocator loaded first: it must not be taken for the allocator.
    else if (arg == "--also-load" && dlopen(argv[++i], RTLD_NOW | RTLD_GLOBAL) == nullptr) return 5;
  }
  if (fd < 0 || expected_name.empty()) return 2;
  const auto expected = alloc::parse_allocator(expected_name);
  if (!expected) return 2;

  // Some real allocation traffic, so that a broken preload shows here and not in the parent.
  std::vector<void*> blocks;
  for (std::size_t size = 8; size <= (1u << 20); size *= 4) {
    void* p = std::malloc(size);
    if (p == nullptr) return 3;
    std::memset(p, 0xab, size);
    blocks.push_back(p);
  }
  for (void* p : blocks) std::free(p);

  if (!ringlab::bench::interposition_works()) return 4;

  const auto verified = alloc::verify_allocator(*expected);
  if (!verified) {
    const std::string& text = verified.error().message;
    (void)!::write(fd, text.data(), text.size());
    return 1;
  }
  ringlab::bench::Report report;
  report.environment.allocator = verified->describe();
  ringlab::bench::CaseResult c;
  c.strategy = "probe";
  c.payload = "weather";
  c.size = 1;
  c.allocator = verified->name();
  c.samples_ns = {100, 101, 102};
  c.stats.mean = 101;
  report.cases.push_back(c);
  return ringlab::bench::write_report_fd(fd, report) ? 0 : 1;
}
