// `bench`'s options: parsing, defaults, limits and refusals (cli.hpp). Nothing here runs anything.
#include "ringlab/bench/app/cli.hpp"

#include <sched.h>
#include <unistd.h>

#include <charconv>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sstream>

#include "ringlab/bench/core/compare.hpp"
#include "ringlab/bench/measure/environment.hpp"
#include "ringlab/bench/measure/perf_control.hpp"
#include "ringlab/bench/process/allocators.hpp"
#include "ringlab/bench/run/suites.hpp"
#include "ringlab/http/url.hpp"
#include "ringlab/link/spec.hpp"
#include "cli_options.hpp"
#include "commands.hpp"

namespace ringlab::bench {

using app::add_ranged_option;

std::optional<app::ParseEnd> app::parse_arguments(CLI::App& cli, std::span<const std::string> arguments) {
  std::vector<std::string> reversed(arguments.rbegin(), arguments.rend());  // CLI11 takes them last first
  try {
    cli.parse(reversed);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out;
    std::ostringstream err;
    ParseEnd end;
    end.status = cli.exit(e, out, err);
    end.output = out.str() + err.str();
    end.message = e.what();
    return end;
  }
  return std::nullopt;
}

namespace {

// A buffer ring's size limit (the kernel's), and the largest buffer bench lets a ring have: a ring's buffers
// are allocated and touched when the case is set up.
constexpr unsigned kMaxRingBuffers = 32768;
constexpr unsigned kMaxRingBufferBytes = 64u << 20;

// What the command line gives before it is checked: lists and texts that finish_run_plan() turns into the
// plan's typed values. Bound to the CLI11 options, so it outlives the parse.
struct Given {
  std::string suite = std::string(suites().front().name);
  std::string sizes;
  std::string inflight = "1";
  std::size_t max_inflight = kDefaultMaxInflight;
  std::size_t max_client_threads = default_max_client_threads();
  std::string formats = "md,csv,json";
  std::string columns;
  std::string allocators;
  std::string job_allocator;
  std::string perf_control;
  std::string url;
  std::string link = "loopback";
  int cpu = -1;
  double target_error_percent = 0;
  bool no_memory = false;
  bool no_phases = false;
  bool no_interleave = false;
  std::string slowdown;
  double noise_band_percent = 1;
  double fail_over_percent = -1;  // not given
  CLI::Option* max_iterations = nullptr;  // whether --max-iterations was given
};

// The subcommands (compare, load, report), each with its own arguments.
struct Subcommands {
  CompareCommand compare;
  app::LoadArguments load;
  ResultsPageCommand results_page;
  CLI::App* compare_command = nullptr;
  CLI::App* load_command = nullptr;
  CLI::App* report_command = nullptr;
};

void add_subcommands(CLI::App& app, Subcommands& sub) {
  sub.compare_command = app.add_subcommand("compare", "compare two report.json files: bench compare OLD.json NEW.json");
  add_compare_arguments(*sub.compare_command, sub.compare);
  sub.load_command = app.add_subcommand(
      "load", "load a server with many requests: req/s, latency percentiles, CPU per request (bench load --help)");
  app::add_load_arguments(*sub.load_command, sub.load);
  sub.report_command = app.add_subcommand(
      "report", "make a results page (machine, commit, command, findings, table) of a report: bench report RUN/report.json");
  sub.report_command
      ->add_option("report", sub.results_page.report,
                   "RUN/report.json or RUN: a report bench wrote (with RUN/profile.json from tools/profile, the page "
                   "says where the CPU goes); or RUN, the folder of a bench seeds run")
      ->required();
  sub.report_command->add_option("--out", sub.results_page.out, "folder the page is written to")->capture_default_str();
  sub.report_command->add_option("--seeds-page", sub.results_page.seeds_page, "the page of a seeds run's folder")
      ->capture_default_str();
  sub.report_command->add_flag(
      "--judge-again", sub.results_page.judge_again,
      "a before/after report: judge its per-round values again with this bench's method (its correction; the "
      "report's band, power and gate) instead of showing the verdicts the run printed; the page says so");
}

// What a run measures: the suite, its strategies, sizes, payload and the client's policies.
void add_case_options(CLI::App& app, CliOptions& o, Given& given) {
  CasesPlan& c = o.plan.cases;
  std::vector<std::string> suite_names;
  for (const Suite& suite : suites()) suite_names.emplace_back(suite.name);
  suite_names.emplace_back(kSeedsCommand);
  app.add_option("suite", given.suite,
                 fmt::format("{} (the first is the default); seeds: every seed write-up's methods under its "
                             "conditions, one run per seed, and docs/seeds.md (--filter then selects seeds)",
                             fmt::join(suite_names, ", ")))
      ->check(CLI::IsMember(suite_names));
  app.add_flag("--list", o.list, "list the suites and strategies (what each does and mirrors) and exit");
  app.add_flag("--self-check", o.self_check,
               "timer overhead, spread of a fixed-work case over 3 runs, ratio of work 2A to A; then exit");
  app.add_option("--filter", c.filter, "strategies to run: comma-separated globs (fnmatch)")->capture_default_str();
  app.add_option("--sizes", given.sizes, "records per response, comma-separated (default: the suite's)");
  app.add_option("--inflight", given.inflight,
                 "requests in flight at once, comma-separated (each a case of its own): N kept-alive connections, one "
                 "request in flight on each; an op is then one round of N requests. Strategies that run one request at "
                 "a time show N > 1 as not applicable")
      ->capture_default_str();
  add_ranged_option(app, "--max-inflight", given.max_inflight,
                    "--inflight refuses counts above this (one connection, so one file descriptor, per request)",
                    std::size_t{1}, std::size_t{1} << 20);
  add_ranged_option(app, "--client-threads", c.client_threads,
                    "client threads per case: T copies of the case's strategy, each made anew with its own ring or event "
                    "loop and its own --inflight connections, each on its own thread, pinned to its own CPU where there "
                    "are CPUs (the client's first, then the others, the server's among them); an op is then one op of "
                    "every thread at once, the per-request columns divide by T x In flight",
                    std::size_t{1}, kMaxClientThreadsLimit);
  add_ranged_option(app, "--max-client-threads", given.max_client_threads,
                    "--client-threads refuses counts above this (default: the CPUs this process may use, so that no two "
                    "client threads share a CPU unless asked to)",
                    std::size_t{1}, kMaxClientThreadsLimit);
  app::add_choice_option(app, "--payload", c.payload, "the records' shape (default: the suite's)",
                         {strategies::Payload::weather, strategies::Payload::repos, strategies::Payload::github,
                          strategies::Payload::profiles},
                         strategies::payload_name, /*show_default=*/false);
  app::add_choice_option(app, "--connection", c.connection,
                         "pooled (one kept-alive connection per case) or fresh (every strategy opens a new connection "
                         "per request and closes it after the response)",
                         {strategies::Connection::pooled, strategies::Connection::fresh}, strategies::connection_name);
  app::add_choice_list_option(
      app, "--client", c.clients,
      "comma-separated, each case under each in turn: pooled (one client per case, set up before the clock runs), "
      "fresh (every op makes, sets up, runs once and destroys the whole client, inside the timed op: ring or event "
      "loop, client object, pool, buffers, connection, as a new HttpClient per request; not with --inflight above 1 "
      "nor with --connection fresh, since a fresh client opens its own connection) or inflight (a pooled client of "
      "the row's N-in-flight form, InflightClient or the peer's event loop, with one request in flight: against "
      "pooled, what the one-request client's own code is worth; not with --inflight above 1)",
      {strategies::Client::pooled, strategies::Client::fresh, strategies::Client::inflight}, strategies::client_name);
  app::add_choice_option(app, "--server-mode", c.server_mode,
                         "cached (the server serializes each size once and answers from its cache with "
                         "Content-Length) or seed (GET bodies serialized per request and sent in 16 KiB chunks as "
                         "they are serialized, as the seeds' ASP.NET Core servers answer)",
                         {strategies::ServerMode::cached, strategies::ServerMode::seed}, strategies::server_mode_name);
  app.add_option("--ring-buffers", c.ring.buffers,
                 "the provided-buffer rows' ring: this many buffers (a power of two, at most 32768) instead of each "
                 "row's own (provided_buffers and provided_bundles 64, provided_incremental 16, provided_incremental_own 2 "
                 "per connection)")
      ->check(CLI::Range(1u, kMaxRingBuffers));
  app.add_option("--ring-buffer-bytes", c.ring.buffer_bytes,
                 "the provided-buffer rows' ring: buffers of this many bytes instead of each row's own "
                 "(provided_buffers and provided_bundles 65536, provided_incremental 262144; provided_incremental_own "
                 "1048576 at one connection, split by N)")
      ->check(CLI::Range(1u, kMaxRingBufferBytes));
}

// How it is measured: iterations, the adaptive stop, what is counted, allocators.
void add_measurement_options(CLI::App& app, CliOptions& o, Given& given) {
  MeasurementPlan& m = o.plan.measurement;
  RunnerOptions& r = m.runner;
  add_ranged_option(app, "--iteration-time", r.iteration_time_ms,
                    "ms one iteration should last at least (pilot's goal)", 0.001, 3.6e6);
  add_ranged_option(app, "--warmup", r.warmup, "warm-up iterations per case", 0u, 1000u);
  add_ranged_option(app, "--iterations", r.iterations,
                    "measured iterations before the adaptive stop may end a case", 1u, 100000u);
  given.max_iterations =
      add_ranged_option(app, "--max-iterations", r.max_iterations, "measured iterations at most", 1u, 100000u);
  given.target_error_percent = r.target_error * 100;
  add_ranged_option(app, "--target-error", given.target_error_percent,
                    "stop early when Error is below this % of the Mean (the 99.9 % CI half-width)", 0.001, 100.0);
  add_ranged_option(app, "--max-ops-per-iteration", r.max_ops_per_iteration,
                    "the pilot does not grow past this", uint64_t{1}, uint64_t{1} << 40);
  add_ranged_option(app, "--max-pilot-stages", r.max_pilot_stages, "re-estimates before the pilot settles", 1u, 1000u);
  add_ranged_option(app, "--phase-samples", r.phase_samples,
                    "ops per case whose phase timeline is kept (evenly spread)", std::size_t{1}, std::size_t{1} << 26);
  app.add_flag("--no-interleave", given.no_interleave,
               "one case after another instead of the default order-balanced rounds (A B C, C A B, ...), whose "
               "ratios come from paired rounds (ratios then pair samples taken minutes apart)");
  app.add_flag("--no-memory", given.no_memory, "do not count allocations");
  app.add_flag("--no-phases", given.no_phases, "do not stamp the request phase timeline");
  app.add_flag("--counters", m.counters, "read perf_event counters around every measured iteration");
  app.add_option("--allocators", given.allocators,
                 "run the suite once per allocator, each in a child under LD_PRELOAD: system,mimalloc,jemalloc,tcmalloc");
  add_ranged_option(app, "--job-timeout-ms", m.job_timeout, "an allocator job's limit", 1LL, 864'000'000LL);
  add_ranged_option(app, "--job-max-output-mb", m.job_max_output_mb,
                    "largest report an allocator job may send", std::size_t{1}, std::size_t{1} << 20);
  add_ranged_option(app, "--self-check-work", m.self_check_work,
                    "spin steps of the self-check's work A", uint64_t{1}, uint64_t{1} << 40);
  // Hidden: the protocol between an allocator job's parent and child (allocators.hpp).
  app.add_option("--job-output-fd", o.plan.job.output_fd)->group("");
  app.add_option("--job-allocator", given.job_allocator)->group("");
}

// Where it runs: the server (embedded or --url), the link to it, CPUs, limits on the server's life.
void add_testbed_options(CLI::App& app, CliOptions& o, Given& given) {
  ServerPlan& server = o.plan.server;
  LinkPlan& link = o.plan.link;
  app.add_option("--url", given.url, "use this server (http://host:port) instead of starting the embedded one");
  app.add_option("--link", given.link,
                 "the path to the embedded server: loopback, or an emulated link (needs root): a profile (10g, 1g, wan) "
                 "or rate=...,delay=...[,jitter=...][,loss=...][,mtu=...][,queue=...][,gso=on|off]")
      ->capture_default_str();
  app::add_choice_option(app, "--link-leg", link.leg,
                         "where an emulated --link goes: client (bench <-> the embedded server) or upstream (the proxy "
                         "suite's server <-> its upstream, a second embedded server; bench <-> server over loopback)",
                         {LinkLeg::client, LinkLeg::upstream}, link_leg_name);
  app.add_option("--wire", link.wire, "link emulator binary for --link (default: next to bench)");
  app.add_option("--server", server.binary, "server binary to start (default: next to bench)");
  add_ranged_option(app, "--server-start-timeout-ms", server.start_timeout,
                    "limit for 'listening on' and GET /health", 1LL, 3'600'000LL);
  add_ranged_option(app, "--server-stop-timeout-ms", server.stop_timeout,
                    "SIGTERM grace period before SIGKILL", 1LL, 3'600'000LL);
  add_ranged_option(app, "--request-timeout-ms", server.request_timeout,
                    "connect and per-operation deadline of every request, and of the size check before the first case",
                    1LL, 3'600'000LL);
  app.add_option("--cpu", given.cpu, "pin the client to this CPU (default: the first allowed; the server gets another)")
      ->check(CLI::Range(0, CPU_SETSIZE - 1));
  app::add_server_cpu_option(app, o.plan.placement.server_cpu,
                             "embedded server's CPU: auto (another than the client's), none (not pinned) or a number");
}

// What it writes: reports, their formats and columns, and the profiler's control FIFOs.
void add_output_options(CLI::App& app, CliOptions& o, Given& given) {
  OutputPlan& out = o.plan.outputs;
  app.add_option("--out", out.out, "results root: reports go to OUT/<UTC timestamp>/")->capture_default_str();
  app.add_option("--format", given.formats,
                 "report files to write: md,csv,json,gbench (google-benchmark's JSON, report.gbench.json),html (one page)")
      ->capture_default_str();
  app.add_option("--columns", given.columns,
                 "extra table columns, comma-separated: per-op latency percentiles " + known_columns());
  app.add_option("--perf-control", given.perf_control,
                 "CTL,ACK FIFOs of `perf record --control`: profile only the measured iterations (set by tools/profile; "
                 "their timed segments go to perf-spans.tsv next to the reports)");
  add_ranged_option(app, "--perf-control-timeout-ms", out.perf_control_timeout,
                    "wait for perf's ack at most this long", 1LL, 3'600'000LL);
  app.add_option("--seeds-page", out.seeds_page, "bench seeds: the page written once every seed ran to the end")
      ->capture_default_str();
}

// A before/after run: the two builds, what differs between them, the rounds, the verdicts' band and the
// gate; the calibrated slowdown that checks it; and a worker's hidden pipes.
void add_before_after_options(CLI::App& app, CliOptions& o, Given& given) {
  AbPlan& ab = o.plan.ab;
  app.add_option("--before", ab.before,
                 "a before/after run: this bench binary (the build before a change) and --after's measured in the "
                 "same rounds, each case once in each per round, back to back; after / before per case with its "
                 "interval and a verdict (docs/measuring.md)");
  app.add_option("--after", ab.after, "the bench binary of the build after the change (with --before)");
  app.add_option("--before-code", ab.before_code,
                 "the --before build carries another commit's code under test: which, and its folders "
                 "(\"3e1a3d6 (http/src, json/src)\"; tools/bench ab HARNESS:CODE:FOLDERS sets it), named by the "
                 "report and its page");
  app.add_option("--after-code", ab.after_code, "as --before-code, for the --after build");
  app::add_choice_option(app, "--compare-side", ab.side,
                         "what the change is in: client (both builds send to one embedded server, started once) or "
                         "server (each build starts its own embedded server, on the same CPU)",
                         {CompareSide::client, CompareSide::server}, compare_side_name);
  add_ranged_option(app, "--rounds", ab.rounds,
                    fmt::format("a before/after run's rounds, each case once in each build per round (its iterations "
                                "last --iteration-time, {:g} ms unless given)", kAbIterationTimeMs),
                    2u, 100000u);
  add_ranged_option(app, "--noise-band", given.noise_band_percent,
                    "a before/after run's equivalence band, %: a change counts when its interval lies wholly beyond it",
                    0.0, 100.0);
  app.add_option("--fail-over", given.fail_over_percent,
                 "a before/after run's gate, %: exit 4 when a case's interval lies wholly above 1 + this")
      ->check(CLI::Range(0.0, 1000.0));
  add_ranged_option(app, "--worker-timeout-ms", ab.worker_timeout,
                    "a before/after run: the longest a worker may take to answer one step", 1LL, 86'400'000LL);
  app.add_option("--slowdown", given.slowdown,
                 "STRATEGY:PERCENT: add a busy wait of PERCENT % of each op's own time to every case of STRATEGY (a "
                 "known change, to check a before/after run: there the after build's; the before build runs the same "
                 "wrapper at 0 %)");
  app.add_option("--ab-worker-in", ab.worker_in_fd)->group("");
  app.add_option("--ab-worker-out", ab.worker_out_fd)->group("");
}

// --slowdown STRATEGY:PERCENT into the runner's options; the refusal's text otherwise.
std::optional<std::string> finish_slowdown(RunPlan& plan, const std::string& text) {
  if (text.empty()) return std::nullopt;
  const auto colon = text.rfind(':');
  double percent = 0;
  if (colon != std::string::npos && colon > 0) {
    const std::string number = text.substr(colon + 1);
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), percent);
    if (error != std::errc() || end != number.data() + number.size()) percent = -1;
  }
  if (colon == std::string::npos || colon == 0 || !(percent >= 0) || percent > 1000) {
    return fmt::format("--slowdown {}: not STRATEGY:PERCENT with PERCENT in [0, 1000]", text);
  }
  const std::string strategy = text.substr(0, colon);
  if (strategies::find(strategy) == nullptr) return fmt::format("--slowdown {}: no strategy {}", text, strategy);
  plan.measurement.runner.slowdown_strategy = strategy;
  plan.measurement.runner.slowdown_percent = percent;
  return std::nullopt;
}

