// The run plan's own values (plan.hpp): the server CPU's text, and the report's config block derived
// from the plan.
#include "ringlab/bench/app/plan.hpp"

#include <sched.h>

#include <charconv>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "commands.hpp"

namespace ringlab::bench {

Result<ServerCpu> ServerCpu::parse(std::string_view text) {
  if (text == "auto") return ServerCpu{};
  if (text == "none") return ServerCpu{.choice = Choice::none};
  int cpu = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), cpu);
  if (error != std::errc() || end != text.data() + text.size() || cpu < 0 || cpu >= CPU_SETSIZE) {
    return fail(fmt::format("'{}' is not auto, none or a CPU number", text));
  }
  return ServerCpu{.choice = Choice::cpu, .cpu = cpu};
}

std::string ServerCpu::text() const {
  switch (choice) {
    case Choice::automatic:
      return "auto";
    case Choice::none:
      return "none";
    case Choice::cpu:
      break;
  }
  return std::to_string(cpu);
}

std::string_view compare_side_name(CompareSide side) noexcept {
  return side == CompareSide::server ? "server" : "client";
}

Config report_config(const RunPlan& plan) {
  const CasesPlan& cases = plan.cases;
  const RunnerOptions& runner = plan.measurement.runner;
  Config c;
  c.suite = cases.seeds ? std::string("seeds") : std::string(cases.suite->name);  // a seed's run: its own name
  c.filter = cases.filter;
  c.sizes = cases.sizes;
  c.payload = std::string(strategies::payload_name(cases.payload));
  c.connection = std::string(strategies::connection_name(cases.connection));
  c.server_mode = std::string(strategies::server_mode_name(cases.server_mode));
  c.inflight = cases.inflight;
  std::vector<std::string> clients;
  for (const strategies::Client client : cases.clients) clients.emplace_back(strategies::client_name(client));
  c.client = app::join(clients, ",");
  c.client_threads = cases.client_threads;
  c.ring_buffers = cases.ring.buffers;
  c.ring_buffer_bytes = cases.ring.buffer_bytes;
  c.iteration_time_ms = runner.iteration_time_ms;
  c.warmup = runner.warmup;
  c.iterations = runner.iterations;
  c.max_iterations = runner.max_iterations;
  c.target_error = runner.target_error;
  c.interleave = runner.interleave;
  c.memory = runner.memory;
  c.phases = runner.phases;
  c.counters = plan.measurement.counters;
  for (const alloc::Allocator a : plan.measurement.allocators) c.allocators.emplace_back(alloc::allocator_name(a));
  c.url = plan.server.external ? plan.server.external->url : std::string();
  c.link = plan.link.spec.emulated() ? plan.link.spec.canonical() : std::string("loopback");
  c.link_leg = std::string(link_leg_name(plan.link.leg));
  c.out = plan.outputs.out;
  for (const Format f : plan.outputs.formats) c.formats.emplace_back(format_name(f));
  c.columns = plan.outputs.columns;
  c.cpu = plan.placement.client_cpu.value_or(-1);
  c.server_cpu = plan.placement.server_cpu.text();
  c.arguments = plan.arguments;
  c.options = plan.options;
  return c;
}

}  // namespace ringlab::bench
