#pragma once
// What the commands of `bench` share (app/commands.cpp), and the commands themselves, one file each:
// suite_command.cpp (a suite with its server, placement, hooks and reports), allocator_jobs_command.cpp
// (the parent of allocator jobs), self_check_command.cpp; what they stand on (CPUs, the embedded server,
// the link) in testbed.hpp. Internal to bench/src/app.
//
// Errors: a command prints its error as "bench: <message>" on stderr (report_error) and returns the
// exit code (cli.hpp); nothing throws. Threads: the main thread only; g_cancel is written by the
// signal handler.
#include <csignal>
#include <expected>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/app/cli.hpp"
#include "ringlab/bench/process/server_process.hpp"

namespace CLI {
class App;
}

namespace ringlab::bench::app {

// How CLI11 ended a parse that did not go through: --help or --version (status 0), or a bad argument.
struct ParseEnd {
  int status = 0;       // CLI11's exit status: 0 for --help and --version
  std::string output;   // what CLI11 printed for it: the help or the version, or the error
  std::string message;  // the error's own text, without the usage
};
// Parses `arguments` (the words after the program's or the subcommand's name) into `app`, whose options
// are then filled; nullopt when they parse, how it ended otherwise (options.cpp).
[[nodiscard]] std::optional<ParseEnd> parse_arguments(CLI::App& app, std::span<const std::string> arguments);

// `bench load`'s flags as typed (load_command.cpp): added to the `load` subcommand by
// add_load_arguments, turned into a LoadCommand (units, lists, refusals) by finish_load_arguments,
// which returns the refusal's text, or nothing when the arguments are good.
struct LoadArguments {
  LoadCommand command;
  std::string duration = "5s";
  std::string warmup = "1s";
  std::string timeout = "10s";
  std::string targets;
  std::string body_strategies;
  std::string server_arguments;
  std::string cpus;
  std::string formats = "md,csv,json";
  std::string server;
};
void add_load_arguments(CLI::App& app, LoadArguments& into);
[[nodiscard]] std::optional<std::string> finish_load_arguments(LoadArguments& arguments);

// Set to the signal's number by SIGINT/SIGTERM once install_stop_signals() ran; the runner stops
// between iterations, and the cases finished by then are reported (a partial report), exit status
// 128 + the signal. A second signal ends the process at once (the default action), and the
// kernel's PDEATHSIG then stops the server child.
extern volatile std::sig_atomic_t g_cancel;
void install_stop_signals();
[[nodiscard]] int interrupted_exit_code();

// Prints "bench: <message>" on stderr and returns `code`.
int report_error(std::string_view message, int code = kExitUsage);
// The paths of the reports, and the commands that plot the JSON one and make a results page of it.
void print_written(const std::vector<std::filesystem::path>& written);
// The end of a suite run in the parent: the console report (reporters.hpp's render_console), the
// report files, and the ways on (the full table with its duration at this run's pace, the other
// suites). `measuring_seconds`: the wall time of the cases. `perf_spans` (a run under tools/profile,
// MeasuredRun::perf_spans) is written as perf-spans.tsv next to the reports, and its path printed on a
// line of its own, "Perf spans: FOLDER/perf-spans.tsv", which tools/profile reads. Returns 0, or
// report_error's code when the files could not be written.
[[nodiscard]] int present_run(const Report& report, const RunPlan& plan, double measuring_seconds,
                              std::string_view perf_spans = {});
// kExitFailed when a case failed, else 0.
[[nodiscard]] int exit_code_for(const std::vector<CaseResult>& cases);
// The results root exists (made here if need be) and this process may write in it.
[[nodiscard]] Status check_out_root(const std::string& out);
[[nodiscard]] std::string join(const std::vector<std::string>& items, std::string_view separator);

// The measured part of a suite run (suite_command.cpp), for every command that measures cases: the
// client and server placed on CPUs, the embedded server started (or --url checked), --link built,
// the hooks, `cases` run against that server, the ratios computed, the server and link stopped. The
// report is complete but not written; an error is a refusal before any case ran (bad CPU, no server).
// `allocator_name`: the allocator the report names (the job's, or the detected one).
struct MeasuredRun {
  Report report;
  double measuring_seconds = 0;  // the wall time of the cases
  // With --perf-control: the timed segments of the measured iterations, one line per segment with
  // its case's name and its CLOCK_MONOTONIC start and end in ns, under "#" header lines. Empty without.
  std::string perf_spans;
};
// Why a run did not begin: the message, and the exit status it ends with (cli.hpp): kExitUsage for what
// the command line or this machine refused, kExitServerFault for a server that did not start or answer.
struct RunRefusal {
  std::string message;
  int exit_code = kExitUsage;
};
// `driver`: a before/after worker's (ab_worker.cpp): the measured iterations are its parent's; null: the
// runner's own rounds.
[[nodiscard]] std::expected<MeasuredRun, RunRefusal> measure_run(const RunPlan& plan, std::vector<CaseSpec> cases,
                                                                 const std::string& executable,
                                                                 const std::string& allocator_name,
                                                                 RoundDriver* driver = nullptr);
// The suite's cases the plan selects (suites.hpp's build_cases); an error when the filter selects none.
[[nodiscard]] Result<std::vector<CaseSpec>> plan_cases(const RunPlan& plan);
// The embedded server's options for a suite run of `cases`: an hour's idle timeout (a long round leaves a
// case's connection idle) and room for every connection the cases hold (`holders` runs of them at once).
[[nodiscard]] ServerProcessOptions suite_server_options(const ServerPlan& server, const std::vector<CaseSpec>& cases,
                                                        const std::string& executable, int server_cpu,
                                                        std::size_t holders = 1);

int run_suite(const RunPlan& plan, const std::string& executable);
// A before/after run's parent (ab_command.cpp) and its workers (ab_worker.cpp).
int run_before_after(const RunPlan& plan, const std::string& executable);
int run_worker(const RunPlan& plan, const std::string& executable);
int run_allocator_jobs(const RunPlan& plan, const std::string& executable);
int run_self_check_command(const RunPlan& plan);
int run_load_command(const LoadCommand& command, const ServerPlan& server, const std::string& executable);
int run_results_page_command(const ResultsPageCommand& command);
int run_seeds_command(const RunPlan& plan, const std::string& executable);
// `bench report RUN` where RUN is a folder bench seeds wrote (seeds_command.cpp).
int run_seeds_page_command(const ResultsPageCommand& command);

}  // namespace ringlab::bench::app
