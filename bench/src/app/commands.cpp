// What `bench` does once its options are parsed: a suite (with its server, hooks, placement, signals
// and reports), allocator jobs, the self-check, compare (cli.hpp).
#include "ringlab/bench/cli.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <csignal>
#include <ctime>
#include <fmt/format.h>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "ringlab/bench/allocators.hpp"
#include "ringlab/bench/compare.hpp"
#include "ringlab/bench/cycle_counter.hpp"
#include "ringlab/bench/environment.hpp"
#include "ringlab/bench/perf_control.hpp"
#include "ringlab/bench/perf_counters.hpp"
#include "ringlab/bench/progress.hpp"
#include "ringlab/bench/self_check.hpp"
#include "ringlab/bench/server_process.hpp"
#include "ringlab/bench/suites.hpp"
#include "ringlab/http/url.hpp"
#include "ringlab/net/ring.hpp"


namespace ringlab::bench {

namespace {

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

}  // namespace

namespace {

// Set to the signal's number by SIGINT/SIGTERM; the runner stops between iterations, and the cases
// finished by then are reported (a partial report), exit status 128 + the signal. A second signal
// ends the process at once (the default action), and the kernel's PDEATHSIG then stops the server child.
volatile std::sig_atomic_t g_cancel = 0;

int interrupted_exit_code() { return g_cancel > 0 ? 128 + g_cancel : kExitInterrupted; }

extern "C" void on_stop_signal(int signal_number) {
  g_cancel = signal_number;
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(signal_number, &dfl, nullptr);
}

void install_stop_signals() {
  struct sigaction sa{};
  sa.sa_handler = &on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

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

// perf record switched on for the measured iterations of each case only.
class PerfControlHook final : public IterationHook {
 public:
  explicit PerfControlHook(PerfControl control) : control_(std::move(control)) {}

  Status case_begin(std::size_t, const CaseSpec&) override { return control_.enable(); }
  void case_end(std::size_t, const CaseSpec&, CaseResult& result) override {
    if (auto status = control_.disable(); !status) {
      // The profile now holds more than this case: the case's numbers are fine, the profile is not.
      result.status = CaseStatus::failed;
      result.reason = "perf control: " + status.error().message;
    }
  }

 private:
  PerfControl control_;
};

std::string self_executable(const char* argv0) {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) return std::string(path, static_cast<std::size_t>(n));
  return argv0;
}

struct Target {
  std::string host;
  uint16_t port = 0;
  std::string description;
};

// The paths of the reports, and the command that plots the JSON one.
void print_written(const std::vector<std::filesystem::path>& written) {
  for (const auto& path : written) std::cout << "Written: " << path.string() << "\n";
  for (const auto& path : written) {
    if (path.filename() == "report.json") std::cout << "Plot with: tools/plot " << path.string() << "\n";
  }
}

int report_error(std::string_view message, int code = kExitUsage) {
  std::cerr << "bench: " << message << "\n";
  return code;
}

// The results root exists (made here if need be) and this process may write in it.
Status check_out_root(const std::string& out) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) return fail(fmt::format("--out {}: {}", out, ec.message()));
  if (::access(out.c_str(), W_OK | X_OK) != 0) return fail(errno_message("--out: access", out, errno));
  return {};
}

