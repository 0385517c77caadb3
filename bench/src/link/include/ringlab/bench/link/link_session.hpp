#pragma once
// LinkSession: the emulated link of one `bench --link SPEC` run, from creation to removal.
//
// The topology, three network namespaces named after the run's PID, joined by two veth pairs:
//
//   ringlab-<pid>-client            ringlab-<pid>-wire               ringlab-<pid>-server
//   rl-client 198.18.0.1/30 ── veth ── wire-c  [wire]  wire-s ── veth ── rl-server 198.18.0.2/30
//
// bench's client runs in the client namespace, the embedded server in the server namespace and
// the `wire` process (link/wire.hpp) forwards frames between its two interfaces as the SPEC's link
// would. The addresses are in the benchmarking range (198.18.0.0/15) and exist only inside these
// namespaces; the neighbours are static, IPv6 is off on the path, so nothing but the run's own
// traffic crosses the wire. Nothing outside the machine is ever addressed.
//
// Lifetime: create() builds everything (after removing stale namespaces of dead runs) and starts
// the wire; the destructor (or close()) returns the calling thread to the namespace it started in,
// stops the wire and deletes the namespaces. A run killed with SIGKILL leaves its namespaces
// behind; the next create(), or remove_stale_namespaces(), deletes those whose PID no longer runs
// bench. The wire dies with bench (PDEATHSIG), the embedded server too.
//
// Threads: the enter_*() calls move the calling thread only (setns); threads and child processes
// started afterwards inherit its namespace. Call them before any other thread exists.
//
// Privileges: creating namespaces and veth pairs needs CAP_SYS_ADMIN and CAP_NET_ADMIN (root);
// check_privileges() says so in one line. Errors: bench::Error naming the step and the command.
// Ownership: owns the namespace handles and the wire child; move-only.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/core/results.hpp"
#include "ringlab/bench/process/child_process.hpp"
#include "ringlab/link/spec.hpp"

namespace ringlab::bench {

inline constexpr std::string_view kLinkClientAddress = "198.18.0.1";
inline constexpr std::string_view kLinkServerAddress = "198.18.0.2";

// Error unless this process may create network namespaces and veth pairs.
[[nodiscard]] Status check_link_privileges();

// Deletes ringlab-<pid>-* namespaces whose <pid> is not a running bench; returns their names.
[[nodiscard]] Result<std::vector<std::string>> remove_stale_namespaces();

class LinkSession {
 public:
  struct Options {
    link::LinkSpec spec;
    std::string wire_executable;  // path of the `wire` binary
    int wire_cpu = -1;            // pin the wire; -1: where the scheduler puts it
    std::chrono::milliseconds start_timeout{10'000};
  };

  [[nodiscard]] static Result<LinkSession> create(const Options& options);

  LinkSession(LinkSession&& other) noexcept;
  LinkSession& operator=(LinkSession&& other) = delete;
  LinkSession(const LinkSession&) = delete;
  LinkSession& operator=(const LinkSession&) = delete;
  ~LinkSession();

  [[nodiscard]] Status enter_client();  // the calling thread joins the client namespace
  [[nodiscard]] Status enter_server();
  [[nodiscard]] Status leave();         // back to the namespace the thread started in

  // Stops the wire (its counters go into `info` when given) and removes the namespaces.
  // Idempotent; errors are what could not be removed.
  Status close(LinkInfo* info = nullptr);

  [[nodiscard]] const std::string& prefix() const noexcept { return prefix_; }  // "ringlab-1234-"
  // What was built, for the report: namespaces, interfaces, addresses, the wire's pid.
  [[nodiscard]] std::string describe() const;

 private:
  LinkSession() = default;

  std::string prefix_;
  int original_ns_ = -1;
  int client_ns_ = -1;
  int server_ns_ = -1;
  ChildProcess wire_;
  net::Fd wire_stdout_;
  std::string wire_scheduling_;  // as the wire reported it: "SCHED_FIFO 50" or why not
  bool namespaces_made_ = false;
};

// The wire binary next to bench (as default_server_path() finds the server).
[[nodiscard]] std::string default_wire_path(const std::string& bench_executable);

// Measures the link to host:port before the cases: RTT as HTTP ping-pongs (GET /health on one
// kept-alive connection; as many as fit in about a second, 20 to 200) and the rate as one bulk
// GET of about 100 ms of the configured rate (1 MiB to 400,000 records of /weather, ~31 MB; best of two). Fills the
// measured_* fields of `info`.
[[nodiscard]] Status measure_link(const std::string& host, uint16_t port, const link::LinkSpec& spec,
                                  LinkInfo& info, std::chrono::milliseconds timeout);

// GET `target` of the server, on a connection of its own, as a flat map (a value that is not a
// string: its JSON text, so numbers come as digits); error when the server does not answer 200
// (a peer such as nginx has no /env or /stats) or the answer is not a flat JSON object.
[[nodiscard]] Result<std::map<std::string, std::string>> fetch_server_json(const std::string& host, uint16_t port,
                                                                         const std::string& target,
                                                                         std::chrono::milliseconds timeout);
// fetch_server_json of GET /env: the server's environment.
[[nodiscard]] Result<std::map<std::string, std::string>> fetch_server_environment(
    const std::string& host, uint16_t port, std::chrono::milliseconds timeout);

}  // namespace ringlab::bench
