// `bench [SUITE]`: one suite run against the embedded server (or --url), with the client and the
// server placed on CPUs, the perf hooks, a stop on SIGINT/SIGTERM, and the reports. In an allocator
// job's child, the same run with its report sent to the parent instead.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fmt/format.h>
#include <iostream>

#include "commands.hpp"
#include "testbed.hpp"
#include "ringlab/base/cpus.hpp"
#include "ringlab/bench/link/link_session.hpp"
#include "ringlab/bench/measure/cycle_counter.hpp"
#include "ringlab/bench/measure/environment.hpp"
#include "ringlab/bench/measure/perf_control.hpp"
#include "ringlab/bench/measure/perf_counters.hpp"
#include "ringlab/bench/process/allocators.hpp"
#include "ringlab/bench/process/server_process.hpp"
#include "ringlab/bench/run/progress.hpp"
#include "ringlab/bench/run/suites.hpp"
#include "ringlab/http/url.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::bench::app {

namespace {

// A measured RTT further than this from the configured one is a warning in the report's header.
constexpr double kLinkRttTolerance = 0.20;

// The embedded server's --max-connections: the connections the run's cases hold, plus this many for
// what they open beside them, and never below this floor (the server's own default), so that a run of
// few cases gets the server a user would start.
constexpr std::size_t kConnectionsBesideHeld = 1024;
constexpr std::size_t kServerMinConnections = 4096;

// perf_event counters around measured iterations: one counter set per case, opened when the case
// starts measuring and closed when it ends.
class PerfCounterHook final : public IterationHook {
 public:
  explicit PerfCounterHook(std::size_t cases) : counters_(cases) {}

  Status case_begin(std::size_t index, const CaseSpec&) override {
    counters_[index].emplace(perf::PerfCounters::open());
    return {};
  }
  void iteration_begin(std::size_t index) noexcept override {
    if (counters_[index]) counters_[index]->begin();
  }
  void iteration_end(std::size_t index, uint64_t ops) noexcept override {
    if (counters_[index]) counters_[index]->end(ops);
  }
  void case_end(std::size_t index, const CaseSpec&, CaseResult& result) override {
    if (!counters_[index]) return;
    result.counters = perf::counter_values(counters_[index]->summary());
    counters_[index].reset();
  }

 private:
  std::vector<std::optional<perf::PerfCounters>> counters_;
};

// perf record switched on for the measured iterations of each case only. Each timed segment of a
// measured iteration (the ops between two clock readings, iteration_begin to iteration_end) is kept
// with its case and CLOCK_MONOTONIC start and end; tools/profile records with
// `perf record -k CLOCK_MONOTONIC` and gives each sample to the case whose segment holds it
// (perf-spans.tsv, written next to the reports). Per segment rather than per case: interleaved rounds
// keep perf on from the first case's first measured iteration to the last case's last, with every
// case's iterations in turn, and the verified ops and the runner's bookkeeping between segments are no
// case's work. The segments are stored in room reserved up front (the hooks around iterations must not
// allocate); a segment beyond it is counted, not kept, and its samples then belong to no case.
class PerfControlHook final : public IterationHook {
 public:
  // `max_segments`: room for every segment the run can have (two per measured iteration).
  PerfControlHook(PerfControl control, std::vector<std::string> case_names, std::size_t max_segments)
      : control_(std::move(control)), case_names_(std::move(case_names)) {
    segments_.reserve(max_segments);
  }

  Status case_begin(std::size_t, const CaseSpec&) override { return control_.enable(); }
  void iteration_begin(std::size_t) noexcept override { segment_start_ns_ = monotonic_ns(); }
  void iteration_end(std::size_t index, uint64_t) noexcept override {
    if (segments_.size() == segments_.capacity()) {
      ++segments_not_kept_;
      return;
    }
    segments_.push_back(Segment{index, segment_start_ns_, monotonic_ns()});
  }
  void case_end(std::size_t, const CaseSpec&, CaseResult& result) override {
    if (auto status = control_.disable(); !status) {
      // The profile now holds more than this case: the case's numbers are fine, the profile is not.
      result.status = CaseStatus::failed;
      result.reason = "perf control: " + status.error().message;
    }
  }

  // "# case<TAB>start_ns<TAB>end_ns" and a line per timed segment, in the order they ran.
  [[nodiscard]] std::string spans() const {
    std::string text = "# case\tstart_ns\tend_ns (CLOCK_MONOTONIC: the timed segments of measured iterations)\n";
    if (segments_not_kept_ > 0) {
      text += fmt::format("# {} segments not kept: more than the {} planned\n", segments_not_kept_, segments_.capacity());
    }
    for (const Segment& segment : segments_) {
      text += fmt::format("{}\t{}\t{}\n", case_names_.at(segment.index), segment.start_ns, segment.end_ns);
    }
    return text;
  }

