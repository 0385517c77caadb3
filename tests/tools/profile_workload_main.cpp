// profile_workload: stands in for bench under tools/profile in tests/tools/profile_test.py. It
// burns CPU in four functions with names a profile can be checked for: one before perf is enabled
// (start-up, pilot, warm-up), one between enable() and disable() (the measured iterations), one
// after, and one in a forked child for the whole run (the server). Only the second may show up.
//
// Usage: profile_workload [anything...] --perf-control CTL,ACK
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

#include "ringlab/bench/measure/perf_control.hpp"

namespace {

volatile unsigned long long sink = 0;

// Spins for `duration` of wall-clock time. Inlined into each phase, so the samples land in the
// phase's own symbol rather than in one shared helper.
__attribute__((always_inline)) inline void spin(std::chrono::milliseconds duration) {
  const auto end = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 1000; ++i) sink = sink + static_cast<unsigned long long>(i);
  }
}

}  // namespace

extern "C" {
__attribute__((noinline)) void ringlab_workload_before_enable() { spin(std::chrono::milliseconds(300)); }
__attribute__((noinline)) void ringlab_workload_measured() { spin(std::chrono::milliseconds(400)); }
__attribute__((noinline)) void ringlab_workload_after_disable() { spin(std::chrono::milliseconds(300)); }
__attribute__((noinline)) void ringlab_workload_server_child() { spin(std::chrono::milliseconds(1500)); }
}

int main(int argc, char** argv) {
  std::string spec;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string_view(argv[i]) == "--perf-control") spec = argv[i + 1];
  }
  if (spec.empty()) {
    std::fprintf(stderr, "profile_workload: --perf-control CTL,ACK missing\n");
    return 2;
  }
  auto control = ringlab::bench::PerfControl::open(spec);
  if (!control) {
    std::fprintf(stderr, "profile_workload: %s\n", control.error().message.c_str());
    return 1;
  }
  const pid_t child = ::fork();
  if (child == 0) {
    ringlab_workload_server_child();  // ends by itself
    ::_exit(0);
  }
  ringlab_workload_before_enable();
  if (auto on = control->enable(); !on) {
    std::fprintf(stderr, "profile_workload: %s\n", on.error().message.c_str());
    return 1;
  }
  ringlab_workload_measured();
  if (auto off = control->disable(); !off) {
    std::fprintf(stderr, "profile_workload: %s\n", off.error().message.c_str());
    return 1;
  }
  ringlab_workload_after_disable();
  if (child > 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
  }
  std::printf("profile_workload: done\n");
  return 0;
}
