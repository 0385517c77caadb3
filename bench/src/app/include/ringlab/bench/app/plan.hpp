#pragma once
// A run's settings, typed and parsed once (options.cpp's parse_command_line): what a suite, seeds,
// profile or load run does, in groups that say what each part of the run takes. Each setting is stated
// here once with its default; its flag is one line of its group's parser in options.cpp (or
// load_command.cpp), which refuses a bad value at parse time. report.json's `config` block is derived
// from the plan (report_config): its typed keys are the settings bench reads back from a report
// (compare's comparability, the pages), and its `options` hold every option the parser declares, given
// or defaulted, so a new option reaches the report with no line of its own.
//
// Every choice is an enum or a checked value: no later code parses a setting again. What stays text is
// text by nature: globs (filter), paths (out, binaries, the seeds page), the command line as given, and
// the column names the reporters read back from the report (checked against their table here).
//
// Ownership: plain values. Threads: none; the plan is read-only once parsed (commands take it by const
// reference).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/core/results.hpp"
#include "ringlab/bench/measure/perf_control.hpp"
#include "ringlab/bench/process/allocators.hpp"
#include "ringlab/bench/report/reporters.hpp"
#include "ringlab/bench/run/runner.hpp"
#include "ringlab/bench/run/suites.hpp"
#include "ringlab/link/spec.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::bench {

// --server-cpu: where the embedded server runs.
struct ServerCpu {
  enum class Choice : uint8_t {
    automatic,  // a CPU the client was not given (testbed.hpp's place says which)
    none,       // not pinned
    cpu,        // the one given
  };
  Choice choice = Choice::automatic;
  int cpu = -1;  // Choice::cpu only

  // "auto", "none" or a CPU number below CPU_SETSIZE; the refusal's text otherwise.
  [[nodiscard]] static Result<ServerCpu> parse(std::string_view text);
  [[nodiscard]] std::string text() const;  // what parse() reads back to this
  bool operator==(const ServerCpu&) const = default;
};

// A server that is not ours (--url), checked when parsed.
struct ExternalServer {
  std::string url;   // as given: "http://127.0.0.1:8080"
  std::string host;  // brackets removed
  uint16_t port = 80;
};

// What a run measures: the suite (or the seeds), its strategies and sizes, and the client's policies.
struct CasesPlan {
  const Suite* suite = &suites().front();  // never null; bench seeds: the get suite, whose rows seeds use
  bool seeds = false;                       // bench seeds: every seed's cases instead of the suite's
  std::string filter = "*";                 // comma-separated fnmatch globs over strategy (or seed) names
  std::vector<std::size_t> sizes;           // records per response; the suite's unless given (seeds: none)
  strategies::Payload payload = strategies::Payload::weather;  // the suite's unless given
  strategies::Connection connection = strategies::Connection::pooled;
  std::vector<strategies::Client> clients{strategies::Client::pooled};  // each case under each, in turn
  strategies::ServerMode server_mode = strategies::ServerMode::cached;
  std::vector<std::size_t> inflight{1};  // one case per count
  std::size_t client_threads = 1;
  strategies::RingGeometry ring{};  // the provided-buffer rows' ring, field by field; 0: each row's own
};

// How it is measured. RunnerOptions holds the runner's own settings (iterations, the adaptive stop,
// what is counted, interleaving) with their defaults; the plan adds what the commands do around it.
struct MeasurementPlan {
  RunnerOptions runner;
  bool counters = false;                     // perf_event counters around every measured iteration
  std::vector<alloc::Allocator> allocators;  // one allocator job each; empty: this process only
  std::chrono::milliseconds job_timeout{3'600'000};
  std::size_t job_max_output_mb = 256;
  uint64_t self_check_work = 4000;  // spin steps of the self-check's work A
};

// Where the client and the embedded server run.
struct PlacementPlan {
  std::optional<int> client_cpu;  // --cpu; none: the first allowed CPU
  ServerCpu server_cpu;
};

