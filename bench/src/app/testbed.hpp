#pragma once
// What a command stands on (testbed.cpp): where the client and the embedded server run (place), how
// the embedded server is started (embedded_server_options, start_embedded_server), and, for a suite
// run, the link's namespaces and the servers behind it (Testbed). The one place in bench that chooses
// CPUs and the one that starts an embedded server: suite, seeds and profile runs (measure_run) and the
// load command go through them. Internal to bench/src/app.
//
// Errors: values (Status, Result) with the option they are about. Threads: the main thread only.
// Ownership: a Testbed owns its link session and server processes; stop() (or its destruction, which
// kills what stop() did not) ends them in reverse order of making: the servers before the namespaces
// they live in.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ringlab/bench/app/cli.hpp"
#include "ringlab/bench/core/results.hpp"
#include "ringlab/bench/link/link_session.hpp"
#include "ringlab/bench/process/server_process.hpp"
#include "ringlab/link/spec.hpp"

namespace ringlab::bench::app {

// What a command asks of the placement.
struct PlacementRequest {
  std::vector<int> client_cpus;     // given (--cpu); empty: chosen here
  bool client_takes_rest = false;   // the load command: its threads get every CPU but the server's
  ServerCpu server_cpu;             // --server-cpu
  bool embedded = true;             // false: --url, a server that is not ours to place
};

// Where things run. The client gets the CPUs it was given; or, with two CPUs or more, the first allowed
// (a suite's client) or every CPU but the server's (the load's threads, client_takes_rest). An embedded
// server with --server-cpu auto gets a CPU the client was not given: the first other than the client's
// (a suite), the last one (the load, whose threads take the rest).
struct Placement {
  std::vector<int> allowed;      // the CPUs this process may use
  std::vector<int> client_cpus;  // empty: not pinned
  int server_cpu = -1;           // -1: not pinned (or not ours)
};
[[nodiscard]] Result<Placement> place(const PlacementRequest& request);

// The embedded server's options every command shares: its binary (--server, or next to bench), its CPU,
// its start and stop limits. The command adds its own arguments.
[[nodiscard]] ServerProcessOptions embedded_server_options(const ServerPlan& server, const std::string& executable,
                                                           int cpu);
// Starts an embedded server: the one place bench does.
[[nodiscard]] Result<ServerProcess> start_embedded_server(const ServerProcessOptions& options);

// Where a suite run's requests go.
struct Target {
  std::string host;
  uint16_t port = 0;
  std::string description;
};

// What a suite run stands on: the link's namespaces, the embedded server (and, with --link-leg upstream,
// its upstream behind the link), and where the cases send their requests. Members in the order they
// are made, so that they go in reverse.
struct Testbed {
  link::LinkSpec link_spec;
  std::optional<LinkSession> link_session;
  std::optional<ServerProcess> upstream_server;
  std::optional<ServerProcess> server;
  Target target;
  // start_embedded got as far as starting a server: a failure from then on is the server's (a link that
  // could not be made before it is this machine's: no root, no namespaces).
  bool server_attempted = false;

  // --url: the external server, checked once (an unreachable server is one error now, not one per case).
  Status use_external_server(const ServerPlan& server_plan);
  // The embedded server, behind an emulated link when --link asks for one. `server_options`: the
  // command's (embedded_server_options and its own arguments).
  Status start_embedded(const RunPlan& plan, ServerProcessOptions server_options, const std::string& executable);
  // The emulated link as measured where it is; none without an emulated link.
  [[nodiscard]] Result<std::optional<LinkInfo>> measure_emulated_link(const ServerPlan& server_plan) const;
  // Stops the servers and closes the link: their complaints (and the wire's drops), as warnings. `link`:
  // the report's link, which closing completes with the wire's counters (null: none).
  [[nodiscard]] std::vector<std::string> stop(LinkInfo* link);
};

}  // namespace ringlab::bench::app
