#pragma once
// What the tests that run the bench binary as a user would share: where bench and the server are, its
// stderr kept to its own lines under a sanitized build, and the report.json a run wrote.
//
// Threads: the test's thread. quiet_sanitizer_report() changes this process's environment (the
// children inherit it): it must run before any child starts, from a static initializer as below.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "ringlab/bench/core/results.hpp"

namespace ringlab::testing {

// A sanitized bench (tools/test's build) would add LeakSanitizer's list of used suppressions to its
// stderr at exit; with print_suppressions=0 its stderr is its own.
inline bool quiet_sanitizer_report() {
  const char* options = std::getenv("LSAN_OPTIONS");
  const std::string quiet = (options != nullptr && *options != '\0' ? std::string(options) + ":" : "") +
                            "print_suppressions=0";
  return ::setenv("LSAN_OPTIONS", quiet.c_str(), 1) == 0;
}

// Set before any child starts: a static initializer of every test that runs bench.
inline const bool kQuietSanitizers = quiet_sanitizer_report();

// What a user runs: the tests that include this header are built with the paths of both binaries.
inline const std::string kBench = RINGLAB_BENCH_BINARY;
inline const std::string kServer = RINGLAB_SERVER_BINARY;

// The report.json a run wrote under `out` (one run: one timestamped folder); fails the test if none.
inline bench::Report written_report(const std::string& out) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(out)) {
    if (entry.path().filename() == "report.json") {
      auto report = bench::read_report_file(entry.path());
      REQUIRE_MESSAGE(report, (report ? "" : report.error().message));
      return *report;
    }
  }
  FAIL("no report.json under " << out);
  return {};
}

}  // namespace ringlab::testing
