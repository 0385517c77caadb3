#pragma once
// ServerProcess: the server under test as a child process of bench.
//
// start() starts the server binary (a ChildProcess, child_process.hpp) with `--port 0 --bind HOST`
// (plus extra arguments), pinned to `cpu` when one is given (sched_setaffinity in the child before
// exec, so every server thread inherits the mask; a CPU it cannot be pinned to fails the start, it
// never runs unpinned), with PR_SET_PDEATHSIG so that the kernel sends it SIGTERM if bench dies
// without stopping it (a crash, a SIGKILL). It reads the server's first stdout line, "listening on
// HOST:PORT" (the server's contract), then checks GET /health answers 200 on a plain blocking socket.
// Both waits are bounded by `start_timeout`; a server that exits early, prints something else or
// does not answer is an error with what it did, and is killed and reaped before start() returns.
//
// stop() (and the destructor) sends SIGTERM, waits up to `stop_timeout` for a graceful exit, then
// SIGKILL, and always reaps the child: no zombie, no orphan. The server's stderr is bench's stderr.
// The read end of its stdout pipe stays open until stop(), so a late line from the server does
// not kill it with SIGPIPE.
//
// Errors: bench::Error with the step and the child ("server /path/server (pid 4242): exited with
// status 1 before printing 'listening on'").
//
// Ownership: the object owns the child and the pipe; move-only.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/process/child_process.hpp"
#include "ringlab/net/socket.hpp"

namespace ringlab::bench {

// "listening on 127.0.0.1:40123" -> 40123; "[::1]:80" forms too. nullopt for anything else.
[[nodiscard]] std::optional<uint16_t> parse_listening_line(std::string_view line);

// One GET over a fresh blocking TCP connection with `Connection: close`: returns the status code.
// Every step (connect, send, receive) is bounded by the time left until `timeout` from the call.
[[nodiscard]] Result<int> http_get_status(const std::string& host, uint16_t port, std::string_view target,
                                          std::chrono::milliseconds timeout);

struct ServerProcessOptions {
  std::string executable;            // path of the server binary
  std::string bind = "127.0.0.1";
  int cpu = -1;                      // pin the server to this CPU; -1: not pinned
  std::vector<std::string> extra_arguments;
  std::chrono::milliseconds start_timeout{10'000};  // bench --server-start-timeout-ms
  std::chrono::milliseconds stop_timeout{10'000};   // bench --server-stop-timeout-ms
};

class ServerProcess {
 public:
  [[nodiscard]] static Result<ServerProcess> start(const ServerProcessOptions& options);

  // Movable, never copied (declaring the moves deletes the copies): one owner stops the server.
  ServerProcess(ServerProcess&& other) noexcept;
  ServerProcess& operator=(ServerProcess&& other) noexcept;
  ~ServerProcess();

  // Stops and reaps the child; idempotent. Error when it had to be killed or exited non-zero.
  Status stop();

  [[nodiscard]] pid_t pid() const noexcept { return child_.pid(); }
  [[nodiscard]] const std::string& host() const noexcept { return host_; }
  [[nodiscard]] uint16_t port() const noexcept { return port_; }
  [[nodiscard]] bool running() const noexcept { return child_.running(); }

 private:
  ServerProcess() = default;

  ChildProcess child_;
  net::Fd stdout_;
  std::string host_;
  uint16_t port_ = 0;
  std::string executable_;
  std::chrono::milliseconds stop_timeout_{10'000};
};

// Where the server binary is expected next to `bench_executable`: "<dir>/server" when that is an
// executable file, else "<dir>/../server/server" and "<dir>/server/server" (the build tree keeps
// the binary inside the folder of its CMake directory). The first that exists; "<dir>/server" when
// none does, so the error names the usual place.
// RINGLAB_BIN_DIR, when set and not empty, is where the server (and the wire, link_session.hpp) are
// instead: a relocatable bundle runs bench through its own dynamic loader, where bench's own path
// says nothing of where the bundle's launchers are.
inline constexpr const char* kBinDirVariable = "RINGLAB_BIN_DIR";
// "$RINGLAB_BIN_DIR/<program>" when that variable is set and not empty; nullopt otherwise. The one
// reading of it: the server, the wire and bench itself (allocator jobs) are found this way.
[[nodiscard]] std::optional<std::string> bin_dir_program(std::string_view program);
[[nodiscard]] std::string default_server_path(const std::string& bench_executable);

// Pins the calling thread to `cpu`; error with errno text.
[[nodiscard]] Status pin_current_thread(int cpu);

}  // namespace ringlab::bench
