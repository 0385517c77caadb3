#pragma once
// What the commands of `bench` share (app/commands.cpp), and the commands themselves, one file each:
// suite_command.cpp (a suite with its server, placement, hooks and reports), allocator_jobs_command.cpp
// (the parent of allocator jobs), self_check_command.cpp. Internal to bench/src/app.
//
// Errors: a command prints its error as "bench: <message>" on stderr (report_error) and returns the
// exit code (cli.hpp); nothing throws. Threads: the main thread only; g_cancel is written by the
// signal handler.
#include <csignal>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/cli.hpp"

namespace ringlab::bench::app {

// Set to the signal's number by SIGINT/SIGTERM once install_stop_signals() ran; the runner stops
// between iterations, and the cases finished by then are reported (a partial report), exit status
// 128 + the signal. A second signal ends the process at once (the default action), and the
// kernel's PDEATHSIG then stops the server child.
extern volatile std::sig_atomic_t g_cancel;
void install_stop_signals();
[[nodiscard]] int interrupted_exit_code();

// Prints "bench: <message>" on stderr and returns `code`.
int report_error(std::string_view message, int code = kExitUsage);
// The paths of the reports, and the command that plots the JSON one.
void print_written(const std::vector<std::filesystem::path>& written);
// kExitFailed when a case failed, else 0.
[[nodiscard]] int exit_code_for(const std::vector<CaseResult>& cases);
[[nodiscard]] std::string join(const std::vector<std::string>& items, std::string_view separator);

int run_suite(CliOptions& options, const std::string& executable);
int run_allocator_jobs(const CliOptions& options, const std::string& executable);
int run_self_check_command(const CliOptions& options);

}  // namespace ringlab::bench::app