 private:
  struct Segment {
    std::size_t index = 0;
    long long start_ns = 0;
    long long end_ns = 0;
  };

  static long long monotonic_ns() noexcept {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec;
  }

  PerfControl control_;
  std::vector<std::string> case_names_;  // by case index
  std::vector<Segment> segments_;
  long long segment_start_ns_ = 0;
  std::size_t segments_not_kept_ = 0;
};

// One GET per payload and size, status line only: the server refuses a count above its limit with 400,
// which would otherwise fail every case of that size (after computing the expected checksum of that
// many records, which for an absurd size never ends).
// A server that does not answer within `timeout`, or answers what is not HTTP, is at fault (exit 3); one
// that answers anything but 200 refuses the size asked (exit 2).
std::expected<void, RunRefusal> check_sizes_accepted(const Target& target, const std::vector<CaseSpec>& cases,
                                                     std::chrono::milliseconds timeout) {
  std::vector<std::string> asked;
  for (const CaseSpec& spec : cases) {
    if (spec.strategy == nullptr || spec.strategy->method != strategies::Method::get) continue;
    const std::string probe =
        fmt::format("/{}?count={}", strategies::payload_name(spec.config.payload), spec.config.count);
    if (std::find(asked.begin(), asked.end(), probe) != asked.end()) continue;
    asked.push_back(probe);
    auto status = http_get_status(target.host, target.port, probe, timeout);
    if (!status) {
      return std::unexpected(RunRefusal{
          fmt::format("server fault: GET {} (the size check of --sizes {}): {}", probe, spec.config.count,
                      status.error().message),
          kExitServerFault});
    }
    if (*status != 200) {
      return std::unexpected(RunRefusal{fmt::format("--sizes {}: the server answers GET {} with {}: more records "
                                                    "than it serves",
                                                    spec.config.count, probe, *status)});
    }
  }
  return {};
}

// After SIGINT/SIGTERM: the report holds the cases finished by then and says it is partial.
void mark_partial(Report& report, int signal_number) {
  std::size_t finished = 0;
  for (const CaseResult& c : report.cases) {
    if (c.status == CaseStatus::ok) ++finished;
  }
  report.partial = true;
  report.environment.warnings.push_back(fmt::format(
      "partial report: interrupted by {} with {} of {} cases measured{}", signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
      finished, report.cases.size(), finished < report.cases.size() ? " (the others say why they have no numbers)" : ""));
}

// Where the client threads run, said once in the report: with as many threads as CPUs, some share the
// server's.
std::string client_threads_warning(std::size_t client_threads, const std::vector<int>& placed, int server_cpu) {
  std::string where = "not pinned";
  if (!placed.empty()) {
    std::vector<int> used;
    for (std::size_t i = 0; i < client_threads; ++i) used.push_back(placed[i % placed.size()]);
    where = fmt::format("pinned to CPUs {}", fmt::join(used, ", "));
    const bool with_server = server_cpu >= 0 && std::find(used.begin(), used.end(), server_cpu) != used.end();
    const bool doubled = client_threads > placed.size();
    if (with_server) where += fmt::format(" (CPU {} is the server's too)", server_cpu);
    if (doubled) where += " (more threads than CPUs: some share one)";
  }
  return fmt::format("client threads: {} per case, {}", client_threads, where);
}

// The report's header before any case: the machine, the placement, the server's environment, the
// link as measured; the ring's features go to the run's context.
Report start_report(const RunPlan& plan, const Testbed& bed, const Placement& placement,
                    const alloc::Detected& detected, std::optional<LinkInfo> link_info, RunContext& context) {
  // The server's own environment: for an embedded server the same machine, for --url the other one.
  auto server_environment = fetch_server_environment(bed.target.host, bed.target.port, plan.server.start_timeout);
  EnvironmentInputs inputs;
  if (auto ring = net::Ring::create(); ring) {
    context.features = (*ring)->features();
    inputs.io_uring_features = describe_features(context.features);
  } else {
    inputs.io_uring_features = "unavailable: " + ring.error().message();
  }
  inputs.client_cpu = placement.client_cpus.empty() ? -1 : placement.client_cpus.front();
  inputs.server_cpu = placement.server_cpu;
  inputs.server = bed.target.description;
  inputs.allocator = detected.describe();
  inputs.shared_cpu =
      !plan.server.external && (placement.server_cpu < 0 || placement.server_cpu == inputs.client_cpu);

  Report report;
  report.config = report_config(plan);
  report.environment = gather_environment(inputs);
  std::vector<std::string>& warnings = report.environment.warnings;
  if (plan.cases.client_threads > 1) {
    warnings.push_back(client_threads_warning(plan.cases.client_threads, context.client_cpus, placement.server_cpu));
  }
  if (server_environment) {
    report.environment.server_environment = std::move(*server_environment);
  } else {
    warnings.push_back("server environment unknown (GET /env: " + server_environment.error().message + ")");
  }
  if (link_info) {
    const double deviation =
        link_info->configured_rtt_us > 0 ? link_info->measured_rtt_us / link_info->configured_rtt_us - 1 : 0;
    if (std::abs(deviation) > kLinkRttTolerance) {
      warnings.push_back(fmt::format(
          "link: measured RTT {:.0f} us is {:+.0f} % off the configured {:.0f} us (the emulator's timers, the stacks "
          "and the server's own time add to the link's delay)",
          link_info->measured_rtt_us, deviation * 100, link_info->configured_rtt_us));
    }
    report.environment.link = std::move(link_info);
  }
  return report;
}

// The hooks around measured iterations: perf counters (--counters), perf's control FIFOs (--perf-control).
struct Hooks {
  std::optional<PerfCounterHook> counters;
  std::optional<PerfControlHook> control;
  std::vector<IterationHook*> all;
};

Status make_hooks(Hooks& hooks, const RunPlan& plan, const std::vector<CaseSpec>& cases, Report& report) {
  if (plan.measurement.counters) {
    hooks.counters.emplace(cases.size());
    hooks.all.push_back(&*hooks.counters);
    const perf::PerfCounters probe = perf::PerfCounters::open();
    for (const std::string& line : perf::status_lines(probe)) report.environment.warnings.push_back("counters: " + line);
  }
  if (plan.outputs.perf_control) {
    auto control = PerfControl::open(*plan.outputs.perf_control, plan.outputs.perf_control_timeout);
    if (!control) return fail(control.error().message);
    std::vector<std::string> names;
    for (const CaseSpec& spec : cases) names.push_back(case_name(spec));
    // Interleaved, a case runs at most max(max_iterations, balanced rounds) iterations, the rounds
    // being `iterations` rounded up to a multiple of the case count; each has at most two segments.
    const RunnerOptions& runner = plan.measurement.runner;
    const std::size_t iterations = std::max<std::size_t>(runner.max_iterations, runner.iterations) + cases.size() + 1;
    hooks.control.emplace(std::move(*control), std::move(names), 2 * iterations * cases.size());
    hooks.all.push_back(&*hooks.control);
  }
  return {};
}

}  // namespace

