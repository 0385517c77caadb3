#pragma once
// What the tests that run bench as a user share beyond tests/support/bench_runs.hpp: a run that must
// exit 0, and a file the run wrote somewhere under its results folder. Built on tests/e2e's support
// library (e2e::run, e2e::TempDir); for the tests that link it.
//
// Threads: the test's thread. Errors fail the test (REQUIRE) where the run itself failed.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "support.hpp"

namespace ringlab::bench::testing {

// Runs `argv` to completion within `timeout`, its output in `dir`'s files "<prefix>stdout" and
// "<prefix>stderr"; the test stops, showing that stderr, unless the run exits 0.
inline void run_to_success(const e2e::TempDir& dir, const std::vector<std::string>& argv, std::string_view prefix,
                           std::chrono::milliseconds timeout) {
  const std::string err = dir.file(std::string(prefix) + "stderr");
  const auto status = e2e::run(argv, dir.file(std::string(prefix) + "stdout"), err, timeout);
  REQUIRE(status.has_value());
  INFO(e2e::read_file(err));
  REQUIRE(*status == 0);
}

// The file named `name` under `folder` or any folder below it (the last one found, when a run wrote
// several); empty when there is none.
inline std::filesystem::path file_under(const std::string& folder, std::string_view name) {
  std::filesystem::path found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (entry.path().filename() == std::filesystem::path(name)) found = entry.path();
  }
  return found;
}

}  // namespace ringlab::bench::testing