// The before/after run's choices, checked: both builds given and executable, what it cannot combine with.
std::optional<std::string> finish_before_after(const CLI::App& app, RunPlan& plan, const Given& given) {
  AbPlan& ab = plan.ab;
  ab.noise_band = given.noise_band_percent / 100;
  if (given.fail_over_percent >= 0) ab.fail_over = given.fail_over_percent / 100;
  if ((ab.worker_in_fd >= 0) != (ab.worker_out_fd >= 0)) return "--ab-worker-in and --ab-worker-out go together";
  if (ab.before.empty() != ab.after.empty()) return "--before and --after go together";
  if (ab.before.empty() && (!ab.before_code.empty() || !ab.after_code.empty())) {
    return "--before-code and --after-code need --before and --after";
  }
  if (!ab.parent()) {
    if (ab.fail_over) return "--fail-over needs --before and --after";
    return std::nullopt;
  }
  for (const std::string* path : {&ab.before, &ab.after}) {
    if (::access(path->c_str(), X_OK) != 0) return fmt::format("{}: not an executable file", *path);
  }
  if (plan.cases.seeds) return "--before/--after: a suite, not the seeds";
  if (!plan.measurement.allocators.empty()) return "--before/--after with --allocators: one allocator per run";
  if (plan.link.spec.emulated()) return "--before/--after with --link: the workers send over loopback only";
  if (plan.server.external && ab.side == CompareSide::server) {
    return "--compare-side server starts each build's own server; --url names one";
  }
  if (plan.outputs.perf_control) return "--before/--after with --perf-control: profile one build at a time";
  if (plan.measurement.counters) return "--before/--after with --counters: not supported";
  // Many short rounds rather than a suite's few long ones: a pair's two iterations are then closer in time,
  // so less of the machine's drift falls between them, and the median has more values.
  if (app.count("--iteration-time") == 0) plan.measurement.runner.iteration_time_ms = kAbIterationTimeMs;
  if (ab.fail_over && *ab.fail_over < ab.noise_band) {
    return fmt::format("--fail-over {:g} is below --noise-band {:g}: a case within the band is not slower",
                       *ab.fail_over * 100, ab.noise_band * 100);
  }
  return std::nullopt;
}