ServerProcessOptions suite_server_options(const ServerPlan& server, const std::vector<CaseSpec>& cases,
                                          const std::string& executable, int server_cpu, std::size_t holders) {
  ServerProcessOptions server_options = embedded_server_options(server, executable, server_cpu);
  // A round of a long interleaved run (many cases, long iterations) can leave a case's kept-alive
  // connection idle for longer than the server's default idle timeout (30 s); the harness's own
  // pauses are not what is measured, so the embedded server waits an hour.
  server_options.extra_arguments = {"--idle-timeout", "3600s"};
  // Every case keeps its connections open for the whole run (connections_held): the server admits
  // them all at once, with room for what the cases open on the side (a fresh client's verified ops,
  // --connection fresh, the proxy rows' requests), or the last cases set up would be refused.
  const std::size_t held = connections_held(cases) * std::max<std::size_t>(1, holders);
  server_options.extra_arguments.insert(
      server_options.extra_arguments.end(),
      {"--max-connections",
       std::to_string(std::max<std::size_t>(held + kConnectionsBesideHeld, kServerMinConnections))});
  return server_options;
}

Result<std::vector<CaseSpec>> plan_cases(const RunPlan& plan) {
  const CasesPlan& c = plan.cases;
  const Selection selection{.filter = c.filter,
                            .sizes = c.sizes,
                            .payload = c.payload,
                            .connection = c.connection,
                            .server_mode = c.server_mode,
                            .clients = c.clients,
                            .inflight = c.inflight,
                            .client_threads = c.client_threads,
                            .ring = c.ring};
  auto cases = build_cases(*c.suite, strategies::registry(), selection);
  if (!cases) return fail(cases.error().message);
  return std::move(*cases);
}