// One GET per payload and size, status line only: the server refuses a count above its limit with 400,
// which would otherwise fail every case of that size (after computing the expected checksum of that
// many records, which for an absurd size never ends).
Status check_sizes_accepted(const Target& target, const std::vector<CaseSpec>& cases,
                            std::chrono::milliseconds timeout) {
  std::vector<std::string> asked;
  for (const CaseSpec& spec : cases) {
    if (spec.strategy == nullptr || spec.strategy->method != strategies::Method::get) continue;
    const std::string route = spec.config.payload == strategies::Payload::repos ? "/repos" : "/weather";
    const std::string probe = fmt::format("{}?count={}", route, spec.config.count);
    if (std::find(asked.begin(), asked.end(), probe) != asked.end()) continue;
    asked.push_back(probe);
    auto status = http_get_status(target.host, target.port, probe, timeout);
    if (!status) return fail(fmt::format("--sizes {}: GET {}: {}", spec.config.count, probe, status.error().message));
    if (*status != 200) {
      return fail(fmt::format("--sizes {}: the server answers GET {} with {}: more records than it serves",
                              spec.config.count, probe, *status));
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

int exit_code_for(const std::vector<CaseResult>& cases) {
  for (const CaseResult& c : cases) {
    if (c.status == CaseStatus::failed) return kExitFailed;
  }
  return 0;
}

// The parent of allocator jobs: one child bench per allocator, then one merged report.
int run_allocator_jobs(const CliOptions& options, const std::string& executable) {
  if (auto reason = alloc::jobs_unsupported_reason()) return report_error("--allocators: " + *reason);
  std::vector<alloc::Allocator> allocators;
  for (const std::string& name : options.config.allocators) allocators.push_back(*alloc::parse_allocator(name));
  const auto jobs = alloc::plan_jobs(allocators);

  Report report;
  report.config = options.config;
  EnvironmentInputs inputs;
  inputs.allocator = "one per job: " + join(options.config.allocators, ", ");
  inputs.server = options.config.url.empty() ? "embedded, one per job" : options.config.url;
  auto ring = net::Ring::create();
  inputs.io_uring_features = ring ? describe_features((*ring)->features()) : "unavailable: " + ring.error().message();
  report.environment = gather_environment(inputs);

  int code = 0;
  std::vector<std::string> job_allocators;
  for (const alloc::Job& job : jobs) {
    const std::string name(alloc::allocator_name(job.allocator));
    if (g_cancel != 0) return report_error("interrupted", kExitInterrupted);
    if (job.missing) {
      report.environment.warnings.push_back("allocator job " + name + " not run: " + *job.missing);
      code = kExitFailed;
      continue;
    }
    std::cerr << "bench: allocator job " << name << (job.preload.empty() ? "" : " (LD_PRELOAD=" + job.preload + ")")
              << "\n";
    alloc::ChildOptions child;
    child.executable = executable;
    child.arguments = alloc::child_arguments(options.arguments, job.allocator);
    child.timeout = options.job_timeout;
    child.max_output_bytes = options.job_max_output_mb << 20;
    auto output = alloc::run_job(job, child);
    if (!output) {
      if (g_cancel != 0) return report_error("interrupted", kExitInterrupted);
      report.environment.warnings.push_back("allocator job " + name + " failed: " + output.error().message);
      code = kExitFailed;
      continue;
    }
    auto child_report = alloc::job_report(job, *output);
    if (!child_report) {
      report.environment.warnings.push_back("allocator job " + name + ": " + child_report.error().message);
      code = kExitFailed;
      continue;
    }
    // Each job proved the allocator it ran on (job_report checks it): its own description goes in
    // the merged header, so the table says what every Allocator column value really was.
    job_allocators.push_back(name + " = " + child_report->environment.allocator);
    if (report.environment.client_cpu < 0) {
      // Each job places its own client and server; the first one's placement is the jobs' placement.
      report.environment.client_cpu = child_report->environment.client_cpu;
      report.environment.server_cpu = child_report->environment.server_cpu;
    }
    merge_reports(report, std::move(*child_report));
  }
  if (!job_allocators.empty()) report.environment.allocator = "one per job: " + join(job_allocators, "; ");
  report.environment.load_average_end = read_load_average();
  std::cout << render_markdown(report) << std::flush;
  auto written = write_reports(report, options.config.out, options.formats, std::time(nullptr));
  if (!written) return report_error(written.error().message);
  print_written(*written);
  return code != 0 ? code : exit_code_for(report.cases);
}

int run_suite(CliOptions& options, const std::string& executable) {
  Config& config = options.config;
  const bool child_job = options.job_output_fd >= 0;
  std::string allocator_name = "n/a";
  if (child_job) {
    // The server forked below must not hold the parent's pipe open.
    ::fcntl(options.job_output_fd, F_SETFD, FD_CLOEXEC);
    const auto expected = alloc::parse_allocator(options.job_allocator);
    if (!expected) return report_error("--job-output-fd needs --job-allocator");
    auto verified = alloc::verify_allocator(*expected);
    if (!verified) {
      const std::string text = verified.error().message + "\n";
      [[maybe_unused]] const ssize_t ignored = ::write(options.job_output_fd, text.data(), text.size());
      return report_error(verified.error().message, kExitFailed);
    }
    allocator_name = verified->name();
  }
  const alloc::Detected detected = alloc::detect_allocator();
  if (!child_job) allocator_name = detected.name();

  const Suite* suite = find_suite(config.suite);
  Selection selection;
  selection.filter = config.filter;
  selection.sizes = config.sizes;
  selection.payload = config.payload == "repos" ? strategies::Payload::repos : strategies::Payload::weather;
  // Before any server is started: a filter that selects nothing is an argument error.
  auto cases = build_cases(*suite, strategies::registry(), selection);
  if (!cases) return report_error(cases.error().message);

  // Placement: client and server on different CPUs when there are two to choose from.
  const std::vector<int> cpus = allowed_cpus();
  int client_cpu = -1;
  int server_cpu = -1;
  if (config.cpu >= 0) {
    if (std::find(cpus.begin(), cpus.end(), config.cpu) == cpus.end()) {
      return report_error(fmt::format("--cpu {}: not among the CPUs this process may use", config.cpu));
    }
    client_cpu = config.cpu;
  } else if (cpus.size() >= 2) {
    client_cpu = cpus.front();
  }
  if (config.server_cpu == "auto") {
    for (int cpu : cpus) {
      if (cpus.size() >= 2 && cpu != client_cpu) {
        server_cpu = cpu;
        break;
      }
    }
  } else if (config.server_cpu != "none") {
    server_cpu = std::stoi(config.server_cpu);  // checked by the parser
    if (std::find(cpus.begin(), cpus.end(), server_cpu) == cpus.end()) {
      return report_error(fmt::format("--server-cpu {}: not among the CPUs this process may use", server_cpu));
    }
  }

  // A run that cannot write its report fails now, not after the cases.
  if (!child_job) {
    if (auto writable = check_out_root(config.out); !writable) return report_error(writable.error().message);
  }

  install_stop_signals();
  std::optional<ServerProcess> server;
  Target target;
  if (!config.url.empty()) {
    const auto url = http::Url::parse(config.url);
    target.host = std::string(url->host);
    target.port = url->port;
    target.description = config.url + " (external)";
    server_cpu = -1;
    // One health check: an unreachable server is one error now, not one per case.
    auto health = http_get_status(target.host, target.port, "/health", options.server_start_timeout);
    if (!health) return report_error(fmt::format("--url {}: GET /health: {}", config.url, health.error().message));
    if (*health != 200) return report_error(fmt::format("--url {}: GET /health answered {}, not 200", config.url, *health));
  } else {
    ServerProcessOptions server_options;
    server_options.executable = options.server.empty() ? default_server_path(executable) : options.server;
    server_options.cpu = server_cpu;
    server_options.start_timeout = options.server_start_timeout;
    // A round of a long interleaved run (many cases, long iterations) can leave a case's kept-alive
    // connection idle for longer than the server's default idle timeout (30 s); the harness's own
    // pauses are not what is measured, so the embedded server waits an hour.
    server_options.extra_arguments = {"--idle-timeout", "3600s"};
    server_options.stop_timeout = options.server_stop_timeout;
    auto started = ServerProcess::start(server_options);
    if (!started) return report_error(started.error().message);
    server.emplace(std::move(*started));
    target.host = server->host();
    target.port = server->port();
    target.description = fmt::format("embedded {} (pid {}) on {}:{}", server_options.executable, server->pid(),
                                     target.host, target.port);
  }
  for (CaseSpec& spec : *cases) {
    spec.config.host = target.host;
    spec.config.port = target.port;
    spec.config.timeout = options.request_timeout;
  }
  // Every size the server refuses (above its record limit) is an argument error before any case.
  if (auto accepted = check_sizes_accepted(target, *cases, options.server_start_timeout); !accepted) {
    return report_error(accepted.error().message);
  }

  if (client_cpu >= 0) {
    if (auto pinned = pin_current_thread(client_cpu); !pinned) return report_error(pinned.error().message);
  }

  RunContext context;
  context.clock = cycle_counter_clock();
  context.cancel = &g_cancel;
  context.allocator = allocator_name;
  EnvironmentInputs inputs;
  {
    auto ring = net::Ring::create();
    if (ring) {
      context.features = (*ring)->features();
      inputs.io_uring_features = describe_features(context.features);
    } else {
      inputs.io_uring_features = "unavailable: " + ring.error().message();
    }
  }
  inputs.client_cpu = client_cpu;
  inputs.server_cpu = server_cpu;
  inputs.server = target.description;
  inputs.allocator = detected.describe();
  inputs.shared_cpu = config.url.empty() && (server_cpu < 0 || server_cpu == client_cpu);

  Report report;
  report.config = config;
  report.environment = gather_environment(inputs);

  std::vector<IterationHook*> hooks;
  std::optional<PerfCounterHook> counter_hook;
  if (config.counters) {
    counter_hook.emplace(cases->size());
    hooks.push_back(&*counter_hook);
    const perf::PerfCounters probe = perf::PerfCounters::open();
    for (const std::string& line : perf::status_lines(probe)) report.environment.warnings.push_back("counters: " + line);
  }
  std::optional<PerfControlHook> control_hook;
  if (!options.perf_control.empty()) {
    auto control = PerfControl::open(options.perf_control, options.perf_control_timeout);
    if (!control) return report_error(control.error().message);
    control_hook.emplace(std::move(*control));
    hooks.push_back(&*control_hook);
  }
  context.hooks = hooks;
  FdProgress progress(STDERR_FILENO, std::nullopt, progress_plan(options.runner));
  context.progress = &progress;

  report.cases = run_cases(*cases, options.runner, context);
  progress.finish();
  compute_ratios(report);
  if (server) {
    if (auto stopped = server->stop(); !stopped) report.environment.warnings.push_back(stopped.error().message);
  }
  if (g_cancel != 0) mark_partial(report, g_cancel);

  if (child_job) {
    if (auto sent = write_report_fd(options.job_output_fd, report); !sent) {
      return report_error(sent.error().message, kExitFailed);
    }
    return 0;
  }
  report.environment.load_average_end = read_load_average();
  std::cout << render_markdown(report) << std::flush;
  auto written = write_reports(report, config.out, options.formats, std::time(nullptr));
  if (!written) return report_error(written.error().message);
  print_written(*written);
  if (g_cancel != 0) return report_error("interrupted: the report above is partial", interrupted_exit_code());
  return exit_code_for(report.cases);
}

int run_self_check_command(const CliOptions& options) {
  install_stop_signals();
  const std::vector<int> cpus = allowed_cpus();
  const int cpu = options.config.cpu >= 0 ? options.config.cpu : (cpus.empty() ? -1 : cpus.front());
  if (cpu >= 0) {
    if (auto pinned = pin_current_thread(cpu); !pinned) return report_error(pinned.error().message);
  }
  RunContext context;
  context.clock = cycle_counter_clock();
  context.cancel = &g_cancel;
  FdProgress progress(STDERR_FILENO);
  context.progress = &progress;
  SelfCheckOptions self;
  self.work = options.self_check_work;
  self.runner = options.runner;
  auto result = run_self_check(self, context);
  progress.finish();
  if (g_cancel != 0) return report_error("interrupted", kExitInterrupted);
  if (!result) return report_error(result.error().message, kExitFailed);
  std::cout << render_self_check(*result) << std::flush;
  return result->spread_ok() && result->ratio_ok() ? 0 : kExitFailed;
}

}  // namespace

int run_bench(int argc, char** argv) {
  std::vector<std::string> arguments(argv + 1, argv + argc);
  ParsedCommandLine parsed = parse_command_line(arguments);
  if (!parsed.options) {
    (parsed.exit_code == 0 ? std::cout : std::cerr) << parsed.output << std::flush;
    return parsed.exit_code;
  }
  CliOptions& options = *parsed.options;
  if (options.compare) return run_compare(*options.compare, std::cout, std::cerr);
  if (options.list) {
    std::cout << render_list(strategies::registry()) << std::flush;
    return 0;
  }
  // Calibrate the cycle counter before anything is measured or forked.
  (void)tick_clock();
  if (options.self_check) return run_self_check_command(options);
  const std::string executable = self_executable(argc > 0 ? argv[0] : "bench");
  if (!options.config.allocators.empty() && options.job_output_fd < 0) return run_allocator_jobs(options, executable);
  return run_suite(options, executable);
}

}  // namespace ringlab::bench
