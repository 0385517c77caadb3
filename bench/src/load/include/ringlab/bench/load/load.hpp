#pragma once
// `bench load`: an HTTP/1.1 load generator on ringlab's own io_uring stack, for measuring servers
// (ours, nginx, h2o) rather than clients.
//
// Model. `threads` threads, each pinned to its CPU, each owning one Ring, one provided-buffer ring
// and its share of the connections (connection g belongs to thread g % threads). A connection has at
// most one request in flight (no pipelining) and receives with one multishot recv that the kernel
// fills from its thread's buffer ring; the response is parsed (llhttp, http::ResponseParser) straight
// out of those buffers, which go back to the kernel at once. A request is one send of bytes built
// before the run: "GET target HTTP/1.1" and a Host header, nothing else, the request wrk sends, so
// that a server costs the same per request under either generator. A thread's io_uring_enter submits
// the sends it queued and sleeps until something besides their own CQEs arrives (they complete
// during the submission), so a connection's request and the wait for its answer share one enter.
// Nothing is allocated per request once the connections are open.
//
// Closed loop (rate 0): every connection sends its next request as soon as the previous response is
// complete, and latency runs from that send to the response's last byte. This is wrk's model: while
// the server stalls, the generator stops asking, so a stall of S seconds gives `connections`
// requests a latency of S and the percentiles hide it (coordinated omission).
// Open loop (rate R): request i of the whole run is due at start + i / R and belongs to connection
// i % connections; a connection sends a due request as soon as its previous one is answered, and
// every latency runs from the request's due time, not from when it could be sent (the correction
// wrk2 made known). A stall of S seconds then shows as R * S requests with latencies up to S, and a
// rate the connections cannot carry shows as latencies that grow through the run.
//
// The window. Requests due (open loop) or sent (closed loop) in [start + warmup, start + warmup +
// duration) are measured: their latencies go into the histogram (nanoseconds, HdrHistogram's
// log-linear layout, histogram.hpp) and req/s is their number over `duration`. No request is sent
// after the window; the run waits for the answers in flight, at most `timeout` more.
//
// Timeouts. A request still unanswered `timeout` after it was sent (in the warm-up, the window or
// after it) is counted as a timeout, and its connection is closed and opened again: an answer that
// came later would belong to no request. Its latency is not recorded (it is only known to exceed
// `timeout`): the percentiles are those of answered requests, and a server that stalls longer than
// `timeout` shows in the timeout count. Deadlines are checked every `timeout` / 10 (1 to 50 ms), so
// a timeout is counted up to that much late.
//
// Errors are counted by kind and never retried: a connection that fails (connect, send or receive
// error, the server closing it, a malformed response) is counted, closed, and opened again; a
// response that is not 2xx is counted and its latency recorded. A connection whose new connect fails
// stays closed (counted once more). The initial connects must all succeed: one that fails is the
// run's error, before anything is measured.
//
// CPU. When the server's PID is known (the embedded server, or GET /env's pid of one of ours on this
// machine), its CPU time (every thread, from /proc/PID/stat) over the window divided by the
// measured requests is the server CPU per request; the client's (this process, getrusage) likewise.
//
// Threads: run_load() starts the load threads and joins them before it returns; `cancel` is read by
// them (a signal handler may set it) and ends the run early, reported as interrupted.
#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/core/histogram.hpp"

namespace ringlab::bench {

struct LoadSpec {
  std::string host = "127.0.0.1";  // numeric address or localhost
  uint16_t port = 0;
  std::string target = "/weather?count=10";
  unsigned connections = 32;   // kept-alive connections in all
  double rate = 0;             // requests per second in all; 0: closed loop
  std::chrono::nanoseconds duration = std::chrono::seconds(5);
  std::chrono::nanoseconds warmup = std::chrono::seconds(1);
  // Connect limit, and how long a sent request waits for its answer (above: Timeouts).
  std::chrono::nanoseconds timeout = std::chrono::seconds(10);
  unsigned threads = 1;
  std::vector<int> cpus;       // thread i is pinned to cpus[i % size]; empty: not pinned
  unsigned recv_buffers = 256;          // per thread: a power of two, at most 32768
  unsigned recv_buffer_bytes = 16 * 1024;
  pid_t server_pid = -1;       // for the server's CPU per request; -1: unknown
  // The server answers GET /stats (ours): its zero-copy sends per request are read from it at the
  // window's start and end.
  bool server_stats = false;
  // CPUs the server has to itself (ours, kept away from the load: the CPUs its GET /env gives as
  // worker_cpus): their whole busy time over the window is reported per request too. A process's
  // own CPU time (server_pid) misses the softirq work that runs on those CPUs while the idle task
  // is current (freeing the server's sent buffers, ACKs), and charges it to the server when the
  // server is current, so it moves with how often the server sleeps; the CPUs' busy time does not.
  std::vector<int> server_cpus;
};

struct LoadErrors {
  uint64_t connect = 0;    // a connect that failed or timed out (after the start)
  uint64_t send = 0;       // a send that failed
  uint64_t receive = 0;    // a recv that failed (reset, ...)
  uint64_t closed = 0;     // the server closed a connection with a request in flight
  uint64_t malformed = 0;  // the response did not parse, or bytes came with no request in flight
  uint64_t status = 0;     // a complete response whose status is not 2xx
  uint64_t timeout = 0;    // a request unanswered `timeout` after its send (its connection reopened)
  [[nodiscard]] uint64_t total() const noexcept {
    return connect + send + receive + closed + malformed + status + timeout;
  }
  // Adds every count of `other` (threads into a run, rounds into a row).
  LoadErrors& operator+=(const LoadErrors& other) noexcept {
    connect += other.connect;
    send += other.send;
    receive += other.receive;
    closed += other.closed;
    malformed += other.malformed;
    status += other.status;
    timeout += other.timeout;
    return *this;
  }
};

struct LoadResult {
  Histogram latency;              // measured requests, ns
  uint64_t requests = 0;          // measured requests answered (any status)
  double seconds = 0;             // the window's length
  double requests_per_second = 0;
  uint64_t body_bytes = 0;        // of the measured responses
  LoadErrors errors;
  uint64_t reconnects = 0;        // connections opened again after a failure or a server's close
  uint64_t buffer_shortages = 0;  // multishot recvs ended by an empty buffer ring (ENOBUFS), re-armed
  uint64_t requests_total = 0;    // answered, warm-up and drain included
  uint64_t enters = 0;            // io_uring_enter calls of every load thread, whole run
  std::optional<double> server_cpu_us_per_request;
  // user + nice + system + irq + softirq of spec.server_cpus (/proc/stat), per measured request.
  std::optional<double> server_cpus_busy_us_per_request;
  double client_cpu_us_per_request = 0;
  // From the server's GET /stats over the window (spec.server_stats), per measured request: its
  // zero-copy sends the kernel sent from our pages, and those it copied (loopback always copies).
  // Empty when the server has no /stats or one reading failed.
  std::optional<double> server_zc_sends_per_request;
  std::optional<double> server_zc_copied_per_request;
  bool interrupted = false;
};

// Runs one load. Errors: a bad spec (no connections, a buffer count that is not a power of two), a
// ring or buffer ring the kernel refuses, a thread that cannot be pinned, an initial connect that
// fails, each with its context.
[[nodiscard]] Result<LoadResult> run_load(const LoadSpec& spec, const volatile std::sig_atomic_t* cancel = nullptr);

// CPU time (user + system, every thread) of process `pid` in seconds, from /proc/PID/stat.
[[nodiscard]] Result<double> process_cpu_seconds(pid_t pid);

}  // namespace ringlab::bench
