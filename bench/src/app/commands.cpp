// The commands of `bench` (cli.hpp): run_bench() picks one; what they share is here, each command
// is its own file (commands.hpp).
#include "commands.hpp"

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "ringlab/bench/core/compare.hpp"
#include "ringlab/bench/measure/cycle_counter.hpp"
#include "ringlab/bench/report/reporters.hpp"
#include "ringlab/bench/run/suites.hpp"

namespace ringlab::bench {

namespace app {

volatile std::sig_atomic_t g_cancel = 0;

int interrupted_exit_code() { return g_cancel > 0 ? 128 + g_cancel : kExitInterrupted; }

namespace {

extern "C" void on_stop_signal(int signal_number) {
  g_cancel = signal_number;
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(signal_number, &dfl, nullptr);
}

}  // namespace

void install_stop_signals() {
  struct sigaction sa{};
  sa.sa_handler = &on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

int report_error(std::string_view message, int code) {
  std::cerr << "bench: " << message << "\n";
  return code;
}

void print_written(const std::vector<std::filesystem::path>& written) {
  if (written.empty()) return;
  // One line for the files of one folder: results/<run>/report.{md,csv,json}.
  std::vector<std::string> names;
  for (const auto& path : written) names.push_back(path.filename().string());
  const std::string folder = written.front().parent_path().string();
  // One path a line: a path cannot be wrapped, and the console keeps to kConsoleWidth.
  std::cout << "Reports (every column, every warning, the legend): " << folder << "/"
            << (names.size() == 1 ? names.front() : "{" + join(names, ",") + "}") << "\n";
  for (const auto& path : written) {
    if (path.filename() == "report.json") {
      std::cout << "Plots: tools/plot " << path.string() << "\n"
                << "A results page for docs/results: tools/bench report " << path.string() << "\n";
    }
  }
}

int present_run(const Report& report, const RunPlan& plan, double measuring_seconds, std::string_view perf_spans) {
  std::cout << render_console(report) << "\n" << std::flush;
  auto written = write_reports(report, plan.outputs.out, plan.outputs.formats, std::time(nullptr));
  if (!written) return report_error(written.error().message);
  print_written(*written);
  if (!perf_spans.empty() && !written->empty()) {
    const std::filesystem::path spans = written->front().parent_path() / "perf-spans.tsv";
    if (auto done = write_text_file(spans, perf_spans); !done) return report_error(done.error().message);
    std::cout << "Perf spans: " << spans.string() << "\n";
  }
  const Suite* full = find_suite("get");
  if (report.config.suite == "headline" && full != nullptr && !report.cases.empty()) {
    // The full table's size and, at this run's pace, its duration: a figure of this machine, not a guess.
    Selection selection;
    const auto cases = build_cases(*full, strategies::registry(), selection);
    const double per_case = measuring_seconds / static_cast<double>(report.cases.size());
    if (cases) {
      std::cout << fmt::format("The full table: tools/bench get, every GET strategy at 10, 100, 1000 and 10000 records "
                               "({} cases, about {:.0f} min at this run's {:.{}f} s per case)\n",
                               cases->size(), std::ceil(per_case * static_cast<double>(cases->size()) / 60), per_case,
                               per_case < 10 ? 1 : 0);
    }
  }
  std::vector<std::string> others;
  for (const Suite& suite : suites()) {
    if (suite.name != report.config.suite) others.emplace_back(suite.name);
  }
  std::cout << "Other suites: " << join(others, ", ") << " (tools/bench --list); every column in the terminal: --columns all\n"
            << std::flush;
  return 0;
}

int exit_code_for(const std::vector<CaseResult>& cases) {
  for (const CaseResult& c : cases) {
    if (c.status == CaseStatus::failed) return kExitFailed;
  }
  return 0;
}

// The results root exists (made here if need be) and this process may write in it.
Status check_out_root(const std::string& out) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) return fail(fmt::format("--out {}: {}", out, ec.message()));
  if (::access(out.c_str(), W_OK | X_OK) != 0) return fail(errno_message("--out: access", out, errno));
  return {};
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

}  // namespace app

namespace {

std::string self_executable(const char* argv0) {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) return std::string(path, static_cast<std::size_t>(n));
  return argv0;
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
  if (options.results_page) return app::run_results_page_command(*options.results_page);
  if (options.load) {
    return app::run_load_command(*options.load, options.plan.server, self_executable(argc > 0 ? argv[0] : "bench"));
  }
  if (options.list) {
    std::cout << render_list(strategies::registry()) << std::flush;
    return 0;
  }
  // Calibrate the cycle counter before anything is measured or forked.
  (void)tick_clock();
  if (options.self_check) return app::run_self_check_command(options.plan);
  const std::string executable = self_executable(argc > 0 ? argv[0] : "bench");
  const RunPlan& plan = options.plan;
  if (plan.ab.worker()) return app::run_worker(plan, executable);
  if (plan.ab.parent()) return app::run_before_after(plan, executable);
  if (plan.cases.seeds) return app::run_seeds_command(plan, executable);
  if (!plan.measurement.allocators.empty() && plan.job.output_fd < 0) return app::run_allocator_jobs(plan, executable);
  return app::run_suite(plan, executable);
}

}  // namespace ringlab::bench
