#pragma once
// Server: the io_uring HTTP/1.1 server behind the `server` binary and the end-to-end tests.
//
// Threads: `threads` workers, each with its own Ring (SINGLE_ISSUER|DEFER_TASKRUN when granted), its
// own SO_REUSEPORT listener on the same port (the kernel spreads new connections over them), a
// multishot accept, and a provided-buffer ring its connections' recvs draw from (one buffer per
// recv, or one multishot recv per connection: ServerOptions::recv_multishot). Workers share nothing
// but the options: each has its own body cache and connection pool.
//
// Connections: requests are parsed as they arrive (split anywhere, pipelined), answered in order,
// and the answers produced from one receive go out in one sendmsg (head and body as separate
// iovecs; cached bodies are referenced, not copied, except bodies of at most inline_body_bytes,
// which are copied next to their head: see output.hpp; that is the default body strategy, below),
// or in one plain send when they are one contiguous buffer (a head with its inline body).
// A connection is kept alive unless the client asks otherwise (HTTP/1.0 without keep-alive,
// "Connection: close") or a request was bad. When the server closes after an answer it first shuts
// its side down and reads (and drops) what the client still sends for a short while, so the client
// reads the answer instead of a reset. A connection closed before its answers went out (an error, a
// timeout, the shutdown timeout) while zero-copy sends still await their notifications is reset
// (SO_LINGER 0), so the kernel lets go of their bytes.
//
// Body strategies (ServerOptions::body_strategy, --body-strategy): how the generated bodies of
// /weather, /repos and /github (not chunked, not HEAD) reach the kernel. Every strategy answers the
// same bytes; bodies of at most inline_body_bytes are copied next to their head in every strategy
// but copy (--inline-body 0 sends every body the strategy's way). Chunked answers, echo, /proxy,
// /plaintext, /health, /env and error answers always take the default path.
//   writev   (default) head and body as two iovecs of one sendmsg, the body referenced in the cache.
//   copy     head and body copied into the connection's send buffer: one contiguous iovec.
//   send_zc  heads (and whatever precedes the body) by sendmsg, then the body by IORING_OP_SEND_ZC
//            from the cached bytes, which the batch holds until the kernel's notification (the
//            connection's next batch goes out after it); ServerStats::zc_sends / zc_copied count the
//            notifications (copied: the kernel fell back to copying, as it does on loopback).
//   fixed    as send_zc, from registered memory: a body entering the cache is copied once into the
//            worker's registered area (fixed_body_bytes, io_uring_register_buffers) and sent with
//            IORING_RECVSEND_FIXED_BUF. A body that does not fit (or is not cached) goes by send_zc
//            from ordinary memory (ServerStats::fixed_fallbacks). start() fails when the area cannot
//            be registered (RLIMIT_MEMLOCK): never a silent fall back.
//   sendfile as nginx does: a body entering the cache is written once to an unlinked file
//            (O_TMPFILE in $TMPDIR or /tmp; synchronously on the worker's thread, like its
//            generation; the files hold at most cache_bytes per worker); the head goes by sendmsg, the body by IORING_OP_SPLICE
//            file -> pipe -> socket (one pipe per connection, made at its first such body and kept
//            while the connection object lives: two more descriptors each; two splices per
//            pipe-full, up to 1 MiB). Splices run in the kernel's worker threads, where SIGPIPE is
//            blocked: a peer that went away gives EPIPE. A body that is not cached, whose file could
//            not be written, or whose connection could not get a pipe goes the writev way
//            (ServerStats::file_fallbacks).
//
// Receive-buffer policy: the kernel picks a provided buffer for each receive; it is fed to the
// parser and given back to the kernel before the next completion is handled. Nothing of a request
// outlives its buffer except (a) what the route needs, copied when the head completes (route,
// parameters, echo Content-Type), (b) an echo body, copied into the connection's body string as it
// arrives, and (c) a head still incomplete when its buffer is given back: the parser copies that
// partial head into its own per-connection scratch (RequestParser::detach) first. So a head split
// over several buffers costs one copy of its bytes; one that fits in a buffer costs none.
//
// Limits, each with a default, a flag in the binary and a test: max_header_bytes (431),
// max_body_bytes (413), max_count and max_answer_bytes (400, the limit in the error), the three
// timeouts, max_connections, max_queued_output_bytes, the body cache bounds, the upstream timeout,
// the shutdown timeout.
//
// Memory: what one connection holds is bounded. Everything queued for output (answer bytes and the
// bodies they reference or own, OutputBatch::queued_bytes()) counts against max_queued_output_bytes;
// past it the connection stops reading requests until its answers drain, so a client that pipelines
// without reading holds at most that plus what its last receives brought. A chunked answer is
// appended a window (half of max_queued_output_bytes) at a time as the previous window goes out,
// so small chunks cost no more memory than large ones. A request body grows as its bytes arrive,
// never reserved from Content-Length alone. Spare strings and idle connection objects are trimmed
// to a small pool (see worker.hpp). An allocation failure while serving a request answers 503 and
// closes that connection; it never ends the process.
//
// HEAD generates no body: a generated body (/weather, /repos) in the cache gives the head its
// Content-Length; otherwise the head carries none (RFC 9110 9.3.2).
//
// Timers: one io_uring timeout per worker ticks every eighth of the shortest timeout (at least 1 ms,
// at most 1 s) and reads the clock; activity is stamped with that clock, so it costs no clock read.
// At each tick, as nginx does: a head not complete header_timeout after its first byte is answered
// 408 and the connection closed; a body that received nothing for body_timeout the same; a
// connection between requests (or whose answers do not move) with no progress for idle_timeout is
// closed. Each fires up to two ticks late. A connection draining after its last answer is closed
// after min(idle_timeout, 1 s). At max_connections a new connection is closed at once (never left
// waiting), and slow heads free their slots after header_timeout.
//
// /proxy: the worker fetches /weather from the upstream on its own ring (server/src/upstream.hpp:
// connect, send and receive are completions like any other), so it goes on answering its other
// connections meanwhile; each step is bounded by upstream_timeout (504 when it passes). The
// connection that asked reads no further request until its answer is queued, so answers stay in
// order. A pooled fetch that fails with a reset or a close before any response byte (a kept-alive
// connection the upstream closed while idle) is retried once on a new connection. The upstream's
// body is bounded by max_answer_bytes like a generated one. With no upstream given, the server
// starts one extra worker with its own listener as the upstream ("itself"); that worker serves every
// route but /proxy.
//
// Stop: stop() (any thread, idempotent) makes every worker cancel its accept, close idle
// connections, answer the requests already started with "Connection: close", and exit when every
// connection is gone, or after shutdown_timeout at the latest. While stopping, the timer ticks at
// least every 100 ms and a draining connection lingers at most about 100 ms. wait() joins the
// workers.
//
// Errors: start() returns an Error naming what failed ("listen 127.0.0.1:80: Permission denied
// (EACCES)"); per-connection failures never stop a worker (they are counted in stats()); a worker
// stops only when its ring fails, and wait() returns that error.
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
};

// Every counter of ServerStats with its name (the key in GET /stats): the one list that summing and
// the JSON form go through (a counter added above and not here fails to compile: server.cpp
// checks the sizes).
struct ServerCounter {
  std::string_view name;
  uint64_t ServerStats::*field;
};
extern const std::array<ServerCounter, 20> kServerCounters;

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