// The server the requests go to, and the limits of its life and of every request.
struct ServerPlan {
  std::optional<ExternalServer> external;  // --url; none: the embedded server
  std::string binary;                      // the embedded server's; empty: next to bench
  std::chrono::milliseconds start_timeout{10'000};
  std::chrono::milliseconds stop_timeout{10'000};
  std::chrono::milliseconds request_timeout{10'000};
};

// The path to the embedded server.
struct LinkPlan {
  link::LinkSpec spec;  // loopback unless --link
  LinkLeg leg = LinkLeg::client;
  std::string wire;  // the emulator's binary; empty: next to bench
};

// What it writes.
struct OutputPlan {
  std::string out = "results";  // results root: reports go to OUT/<UTC timestamp>/
  std::vector<Format> formats{Format::md, Format::csv, Format::json};
  std::vector<std::string> columns;  // extra columns of the main table, names checked against the table
  std::optional<PerfControlPaths> perf_control;  // tools/profile's FIFOs
  std::chrono::milliseconds perf_control_timeout{5'000};
  std::string seeds_page = "docs/seeds.md";  // bench seeds: the page written once every seed ran
};

// An allocator job's child: where its report goes and the allocator it must run on.
struct JobPlan {
  int output_fd = -1;  // -1: not a job's child
  std::optional<alloc::Allocator> allocator;
};

// --compare-side: what differs between the two builds of a before/after run.
enum class CompareSide : uint8_t {
  client,  // the client's code: both builds' workers send to one server (the embedded one, started once)
  server,  // the server's: each worker starts its own build's embedded server, on the same CPU
};
[[nodiscard]] std::string_view compare_side_name(CompareSide side) noexcept;

// A before/after run's iteration time unless --iteration-time is given (a suite's is 100 ms).
inline constexpr double kAbIterationTimeMs = 20;

// A before/after run (--before, --after; ab_command.cpp): two builds' bench binaries, each a worker
// process, measured in the same rounds; or, in a worker, the pipes it is driven through.
struct AbPlan {
  std::string before;  // a bench binary; empty (with `after`): not a before/after run
  std::string after;
  // A build whose code under test is another commit's (tools/bench ab HARNESS:CODE:FOLDERS): what it carries,
  // "3e1a3d6 (http/src, json/src)", for the report and its page; empty: the build's own commit's.
  std::string before_code;
  std::string after_code;
  CompareSide side = CompareSide::client;
  // Paired rounds: each case once in each build per round. 400 (about 9 minutes for the headline suite on
  // 2 cores) found a 2 % slowdown at 1,000 and 10,000 records in each calibrated run; 200 missed one.
  unsigned rounds = 400;
  double noise_band = 0.01;   // the equivalence band of the verdicts (ab.hpp)
  std::optional<double> fail_over;  // the gate: exit kExitSlower when a case is slower beyond it
  std::chrono::milliseconds worker_timeout{600'000};  // a worker's answer to one step (a pilot of every case)
  // In a worker (hidden flags): the parent's commands come in on `worker_in_fd`, its answers and then its
  // report go out on `worker_out_fd`; -1: not a worker.
  int worker_in_fd = -1;
  int worker_out_fd = -1;

  [[nodiscard]] bool parent() const noexcept { return !before.empty(); }
  [[nodiscard]] bool worker() const noexcept { return worker_out_fd >= 0; }
};

struct RunPlan {
  CasesPlan cases;
  MeasurementPlan measurement;
  PlacementPlan placement;
  ServerPlan server;
  LinkPlan link;
  OutputPlan outputs;
  JobPlan job;
  AbPlan ab;
  std::vector<std::string> arguments;  // the command line after the program's name, as given
  // Every option as parsed, as text (cli_options.hpp's option_values): what report.json's
  // config.options records, read from the parser itself, so that no option needs a line to reach it.
  std::map<std::string, std::string> options;
};

// report.json's `config` block: the plan's settings as the report names them.
[[nodiscard]] Config report_config(const RunPlan& plan);

}  // namespace ringlab::bench
