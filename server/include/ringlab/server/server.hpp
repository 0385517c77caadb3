#pragma once
// Server: the io_uring HTTP/1.1 server behind the `server` binary, bench's embedded server and the
// end-to-end tests. docs/server.md describes its routes, limits, timers, memory bounds and body
// strategies; this header says what a caller needs.
//
// Threads: start() runs `threads` workers, each with its own Ring, SO_REUSEPORT listener,
// provided-buffer ring, body cache and connections; workers share nothing but the options. With no
// upstream given, one more worker on its own port is /proxy's upstream. stop() (any thread,
// idempotent) lets the workers finish the requests already started; wait() joins them.
//
// Ownership: a Server owns its workers, a worker its connections and buffers. Nothing of a request
// outlives its receive buffer but what is copied out of it; a cached body stays alive while an
// answer that references it is being sent. HEAD generates no body. Body strategies
// (ServerOptions::body_strategy): how cached bodies reach the kernel (writev, copy, send_zc, fixed,
// sendfile).
//
// Errors: start() returns an Error naming what failed; per-connection failures never stop a worker
// (they are counted in stats()); a worker stops only when its ring fails, and wait() returns that
// error.
#include <array>
#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ringlab/net/endpoint.hpp"

namespace ringlab::server {

using namespace std::chrono_literals;

// How cached bodies are handed to the kernel (see "Body strategies" above).
enum class BodyStrategy : uint8_t { writev, copy, send_zc, fixed, sendfile };

// "writev", "copy", ...; and back (nullopt for a name that is not a strategy).
[[nodiscard]] std::string_view body_strategy_name(BodyStrategy strategy) noexcept;
[[nodiscard]] std::optional<BodyStrategy> parse_body_strategy(std::string_view name) noexcept;

struct ServerOptions {
  std::string bind = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port; endpoint() says which
  unsigned threads = 1;
  std::string upstream;  // "http://host:port" for /proxy; empty: an extra worker of this server
  std::size_t max_header_bytes = 16 * 1024;
  uint64_t max_body_bytes = 64ull << 20;
  std::chrono::milliseconds idle_timeout = 30s;    // no progress between requests or while sending
  std::chrono::milliseconds header_timeout = 20s;  // a whole request head, from its first byte
  std::chrono::milliseconds body_timeout = 60s;    // between two receives of a request body
  std::chrono::milliseconds upstream_timeout = 5s;
  std::chrono::milliseconds shutdown_timeout = 5s;
  unsigned max_connections = 4096;  // per worker; more are accepted and closed at once
  unsigned recv_buffer_bytes = 16 * 1024;  // size of each provided buffer
  unsigned recv_buffer_count = 256;        // provided buffers per worker (a power of two)
  // false: one recv per provided buffer, re-armed after each completion, so a connection that stops
  // reading (its answers reached max_queued_output_bytes) holds at most the rest of one buffer.
  // true: one multishot recv armed per connection; the completions that arrive in the same
  // io_uring_enter as the pause are still taken and held (copied), up to the worker's whole ring.
  bool recv_multishot = false;
  std::size_t inline_body_bytes = 1024;    // bodies up to this size are copied next to the head
  BodyStrategy body_strategy = BodyStrategy::writev;
  // fixed: registered memory per worker that cached bodies are copied into (4 KiB to 1 GiB; it
  // counts against RLIMIT_MEMLOCK unless the process may lock memory).
  std::size_t fixed_body_bytes = 64u << 20;
  // A body serialized for its request alone (cache=0) and answered chunked is serialized as it goes
  // out, as ASP.NET Core answers with System.Text.Json: records are written into a buffer of this
  // size, which goes out as one chunk once it is 90 % full (after the record that fills it), and the
  // next chunk is serialized when that chunk's send has completed (docs/server.md, "Bodies"). 16 KiB
  // is JsonSerializerOptions.DefaultBufferSize's default. 0: the whole body is serialized before its
  // first byte is sent, then framed in chunks of the request's chunk= size, as cached bodies are.
  std::size_t serializer_buffer_bytes = 16u << 10;
  // Answers queued on one connection beyond which it stops reading requests until they went out.
  uint64_t max_queued_output_bytes = 4ull << 20;
  // Work per request (see routes.hpp count_limit): /weather, /repos and /proxy answer 400 above
  // min(max_count, max_answer_bytes / largest record).
  uint64_t max_count = 1'000'000;
  uint64_t max_answer_bytes = 64ull << 20;
  std::size_t cache_entries = 64;          // per worker
  std::size_t cache_bytes = 256u << 20;    // per worker
  // What the process set glibc's mmap threshold to (the server binary's --malloc-mmap-threshold;
  // reported in /env). 0: nobody set it, glibc's dynamic thresholds apply. The library itself never
  // changes the allocator: it is process-wide, the embedding program's call.
  std::size_t malloc_mmap_threshold = 0;
  // Body of GET /env; Server::start fills it with describe_environment() (environment.hpp) when empty.
  std::string environment_json;
  int cpu = -1;  // >= 0: worker i is pinned to CPU (cpu + i) modulo the CPUs (the built-in upstream is not)
};

// The CPU request worker `worker` (0 .. threads-1) is pinned to: (cpu + worker) modulo the CPUs
// online; -1 when options.cpu < 0. Server::start pins by it, and GET /env lists the CPUs the
// workers may run on ("worker_cpus": these, or the process's affinity mask when they are not
// pinned), so that a client measures the busy time of those CPUs without knowing the rule.
[[nodiscard]] int worker_cpu(const ServerOptions& options, unsigned worker) noexcept;

struct ServerStats {
  uint64_t accepted = 0;
  uint64_t refused = 0;       // closed at once: max_connections reached or stopping
  uint64_t closed = 0;        // connections fully closed (fd closed, state recycled)
  uint64_t requests = 0;      // complete requests answered
  uint64_t bad_requests = 0;  // answered 400/413/431/505 because of the bytes received
  uint64_t idle_closed = 0;   // closed by the idle timeout (or the shutdown timeout)
  uint64_t recv_rearmed = 0;  // recvs armed again after the kernel ended one early (ENOBUFS; multishot)
  uint64_t accept_errors = 0;
  uint64_t connection_errors = 0;  // recv/send failures (resets, broken pipes)
  uint64_t upstream_errors = 0;
  uint64_t upstream_retries = 0;  // pooled /proxy fetches retried once after a reset or early close
  uint64_t upstream_idle_dropped = 0;  // idle pooled upstream connections closed: the upstream had closed them
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t sends = 0;         // send operations: send, sendmsg, and the body strategies' send_zc and splices
  uint64_t read_pauses = 0;   // a connection stopped reading because its answers were not read
  uint64_t zc_sends = 0;      // send_zc, fixed: zero-copy sends the kernel sent without copying
  uint64_t zc_copied = 0;     // send_zc, fixed: zero-copy sends the kernel fell back to copying
  uint64_t fixed_fallbacks = 0;  // fixed: bodies sent from ordinary memory (did not fit the area)
  uint64_t file_fallbacks = 0;   // sendfile: bodies sent from memory (no file for them)
  uint64_t serialized_chunks = 0;  // chunks of bodies serialized as they were sent (serializer_buffer_bytes)
};

// Every counter of ServerStats with its name (the key in GET /stats): the one list that summing and
// the JSON form go through (a counter added above and not here fails to compile: server.cpp
// checks the sizes).
struct ServerCounter {
  std::string_view name;
  uint64_t ServerStats::*field;
};
extern const std::array<ServerCounter, 21> kServerCounters;

ServerStats& operator+=(ServerStats& total, const ServerStats& one) noexcept;
// {"accepted":N,...}: one flat JSON object of numbers, in kServerCounters' order (GET /stats).
[[nodiscard]] std::string stats_json(const ServerStats& stats);

struct Error {
  std::string message;
};
template <class T>
using Result = std::expected<T, Error>;
using Status = Result<void>;

class Worker;
class StatsBoard;

class Server {
 public:
  // Validates the options, binds the listeners (so the port is known and taken on return) and
  // starts the workers; returns once every worker is ready or one failed to set up.
  static Result<std::unique_ptr<Server>> start(const ServerOptions& options);
  ~Server();  // stop() and wait()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  [[nodiscard]] const net::Endpoint& endpoint() const noexcept { return endpoint_; }
  [[nodiscard]] uint16_t port() const noexcept { return endpoint_.port(); }
  // The upstream /proxy fetches from ("http://127.0.0.1:PORT").
  [[nodiscard]] const std::string& upstream() const noexcept { return upstream_; }
  [[nodiscard]] const ServerOptions& options() const noexcept { return options_; }

  void stop() noexcept;
  // Joins the workers (once); the first worker error, if any.
  Status wait();
  // Sum over the workers (the built-in upstream's included). Once wait() has returned: exact. While
  // they run: what each worker published last (the counters belong to the worker threads and are
  // bumped on every request without atomics; each worker copies them to a board under a mutex of
  // its own every 64 batches of completions and at every tick), as GET /stats answers.
  [[nodiscard]] ServerStats stats() const;

 private:
  Server() = default;
  ServerOptions options_;
  net::Endpoint endpoint_;
  std::string upstream_;
  std::unique_ptr<StatsBoard> board_;  // outlives the workers, which publish into it
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  bool joined_ = false;
  Status result_;
};

// Checks option values (threads >= 1, buffer count a power of two, ...). Error says which flag.
[[nodiscard]] Status validate(const ServerOptions& options);

}  // namespace ringlab::server