// The seeds set their own sizes, payloads and conditions (seeds.hpp): flags that would change them are
// refused rather than ignored.
std::optional<std::string> check_seeds_flags(const CLI::App& app, RunPlan& plan, const Given& given) {
  for (const char* flag : {"--sizes", "--payload", "--connection", "--server-mode", "--inflight", "--allocators",
                           "--url", "--link", "--link-leg", "--ring-buffers", "--ring-buffer-bytes"}) {
    if (app.count(flag) > 0) return fmt::format("seeds: {} does not apply (each seed sets its own)", flag);
  }
  // About 20 minutes for every seed on a 2-core machine: fewer rounds than a suite's 100 at most, enough
  // for the median ratio's 95 % interval.
  RunnerOptions& r = plan.measurement.runner;
  if (given.max_iterations->count() == 0) r.max_iterations = std::max(r.iterations, kSeedsMaxIterations);
  return std::nullopt;
}

// What the cases are: the suite, its sizes and payload unless given, the in-flight counts and threads.
std::optional<std::string> finish_cases(const CLI::App& app, RunPlan& plan, const Given& given) {
  CasesPlan& c = plan.cases;
  c.seeds = given.suite == kSeedsCommand;
  c.suite = find_suite(c.seeds ? "get" : given.suite);
  if (c.suite == nullptr) return "unknown suite " + given.suite;
  if (c.seeds) {
    if (auto refused = check_seeds_flags(app, plan, given)) return refused;
  } else if (!given.sizes.empty()) {
    auto list = parse_sizes(given.sizes);
    if (!list) return "--sizes: " + list.error().message;
    c.sizes = *list;
  } else {
    c.sizes.assign(c.suite->sizes.begin(), c.suite->sizes.end());
  }
  if (app.count("--payload") == 0) c.payload = c.suite->payload;
  auto inflight_list = parse_inflight(given.inflight, given.max_inflight);
  if (!inflight_list) return "--inflight: " + inflight_list.error().message;
  c.inflight = *inflight_list;
  if (auto refused = check_client_threads(c.client_threads, given.max_client_threads, plan.measurement.counters)) {
    return "--client-threads: " + *refused;
  }
  if ((c.ring.buffers & (c.ring.buffers - 1)) != 0) {
    return fmt::format("--ring-buffers {} is not a power of two (a buffer ring's size must be)", c.ring.buffers);
  }
  return std::nullopt;
}

