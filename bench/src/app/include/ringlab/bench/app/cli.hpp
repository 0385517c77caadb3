#pragma once
// The bench command line: what `bench` does with its arguments.
//
//   bench [SUITE] [options]          run a suite (default: headline) and report it
//   bench --list                     suites and strategies, what each does and mirrors
//   bench --self-check               timer overhead, stability and linearity of the harness
//   bench compare OLD.json NEW.json  two reports side by side (compare.hpp, compare_main below)
//   bench report RUN/report.json     a results page of a report for docs/results/ (reporters.hpp)
//   bench seeds [options]            every seed write-up's methods under its conditions, and the page
//                                    of their figures beside ringlab's, docs/seeds.md (seeds.hpp)
//   bench report RUN                 that page again from a seeds run's folder
//   bench [SUITE] --before B --after A  two builds' bench binaries in the same rounds: after / before per
//                                    case, with its interval and verdict (ab.hpp, ab_command.cpp)
//   bench load [options]             load a server (the embedded one or --url) with many requests
//                                    and report req/s, latency percentiles, CPU per request (load.hpp)
//
// parse_command_line() is separate from run_bench() so that the parsing (defaults, limits,
// refusals) is testable without running anything. Exit codes: 0 every case ok or skipped; 1 a case
// failed, an allocator job failed or a self-check target was missed; 2 bad arguments or a set-up
// error of this machine (a CPU not ours, an unwritable results folder, a size the server refuses
// with 400, no namespaces for --link); 3 a server fault before any case (the embedded server did not
// start, --url did not answer its health check, or a server stalled or answered garbage on the size
// check); 4 a before/after run's case slower beyond --fail-over; 128 + the signal when SIGINT (130)
// or SIGTERM (143) stopped the run (the report then is partial).
#include <chrono>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/compare.hpp"
#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/core/results.hpp"
#include "ringlab/bench/app/plan.hpp"
#include "ringlab/bench/load/load.hpp"
#include "ringlab/bench/report/reporters.hpp"
#include "ringlab/bench/run/runner.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace ringlab::bench {

inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitServerFault = 3;
// A before/after run (--before, --after) with --fail-over: a case slower than the gate allows.
inline constexpr int kExitSlower = 4;
inline constexpr int kExitInterrupted = 130;  // SIGINT; SIGTERM is 143 (128 + the signal)

// `bench seeds`: given where a suite's name goes, it runs every seed (seeds.hpp) instead of a suite.
inline constexpr std::string_view kSeedsCommand = "seeds";
// bench seeds' --max-iterations unless given: every seed in about 20 minutes on a 2-core machine.
inline constexpr unsigned kSeedsMaxIterations = 30;

// `bench load`: the settings of one invocation. Each row is a server variant (one per body strategy
// of the embedded server, or the --url server) and a target; every row is loaded once per round,
// the rows in turn within a round (interleaved, so that drift of the machine reaches them alike).
struct LoadCommand {
  LoadSpec spec;                 // connections, rate, durations, threads, client CPUs, buffers
  std::string url;               // a running server; empty: start the embedded one
  std::vector<std::string> targets;          // empty: the URL's target, or /weather?count=10
  std::vector<std::string> body_strategies;  // embedded server: one variant each; empty: its default
  std::vector<std::string> server_arguments; // embedded server: more flags, the same for every variant
  std::string label;             // the rows' server name; empty: "ours" or the URL
  unsigned rounds = 1;
  ServerCpu server_cpu;          // embedded server: auto, none or a CPU
  unsigned server_threads = 1;
  bool cpus_given = false;       // --cpu was given (else: placement decides)
  std::vector<Format> formats{Format::md, Format::csv, Format::json};
  std::string out = "results";
};

// `bench report`: which report, and the folder its page goes to.
struct ResultsPageCommand {
  std::string report;               // RUN/report.json, or RUN
  std::string out = "docs/results";  // the page is OUT/<results_page_name>
  // A seeds run's folder (bench seeds) instead of a report: its page goes here.
  std::string seeds_page = "docs/seeds.md";
  // A before/after report: its per-round values judged again with this bench's method (judge()), for a
  // report a bench with an older method wrote; the page says which verdicts the run itself printed.
  bool judge_again = false;
};

// The whole command line, parsed: a run's plan (plan.hpp), or one of the commands that need none.
struct CliOptions {
  RunPlan plan;  // a suite, seeds or self-check run; bench load uses plan.server
  bool list = false;
  bool self_check = false;
  std::optional<CompareCommand> compare;  // `bench compare ...`: nothing else of the above applies
  std::optional<LoadCommand> load;        // `bench load ...`: plan.server applies
  std::optional<ResultsPageCommand> results_page;  // `bench report ...`: nothing else applies
};

struct ParsedCommandLine {
  std::optional<CliOptions> options;  // absent when the process should exit now
  int exit_code = 0;
  std::string output;  // --help text or the error, for stdout (exit 0) or stderr (exit != 0)
};

[[nodiscard]] ParsedCommandLine parse_command_line(const std::vector<std::string>& arguments);

// `bench compare`'s arguments and their checks, declared on `app`: bench's CLI11 subcommand "compare"
// (parse_command_line) or compare_main's own app. `into` is filled when `app` is parsed and must
// outlive it (compare_command.cpp).
void add_compare_arguments(CLI::App& app, CompareCommand& into);

// The whole subcommand from its words (those after "compare"): parsed by add_compare_arguments' app,
// then compare.hpp's run_compare. A bad argument is exit status 2 with the problem and the usage on
// `err`.
[[nodiscard]] int compare_main(std::span<const std::string> args, std::ostream& out, std::ostream& err);

// The whole program; main() calls it.
int run_bench(int argc, char** argv);

}  // namespace ringlab::bench
