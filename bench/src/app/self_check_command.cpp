// `bench --self-check`: timer overhead, stability and linearity of the harness (self_check.hpp).
#include <iostream>

#include "commands.hpp"
#include "testbed.hpp"
#include "ringlab/base/cpus.hpp"
#include "ringlab/bench/measure/cycle_counter.hpp"
#include "ringlab/bench/process/server_process.hpp"
#include "ringlab/bench/run/progress.hpp"
#include "ringlab/bench/run/self_check.hpp"

namespace ringlab::bench::app {

int run_self_check_command(const RunPlan& plan) {
  install_stop_signals();
  PlacementRequest asked{.client_cpus = {},
                         .client_takes_rest = false,
                         .server_cpu = ServerCpu{.choice = ServerCpu::Choice::none},
                         .embedded = false};
  if (plan.placement.client_cpu) asked.client_cpus = {*plan.placement.client_cpu};
  const auto placement = place(asked);
  if (!placement) return report_error(placement.error().message);
  const int cpu = placement->client_cpus.empty() ? -1 : placement->client_cpus.front();
  if (cpu >= 0) {
    if (auto pinned = pin_current_thread(cpu); !pinned) return report_error(pinned.error().message);
  }
  RunContext context;
  context.clock = cycle_counter_clock();
  context.cancel = &g_cancel;
  FdProgress progress(STDERR_FILENO);
  context.progress = &progress;
  SelfCheckOptions self;
  self.work = plan.measurement.self_check_work;
  self.runner = plan.measurement.runner;
  auto result = run_self_check(self, context);
  progress.finish();
  if (g_cancel != 0) return report_error("interrupted", kExitInterrupted);
  if (!result) return report_error(result.error().message, kExitFailed);
  std::cout << render_self_check(*result) << std::flush;
  return result->spread_ok() && result->ratio_ok() ? 0 : kExitFailed;
}

}  // namespace ringlab::bench::app