// The emulated link's refusals: a spec that parses, a leg that has a link to take.
std::optional<std::string> finish_link(RunPlan& plan, const Given& given) {
  auto spec = link::parse_link_spec(given.link);
  if (!spec) return "--link: " + spec.error();
  plan.link.spec = std::move(*spec);
  if (plan.link.spec.emulated() && plan.server.external) {
    return "--link " + given.link + " and --url: an emulated link leads to the embedded server; for a server "
           "elsewhere, the path to it is the link";
  }
  if (plan.link.leg == LinkLeg::upstream) {
    if (!plan.link.spec.emulated()) {
      return "--link-leg upstream needs an emulated --link (rate=...,delay=... or a profile), not " + given.link;
    }
    if (plan.cases.suite->method != strategies::Method::proxy) {
      return fmt::format("--link-leg upstream: only the proxy suite's server fetches from an upstream, not {}",
                         given.suite);
    }
  }
  return std::nullopt;
}

// The lists and choices of a suite run (or a seeds run), checked and stored: a refusal's text, or none.
std::optional<std::string> finish_run_plan(const CLI::App& app, RunPlan& plan, const Given& given) {
  RunnerOptions& r = plan.measurement.runner;
  if (r.max_iterations < r.iterations) {
    return fmt::format("--max-iterations {} is below --iterations {}", r.max_iterations, r.iterations);
  }
  r.target_error = given.target_error_percent / 100;
  r.memory = !given.no_memory;
  r.phases = !given.no_phases;
  r.interleave = !given.no_interleave;
  if (auto refused = finish_cases(app, plan, given)) return refused;
  auto format_list = parse_formats(given.formats);
  if (!format_list) return "--format: " + format_list.error().message;
  plan.outputs.formats = *format_list;
  if (!given.columns.empty()) {
    auto column_list = parse_columns(given.columns);
    if (!column_list) return "--columns: " + column_list.error().message;
    plan.outputs.columns = *column_list;
  }
  if (!given.allocators.empty()) {
    auto list = alloc::parse_allocator_list(given.allocators);
    if (!list) return "--allocators: " + list.error().message;
    plan.measurement.allocators = *list;
  }
  if (!given.job_allocator.empty()) {
    plan.job.allocator = alloc::parse_allocator(given.job_allocator);
    if (!plan.job.allocator) return "--job-allocator: unknown allocator " + given.job_allocator;
  }
  if (plan.job.output_fd >= 0 && !plan.job.allocator) return "--job-output-fd needs --job-allocator";
  if (!given.perf_control.empty()) {
    auto paths = parse_perf_control(given.perf_control);
    if (!paths) return "--perf-control: " + paths.error().message;
    plan.outputs.perf_control = std::move(*paths);
  }
  if (!given.url.empty()) {
    auto url = http::Url::parse(given.url);
    if (!url) return "--url: " + url.error().message();
    plan.server.external = ExternalServer{.url = given.url, .host = std::string(url->host), .port = url->port};
  }
  if (given.cpu >= 0) plan.placement.client_cpu = given.cpu;
  if (auto refused = finish_link(plan, given)) return refused;
  if (auto refused = finish_slowdown(plan, given.slowdown)) return refused;
  return finish_before_after(app, plan, given);
}

}  // namespace