std::expected<MeasuredRun, RunRefusal> measure_run(const RunPlan& plan, std::vector<CaseSpec> cases,
                                                   const std::string& executable, const std::string& allocator_name,
                                                   RoundDriver* driver) {
  const auto refused = [](const Error& error, int code = kExitUsage) {
    return std::unexpected(RunRefusal{error.message, code});
  };
  // An allocator job's child or a before/after worker: its report goes to its parent, not to a folder.
  const bool child_job = plan.job.output_fd >= 0 || plan.ab.worker();
  // First, as before anything else is loaded or started: the allocator this process runs on.
  const alloc::Detected detected = alloc::detect_allocator();
  PlacementRequest asked{.client_cpus = {}, .client_takes_rest = false, .server_cpu = plan.placement.server_cpu,
                         .embedded = !plan.server.external};
  if (plan.placement.client_cpu) asked.client_cpus = {*plan.placement.client_cpu};
  auto placement = place(asked);
  if (!placement) return refused(placement.error());
  const int client_cpu = placement->client_cpus.empty() ? -1 : placement->client_cpus.front();
  // A run that cannot write its report fails now, not after the cases.
  if (!child_job) {
    if (auto writable = check_out_root(plan.outputs.out); !writable) return refused(writable.error());
  }
  install_stop_signals();

  Testbed bed;
  bed.link_spec = plan.link.spec;
  if (plan.server.external) {
    if (auto used = bed.use_external_server(plan.server); !used) return refused(used.error(), kExitServerFault);
  } else if (auto started = bed.start_embedded(
                 plan, suite_server_options(plan.server, cases, executable, placement->server_cpu), executable);
             !started) {
    // The link's namespaces need root: that is this machine's refusal, not the server's fault.
    return refused(started.error(), bed.server_attempted ? kExitServerFault : kExitUsage);
  }
  for (CaseSpec& spec : cases) {
    spec.config.host = bed.target.host;
    spec.config.port = bed.target.port;
    spec.config.timeout = plan.server.request_timeout;
  }
  // Every size the server refuses (above its record limit) is an argument error before any case. The
  // server is up by now (started, or its health checked): each GET has a request's limit, not a start's.
  if (auto accepted = check_sizes_accepted(bed.target, cases, plan.server.request_timeout); !accepted) {
    return std::unexpected(accepted.error());
  }
  if (client_cpu >= 0) {
    if (auto pinned = pin_current_thread(client_cpu); !pinned) return refused(pinned.error());
  }
  auto link_info = bed.measure_emulated_link(plan.server);
  if (!link_info) return refused(link_info.error(), kExitServerFault);

  RunContext context;
  context.clock = cycle_counter_clock();
  context.cancel = &g_cancel;
  context.allocator = allocator_name;
  context.driver = driver;
  if (plan.cases.client_threads > 1) context.client_cpus = client_thread_cpus(client_cpu, placement->allowed);
  Report report = start_report(plan, bed, *placement, detected, std::move(*link_info), context);
  Hooks hooks;
  if (auto made = make_hooks(hooks, plan, cases, report); !made) return refused(made.error());
  context.hooks = hooks.all;
  FdProgress progress(STDERR_FILENO, std::nullopt, progress_plan(plan.measurement.runner));
  context.progress = &progress;

  const auto measuring_start = std::chrono::steady_clock::now();
  report.cases = run_cases(cases, plan.measurement.runner, context);
  const double measuring_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - measuring_start).count();
  progress.finish();
  compute_ratios(report);
  {
    LinkInfo* link = report.environment.link ? &*report.environment.link : nullptr;
    for (std::string& warning : bed.stop(link)) report.environment.warnings.push_back(std::move(warning));
  }
  if (g_cancel != 0) mark_partial(report, g_cancel);
  if (!child_job) report.environment.load_average_end = read_load_average();
  return MeasuredRun{std::move(report), measuring_seconds, hooks.control ? hooks.control->spans() : std::string()};
}

int run_suite(const RunPlan& plan, const std::string& executable) {
  const bool child_job = plan.job.output_fd >= 0;
  std::string allocator_name = "n/a";
  if (child_job) {
    // The server forked below must not hold the parent's pipe open.
    ::fcntl(plan.job.output_fd, F_SETFD, FD_CLOEXEC);
    auto verified = alloc::verify_allocator(*plan.job.allocator);  // the parser requires it with the fd
    if (!verified) {
      const std::string text = verified.error().message + "\n";
      [[maybe_unused]] const ssize_t ignored = ::write(plan.job.output_fd, text.data(), text.size());
      return report_error(verified.error().message, kExitFailed);
    }
    allocator_name = verified->name();
  }
  const alloc::Detected detected = alloc::detect_allocator();
  if (!child_job) allocator_name = detected.name();

  // Before any server is started: a filter that selects nothing is an argument error.
  auto cases = plan_cases(plan);
  if (!cases) return report_error(cases.error().message);

  auto measured = measure_run(plan, std::move(*cases), executable, allocator_name);
  if (!measured) return report_error(measured.error().message, measured.error().exit_code);
  Report& report = measured->report;
  if (child_job) {
    if (auto sent = write_report_fd(plan.job.output_fd, report); !sent) {
      return report_error(sent.error().message, kExitFailed);
    }
    return 0;
  }
  if (const int presented = present_run(report, plan, measured->measuring_seconds, measured->perf_spans);
      presented != 0) {
    return presented;
  }
  if (g_cancel != 0) return report_error("interrupted: the report above is partial", interrupted_exit_code());
  return exit_code_for(report.cases);
}

}  // namespace ringlab::bench::app
