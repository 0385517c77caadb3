#include "testbed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "commands.hpp"
#include "ringlab/base/cpus.hpp"
#include "ringlab/http/url.hpp"

namespace ringlab::bench::app {

Result<Placement> place(const PlacementRequest& request) {
  Placement p;
  p.allowed = base::allowed_cpus();
  const auto allowed = [&p](int cpu) { return std::find(p.allowed.begin(), p.allowed.end(), cpu) != p.allowed.end(); };
  for (int cpu : request.client_cpus) {
    if (!allowed(cpu)) return fail(fmt::format("--cpu {}: not among the CPUs this process may use", cpu));
  }
  p.client_cpus = request.client_cpus;
  const bool choose_client = p.client_cpus.empty();
  if (choose_client && !request.client_takes_rest && p.allowed.size() >= 2) p.client_cpus = {p.allowed.front()};
  const auto is_client = [&p](int cpu) {
    return std::find(p.client_cpus.begin(), p.client_cpus.end(), cpu) != p.client_cpus.end();
  };
  if (!request.embedded || request.server_cpu.choice == ServerCpu::Choice::none) {
    p.server_cpu = -1;
  } else if (request.server_cpu.choice == ServerCpu::Choice::automatic) {
    if (p.allowed.size() >= 2) {
      if (request.client_takes_rest) {
        const auto last = std::find_if(p.allowed.rbegin(), p.allowed.rend(), [&](int cpu) { return !is_client(cpu); });
        if (last != p.allowed.rend()) p.server_cpu = *last;
      } else {
        const auto first = std::find_if(p.allowed.begin(), p.allowed.end(), [&](int cpu) { return !is_client(cpu); });
        if (first != p.allowed.end()) p.server_cpu = *first;
      }
    }
  } else {
    p.server_cpu = request.server_cpu.cpu;
    if (!allowed(p.server_cpu)) {
      return fail(fmt::format("--server-cpu {}: not among the CPUs this process may use", p.server_cpu));
    }
  }
  if (choose_client && request.client_takes_rest && request.embedded) {
    for (int cpu : p.allowed) {
      if (cpu != p.server_cpu) p.client_cpus.push_back(cpu);
    }
  }
  return p;
}

ServerProcessOptions embedded_server_options(const ServerPlan& server, const std::string& executable, int cpu) {
  ServerProcessOptions server_options;
  server_options.executable = server.binary.empty() ? default_server_path(executable) : server.binary;
  server_options.cpu = cpu;
  server_options.start_timeout = server.start_timeout;
  server_options.stop_timeout = server.stop_timeout;
  return server_options;
}

Result<ServerProcess> start_embedded_server(const ServerProcessOptions& options) {
  auto started = ServerProcess::start(options);
  if (!started) return fail(started.error().message);
  return std::move(*started);
}

Status Testbed::use_external_server(const ServerPlan& server_plan) {
  const ExternalServer& external = *server_plan.external;
  target.host = external.host;
  target.port = external.port;
  target.description = external.url + " (external)";
  auto health = http_get_status(target.host, target.port, "/health", server_plan.start_timeout);
  if (!health) return fail(fmt::format("--url {}: GET /health: {}", external.url, health.error().message));
  if (*health != 200) return fail(fmt::format("--url {}: GET /health answered {}, not 200", external.url, *health));
  return {};
}

// The server starts inside the server namespace (it inherits this thread's), then this thread moves to
// the client namespace for the rest of the run. With the link on the upstream leg, the server namespace
// holds the upstream instead, and the proxy server joins bench in the client namespace, where the two
// talk over that namespace's own loopback.
Status Testbed::start_embedded(const RunPlan& plan, ServerProcessOptions server_options,
                               const std::string& executable) {
  const bool upstream_leg = link_spec.emulated() && plan.link.leg == LinkLeg::upstream;
  if (link_spec.emulated()) {
    LinkSession::Options link_options;
    link_options.spec = link_spec;
    link_options.wire_executable = plan.link.wire.empty() ? default_wire_path(executable) : plan.link.wire;
    // With the server: the wire's work (and the kernel's receive processing it triggers) stays off
    // the client's CPU, where it would be counted as the strategy's time.
    link_options.wire_cpu = server_options.cpu;
    link_options.start_timeout = plan.server.start_timeout;
    auto made = LinkSession::create(link_options);
    if (!made) return fail(made.error().message);
    link_session.emplace(std::move(*made));
    if (auto entered = link_session->enter_server(); !entered) return fail(entered.error().message);
    if (upstream_leg) {
      ServerProcessOptions upstream_options = server_options;
      upstream_options.bind = std::string(kLinkServerAddress);
      server_attempted = true;
      auto upstream = start_embedded_server(upstream_options);
      if (!upstream) return std::unexpected(upstream.error());
      upstream_server.emplace(std::move(*upstream));
      if (auto entered = link_session->enter_client(); !entered) return fail(entered.error().message);
      server_options.extra_arguments.insert(
          server_options.extra_arguments.end(),
          {"--upstream", fmt::format("http://{}:{}", upstream_server->host(), upstream_server->port())});
    } else {
      server_options.bind = std::string(kLinkServerAddress);
    }
  }
  server_attempted = true;
  auto started = start_embedded_server(server_options);
  if (!started) return std::unexpected(started.error());
  server.emplace(std::move(*started));
  if (link_session && !upstream_leg) {
    if (auto entered = link_session->enter_client(); !entered) return fail(entered.error().message);
  }
  target.host = server->host();
  target.port = server->port();
  target.description =
      fmt::format("embedded {} (pid {}) on {}:{}", server_options.executable, server->pid(), target.host, target.port);
  if (upstream_server) {
    target.description += fmt::format(", its /proxy upstream another (pid {}) on {}:{} behind the link",
                                      upstream_server->pid(), upstream_server->host(), upstream_server->port());
  }
  return {};
}

// Measured where it is: to the upstream, from the proxy server's namespace (bench's), on the upstream leg.
Result<std::optional<LinkInfo>> Testbed::measure_emulated_link(const ServerPlan& server_plan) const {
  if (!link_session) return std::optional<LinkInfo>();
  LinkInfo info;
  info.spec = link_spec.canonical();
  info.description = link_spec.describe();
  info.emulator = link_session->describe();
  const std::string link_host = upstream_server ? upstream_server->host() : target.host;
  const uint16_t link_port = upstream_server ? upstream_server->port() : target.port;
  if (upstream_server) {
    info.leg = "upstream";
    info.description += " (upstream leg: server <-> its upstream; bench <-> server over loopback)";
  }
  if (auto measured = measure_link(link_host, link_port, link_spec, info, server_plan.request_timeout); !measured) {
    return fail(measured.error().message);
  }
  return std::optional<LinkInfo>(std::move(info));
}

std::vector<std::string> Testbed::stop(LinkInfo* link) {
  std::vector<std::string> warnings;
  if (server) {
    if (auto stopped = server->stop(); !stopped) warnings.push_back(stopped.error().message);
  }
  if (upstream_server) {
    if (auto stopped = upstream_server->stop(); !stopped) warnings.push_back(stopped.error().message);
  }
  if (!link_session) return warnings;
  if (auto closed = link_session->close(link); !closed) warnings.push_back(closed.error().message);
  if (link == nullptr || link_spec.loss != 0) return warnings;
  // Reads the counters without adding absent ones to the report (a wire that said nothing).
  const auto counter = [link](const std::string& key) {
    const auto it = link->wire.find(key);
    return it == link->wire.end() ? 0.0 : it->second;
  };
  for (const std::string direction : {"to_server", "to_client"}) {
    const double dropped = counter(direction + ".dropped_queue") + counter(direction + ".dropped_send");
    if (dropped > 0) {
      warnings.push_back(fmt::format("link: the wire dropped {:.0f} frames {} (queue full)", dropped, direction));
    }
  }
  return warnings;
}

}  // namespace ringlab::bench::app
