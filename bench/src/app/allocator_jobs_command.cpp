// `bench SUITE --allocators LIST`: the parent of allocator jobs (allocators.hpp), one child bench per
// allocator, then one merged report.
#include <chrono>
#include <ctime>
#include <iostream>

#include "commands.hpp"
#include "ringlab/bench/measure/environment.hpp"
#include "ringlab/bench/process/allocators.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::bench::app {

int run_allocator_jobs(const RunPlan& plan, const std::string& executable) {
  if (auto reason = alloc::jobs_unsupported_reason()) return report_error("--allocators: " + *reason);
  const auto jobs = alloc::plan_jobs(plan.measurement.allocators);

  Report report;
  report.config = report_config(plan);
  EnvironmentInputs inputs;
  inputs.allocator = "one per job: " + join(report.config.allocators, ", ");
  inputs.server = plan.server.external ? plan.server.external->url : "embedded, one per job";
  auto ring = net::Ring::create();
  inputs.io_uring_features = ring ? describe_features((*ring)->features()) : "unavailable: " + ring.error().message();
  report.environment = gather_environment(inputs);

  int code = 0;
  std::vector<std::string> job_allocators;
  const auto measuring_start = std::chrono::steady_clock::now();
  for (const alloc::Job& job : jobs) {
    const std::string name(alloc::allocator_name(job.allocator));
    if (g_cancel != 0) return report_error("interrupted", kExitInterrupted);
    if (job.missing) {
      report.environment.warnings.push_back("allocator job " + name + " not run: " + *job.missing);
      code = kExitFailed;
      continue;
    }
    alloc::ChildOptions child = alloc::launch_options(executable);
    std::cerr << "bench: allocator job " << name
              << (job.preload.empty() ? "" : " (" + child.preload_variable + "=" + job.preload + ")") << "\n";
    child.arguments = alloc::child_arguments(plan.arguments, job.allocator);
    child.timeout = plan.measurement.job_timeout;
    child.max_output_bytes = plan.measurement.job_max_output_mb << 20;
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
      // Likewise its server's environment and the link it built and measured (each job builds its own).
      report.environment.server_environment = child_report->environment.server_environment;
      report.environment.link = child_report->environment.link;
    }
    merge_reports(report, std::move(*child_report));
  }
  if (!job_allocators.empty()) report.environment.allocator = "one per job: " + join(job_allocators, "; ");
  report.environment.load_average_end = read_load_average();
  const double measuring_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - measuring_start).count();
  if (const int presented = present_run(report, plan, measuring_seconds); presented != 0) return presented;
  return code != 0 ? code : exit_code_for(report.cases);
}

}  // namespace ringlab::bench::app