ParsedCommandLine parse_command_line(const std::vector<std::string>& arguments) {
  CliOptions o;
  o.plan.arguments = arguments;
  Given given;
  Subcommands sub;

  CLI::App app{
      "bench: fetch-and-deserialize benchmarks of ringlab's strategies against the embedded server (or --url),\n"
      "reported as BenchmarkDotNet does."};
  app.name("bench");
  add_subcommands(app, sub);
  app.set_version_flag("--version", version_text(), "print the version and the git commit it was built from");
  app.footer("\n" + render_legend());
  add_case_options(app, o, given);
  add_measurement_options(app, o, given);
  add_testbed_options(app, o, given);
  add_output_options(app, o, given);
  add_before_after_options(app, o, given);

  ParsedCommandLine parsed;
  if (std::optional<app::ParseEnd> end = app::parse_arguments(app, arguments)) {
    parsed.exit_code = end->status == 0 ? 0 : kExitUsage;
    parsed.output = std::move(end->output);
    return parsed;
  }
  const auto refuse = [&parsed](std::string message) {
    parsed.exit_code = kExitUsage;
    parsed.output = "bench: " + std::move(message) + "\n";
    return parsed;
  };
  if (sub.compare_command->parsed()) {
    o.compare = std::move(sub.compare);
  } else if (sub.report_command->parsed()) {
    o.results_page = std::move(sub.results_page);
  } else if (sub.load_command->parsed()) {
    if (auto refused = app::finish_load_arguments(sub.load)) return refuse("load: " + *refused);
    o.plan.server.binary = sub.load.server;
    o.load = std::move(sub.load.command);
  } else if (auto refused = finish_run_plan(app, o.plan, given)) {
    return refuse(*refused);
  } else {
    o.plan.options = app::option_values(app);
  }
  parsed.options = std::move(o);
  return parsed;
}

}  // namespace ringlab::bench
