// profile_workload: stands in for bench under tools/profile in tests/tools/profile_test.py. It
// burns CPU in four functions with names a profile can be checked for: one before perf is enabled
// (start-up, pilot, warm-up), one between enable() and disable() (the measured iterations), one
// after, and one in a forked child for the whole run (the server). Only the second may show up.
//
// Like bench, it says the span perf was on: it writes "ringlab_workload_measured<TAB>start<TAB>end"
// (CLOCK_MONOTONIC ns) to run/perf-spans.tsv next to the CTL FIFO and prints "Perf spans: PATH",
// so that tools/profile writes run/profile.json for it.
//
// Usage: profile_workload [anything...] --perf-control CTL,ACK
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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

long long monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec;
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
  const long long start_ns = monotonic_ns();
  if (auto on = control->enable(); !on) {
    std::fprintf(stderr, "profile_workload: %s\n", on.error().message.c_str());
    return 1;
  }
  ringlab_workload_measured();
  if (auto off = control->disable(); !off) {
    std::fprintf(stderr, "profile_workload: %s\n", off.error().message.c_str());
    return 1;
  }
  const long long end_ns = monotonic_ns();
  ringlab_workload_after_disable();
  if (child > 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
  }
  const std::string control_path = spec.substr(0, spec.find(','));
  const std::string run = control_path.substr(0, control_path.rfind('/') + 1) + "run";
  const std::string spans = run + "/perf-spans.tsv";
  ::mkdir(run.c_str(), 0755);
  std::FILE* file = std::fopen(spans.c_str(), "w");
  if (file == nullptr) {
    std::fprintf(stderr, "profile_workload: cannot write %s\n", spans.c_str());
    return 1;
  }
  std::fprintf(file, "# case\tstart_ns\tend_ns\nringlab_workload_measured\t%lld\t%lld\n", start_ns, end_ns);
  std::fclose(file);
  std::printf("Perf spans: %s\n", spans.c_str());
  std::printf("profile_workload: done\n");
  return 0;
}
