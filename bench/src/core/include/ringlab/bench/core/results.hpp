#pragma once
// The results model of a bench run and its JSON form, report.json.
//
// This is the contract between the runner, the reporters, allocator jobs (a child bench writes its
// Report as JSON on a pipe, the parent merges), `bench compare` and any tool that reads results/.
// The JSON keys are those of the structs below, spelled the same; report.json carries
// "schema_version" and a reader refuses a version it does not know. Add fields, never rename them.
//
// Units: every time is in nanoseconds (per operation unless the name says otherwise), every size in
// bytes. A value that could not be measured is absent from the struct (std::optional) and null in
// the JSON, never 0: 0 allocations is a result, "not measured" is not.
//
// Ownership: plain values throughout; a Report owns everything it refers to.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ringlab/bench/core/error.hpp"

namespace ringlab::bench {

// 2: cases gained "reference", "diagnostics" and "latency"; io.syscalls_per_op may be null; the
// environment gained the git commit, compiler flags and load averages. Version 1 files still read
// (the new fields keep their defaults: not measured).
inline constexpr int kReportSchemaVersion = 6;
inline constexpr int kOldestReadableSchemaVersion = 1;

// The system load averages (1, 5 and 15 minutes) of /proc/loadavg.
struct LoadAverage {
  double one = 0;
  double five = 0;
  double fifteen = 0;
};

// Where the numbers were taken. Strings are what the machine said ("n/a" when it said nothing).
// The emulated link of a `--link` run (absent for loopback): what was asked for, what was built,
// and what the run measured on it before the cases.
struct LinkInfo {
  std::string spec;         // canonical SPEC ("rate=10gbit,delay=25us,mtu=1500")
  std::string description;  // "10g: 10 Gbit/s, 25 us one-way, MTU 1500, GSO on, queue 1478 KiB"
  std::string emulator;     // how it was built: namespaces, interfaces, addresses, the wire
  // Where the link is: "client" (bench <-> the embedded server) or "upstream" (--link-leg upstream: the
  // embedded server <-> its /proxy upstream, bench <-> server over loopback). Older reports: "client".
  std::string leg = "client";
  double configured_rtt_us = 0;    // 2 x delay
  double measured_rtt_us = 0;      // median HTTP ping-pong (GET /health, one kept-alive connection)
  double measured_rtt_min_us = 0;
  unsigned rtt_samples = 0;
  double measured_rate_mbit = 0;   // bulk transfer: body bytes / (last byte - first byte)
  double rate_sample_bytes = 0;
  std::map<std::string, double> wire;  // the wire's counters at the end (frames, drops, release error)
};

struct Environment {
  std::string timestamp;  // start of the run, UTC, ISO 8601 ("2024-05-01T12:00:00Z")
  std::string cpu;        // model name
  unsigned cores = 0;     // online logical CPUs
  std::string kernel;     // uname release
  std::string os;
  std::string io_uring_features;  // probed on a fresh net::Ring, space-separated
  std::string governor;           // cpufreq scaling governor of the client CPU
  std::string perf_event_paranoid;
  std::string compiler;    // "g++ 12.2.0"
  std::string build_type;  // CMake build type, plus " +asan+ubsan" when sanitized
  std::string version;         // the project's version ("0.1.0")
  std::string git_commit;      // commit the binary was built from, at configure time; "unknown" without git
  std::optional<bool> git_dirty;  // uncommitted changes in the tree then; null when unknown
  std::string compiler_flags;  // CMAKE_CXX_FLAGS and the build type's flags
  std::optional<LoadAverage> load_average_start;  // when the environment was gathered; null if unreadable
  std::optional<LoadAverage> load_average_end;    // just before the report was written
  std::string liburing_version;
  std::string simdjson_version;
  std::string llhttp_version;
  std::string simdjson_kernel;  // On-Demand kernel the measured code was compiled for
  std::string allocator;        // allocator of the measuring process ("glibc", "mimalloc", ...)
  std::string tick_source;      // "rdtsc", "cntvct_el0" or "clock_gettime(CLOCK_MONOTONIC_RAW)"
  double tsc_hz = 0;            // ticks per second of tick_source
  std::string tsc_hz_source;    // "sysfs tsc_freq_khz", "calibrated against CLOCK_MONOTONIC_RAW (100 ms)", ...
  double timer_overhead_ns = 0;    // median cost of one reading of the cycle counter
  double timer_resolution_ns = 0;  // smallest non-zero difference between two readings
  int client_cpu = -1;  // -1: not pinned
  int server_cpu = -1;
  std::string server;  // "embedded pid 1234 on 127.0.0.1:40123" or the --url given
  // The server's own environment (GET /env: kernel, CPU, build, options); empty when it has no
  // /env (nginx, h2o), with the reason in warnings.
  std::map<std::string, std::string> server_environment;
  std::optional<LinkInfo> link;  // null: loopback, no emulated link
  std::vector<std::string> warnings;  // anything that makes the numbers less trustworthy
};

// --link-leg: which path an emulated link stands on.
enum class LinkLeg : uint8_t {
  client,    // bench <-> the embedded server
  upstream,  // the proxy suite's server <-> its upstream (a second embedded server)
};
[[nodiscard]] std::string_view link_leg_name(LinkLeg leg) noexcept;

// The options the run was made with, as report.json records them: derived from the run plan (bench/src/app/
// include/ringlab/bench/app/plan.hpp, report_config), read back from older reports with these defaults
// for what they do not say.
struct Config {
  std::string suite = "headline";
  std::string filter = "*";
  std::vector<std::size_t> sizes;
  std::string payload;  // "weather", "repos" or "github"
  std::string connection = "pooled";  // --connection: "pooled" or "fresh" (a new connection per request)
  std::string server_mode = "cached";  // --server-mode: "cached" or "seed" (bodies serialized per request, chunked)
  std::vector<std::size_t> inflight{1};  // --inflight: requests in flight at once, one case per count
  std::string client = "pooled";  // --client: "pooled" or "fresh" (the whole client built per request)
  std::size_t client_threads = 1;  // --client-threads: copies of each case's strategy, each on its own thread
  // --ring-buffers, --ring-buffer-bytes: the provided-buffer rows' ring; 0 (and absent in older files): each
  // row's own.
  std::size_t ring_buffers = 0;
  std::size_t ring_buffer_bytes = 0;
  double iteration_time_ms = 100;
  unsigned warmup = 3;
  unsigned iterations = 15;      // measured iterations before the adaptive stop may end a case
  unsigned max_iterations = 100;
  double target_error = 0.02;    // Error / Mean below which a case stops early
  // Order-balanced rounds. The setting's default is the plan's (RunnerOptions::interleave, true), which
  // report_config copies here; false is what a record that does not say means: cases one after another.
  bool interleave = false;
  bool memory = true;            // memory diagnoser on
  bool phases = true;            // phase timeline stamped
  bool counters = false;         // perf_event counters
  std::vector<std::string> allocators;  // allocator jobs; empty: this process only
  std::string url;               // external server; empty: embedded server
  std::string link = "loopback";  // --link SPEC as given
  std::string link_leg = "client";  // --link-leg: "client" or "upstream" (LinkInfo::leg)
  std::string out;               // results folder root
  std::vector<std::string> formats;
  std::vector<std::string> columns;  // extra columns of the main table (--columns; reporters.hpp)
  int cpu = -1;                  // client CPU requested; -1: automatic
  std::string server_cpu = "auto";  // embedded server's CPU: "auto" (another than the client's), "none", or a number
  std::vector<std::string> arguments;  // the command line after the program name, as given
  // Every option of the command line after parsing, by its flag: the value given (a list joined by
  // commas), else the default --help shows; a flag "true" or "false". The typed keys above are the
  // settings bench reads back (compare, pages); this one holds them all, so that a new option is in the
  // report without a line of its own. Empty in files written before it.
  std::map<std::string, std::string> options;
};

enum class CaseStatus { ok, skipped, failed };
[[nodiscard]] std::string_view status_name(CaseStatus status) noexcept;
[[nodiscard]] std::optional<CaseStatus> parse_status(std::string_view name) noexcept;

struct Stats {
  std::size_t n = 0;         // samples kept after outlier removal
  std::size_t outliers = 0;  // upper outliers removed by Tukey's fence
  double mean = 0;
  double error = 0;          // half-width of the 99.9 % confidence interval of the mean
  double stddev = 0;
  double median = 0;
  double p95 = 0;
  double min = 0;
  double max = 0;
  // Against the baseline strategy of the same method, payload, size and allocator; null when
  // there is none (or it failed). See statistics.hpp for how the ratio distribution is formed.
  std::optional<double> ratio;
  std::optional<double> ratio_sd;
  // The 95 % confidence interval of Ratio, the median of the per-round ratios (statistics.hpp's
  // median_interval): interleaved runs with at least 6 rounds only; null otherwise, and for the
  // baseline itself.
  std::optional<double> ratio_low;
  std::optional<double> ratio_high;
};

struct Memory {
  // null when the diagnoser was off or could not count (see memory_diagnoser.hpp)
  std::optional<double> bytes_per_op;   // bytes requested, not bytes the allocator handed out
  std::optional<double> allocs_per_op;  // allocation calls (realloc counts as one)
  std::optional<double> alloc_ratio;    // bytes_per_op / the baseline's
  uint64_t peak_rss = 0;                // bytes, process high-water mark at the end of the case
  double minor_faults_per_op = 0;
  // What the strategy keeps per connection while its connections are idle (Strategy::held_memory, read
  // after setup and the pilot): bodies, models and receive buffers, and the bodies alone. null: the
  // strategy does not say.
  std::optional<double> held_bytes_per_connection;
  std::optional<double> held_body_bytes_per_connection;
  // The process's resident memory (/proc/self/statm) after setup and the pilot less before setup, per
  // connection: what the case made the client process keep, strategy and allocator together (the server
  // is another process). null: not read.
  std::optional<double> rss_bytes_per_connection;
};

// CPU time of the client's measuring thread per op, over the timed segments of the measured iterations
// (getrusage RUSAGE_THREAD; verified ops excluded): what the client spends, not what the op waits. The
// worker threads a strategy runs and reports (IoCounters' worker_* fields: blocking_sockets with N in
// flight) are in it; a library's own threads (cpprest's pool), which no strategy sees, are not.
struct Cpu {
  double user_ns_per_op = 0;
  double system_ns_per_op = 0;
};

// io_uring work per op, from the strategy's IoCounters over the measured iterations.
struct Io {
  double ring_enters_per_op = 0;
  double sqes_per_op = 0;
  double cqes_per_op = 0;
  double connections_per_op = 0;
  double zero_copy_sends_per_op = 0;
  double zero_copy_copied_per_op = 0;
  // System calls on the request path (io_uring_enter for ringlab's strategies; connect, send, recv,
  // epoll_wait for the blocking and epoll peers). null: not measured (libcurl does not report them).
  std::optional<double> syscalls_per_op;
  // The response bodies per op and their copies on the client's side (strategy.hpp's IoCounters body_*):
  // copied from the socket by the kernel, copied or moved by ringlab's code after they landed, mapped
  // without a copy. null: not counted (a library peer's buffers are its own).
  std::optional<double> body_bytes_per_op;
  std::optional<double> kernel_copied_bytes_per_op;
  std::optional<double> ringlab_copied_bytes_per_op;
  std::optional<double> mapped_bytes_per_op;
};

// Median duration of each phase of one request, from the Timeline the strategy fills. A phase that
// never happened in the sampled ops (connect on a kept-alive connection) is null.
struct Phases {
  std::size_t ops_sampled = 0;
  std::optional<double> connect;      // start -> connected
  std::optional<double> send;         // connected (or start) -> request sent
  std::optional<double> wait;         // request sent -> first response byte
  std::optional<double> head;         // first byte -> headers parsed
  std::optional<double> body;         // headers parsed -> body complete
  std::optional<double> deserialize;  // body complete -> deserialized
  // Time run() took beyond its stamped span (first to last stamp): the strategy's own work before
  // the request starts and after the last stamp (buffer resets, bookkeeping, a close).
  std::optional<double> other;
  // Not phases but points, from the request sent (they overlap wait, head and body): when the first
  // and the last body byte reached the body sink (http/timeline.hpp). A body sent as it is serialized
  // shows its first bytes early; one serialized whole first shows them just before the last. Stamped
  // by ringlab's own response exchange (http::ResponseReceiver), so null for rows that do not use it.
  std::optional<double> first_body;
  std::optional<double> last_body;
  // A client made per op (--client fresh), around its request: destroying the last op's client (its
  // records, buffers, object), building and setting up the new one (ring or event loop, buffers, the
  // library's client object), and tearing it down after the request (ring and connection closed). Its
  // connect is `connect`. Null for a pooled client.
  std::optional<double> client_free;
  std::optional<double> client_setup;
  std::optional<double> client_teardown;
};

// The per-op latency distribution of the ops whose phase timeline was sampled (histogram.hpp):
// percentiles within 3 significant digits, the exact max, and the non-empty buckets.
struct LatencyBucket {
  uint64_t lowest_ns = 0;   // smallest value counted in the bucket
  uint64_t highest_ns = 0;  // largest value counted in the bucket
  uint64_t count = 0;
};
struct Latency {
  uint64_t count = 0;  // ops sampled
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double p999 = 0;
  double max = 0;
  std::vector<LatencyBucket> buckets;  // ascending; in the JSON, [lowest_ns, highest_ns, count] triples
};

// How far a case's numbers can be trusted, as BenchmarkDotNet judges it (diagnostics.hpp computes
// these and says the thresholds). Absent values (null) could not be computed: too few samples.
struct Diagnostics {
  std::optional<double> cv;       // StdDev / Mean of the kept samples
  std::optional<double> m_value;  // BenchmarkDotNet's multimodality m-value (2: one mode, 4: two)
  bool bimodal = false;           // m_value above the threshold
  bool target_error_missed = false;  // Error / Mean above config.target_error
  bool error_above_mean = false;     // Error > Mean: the confidence interval includes 0
  bool too_few_iterations = false;   // fewer samples kept after outlier removal than the minimum
  // The baseline of this case's group has a CV above the threshold: its ratio is unreliable.
  bool baseline_unstable = false;
};

// Per-op values of hardware/software counters by name ("cycles", "instructions", "task-clock",
// "context-switches", ...). null: the counter is not supported here.
using Counters = std::map<std::string, std::optional<double>>;

struct CaseResult {
  std::string strategy;
  std::string method = "GET";  // "GET" or "POST"
  std::string payload;         // "weather", "repos" or "github"
  std::size_t size = 0;        // records per response (GET) or per posted body (POST)
  std::string connection = "pooled";  // "pooled" (kept alive across requests) or "fresh" (one per request)
  std::string server_mode = "cached";  // "cached" (Content-Length, from the server's cache) or "seed"
  // Requests in flight at once (--inflight): with N > 1 an op is one round of N requests on N kept-alive
  // connections, so every per-op figure covers N requests (the *_per_request columns divide by N).
  std::size_t inflight = 1;
  // "pooled" (one client for the whole case) or "fresh" (--client fresh: every op made, set up, ran and
  // destroyed a client of its own, so every per-op figure includes building it).
  std::string client = "pooled";
  // Client threads (--client-threads): with T > 1 an op is one op of each of T copies of the strategy,
  // run at once on T threads (T x inflight requests); allocations, page faults and CPU time are the T
  // threads' summed. Its latency and phases are not sampled.
  std::size_t client_threads = 1;
  std::string allocator;       // allocator of the process that ran the case
  bool baseline = false;
  // A reference row (floor_transfer, floor_parse): a physical limit shown for comparison, not a
  // contender. It gets a ratio; the diagnostics do not warn about ratios against it.
  bool reference = false;
  // Not ringlab's io_uring stack: a client library, blocking sockets, epoll (Descriptor::peer).
  bool peer = false;
  // The reference row that parses as this one does, warm and without the network (Descriptor::parse_floor:
  // floor_parse, floor_parse_rapidjson, floor_parse_nlohmann); empty for none.
  std::string parse_floor;
  CaseStatus status = CaseStatus::ok;
  std::string reason;  // why it was skipped or failed; empty when ok
  // Skipped because the strategy does not apply to this payload (three_fields reads fields only the
  // github records have), not because something is missing: the console leaves such rows out.
  bool not_applicable = false;
  uint64_t ops_per_iteration = 0;
  unsigned warmup_iterations = 0;
  // ns per op of every measured iteration, in order (interleaved, the default: sample i is round i).
  std::vector<double> samples_ns;
  std::vector<std::size_t> outliers;  // indices into samples_ns that the statistics left out
  Stats stats;
  Memory memory;
  Cpu cpu;
  Io io;
  Phases phases;
  std::optional<Latency> latency;  // null when no op was sampled (--no-phases)
  Diagnostics diagnostics;
  Counters counters;
  uint64_t checksum = 0;
  bool partial_checksum = false;  // the checksum covers some fields only (three_fields): no baseline check
  // Ops of the measured iterations whose records were checksummed in full, clock stopped (one or two
  // per iteration): what the checksum above rests on. 0 for a case that was not measured.
  uint64_t verified_ops = 0;
  std::string notes;
};

struct Report {
  int schema_version = kReportSchemaVersion;
  // The run was stopped by SIGINT/SIGTERM: only the cases whose status is ok were measured to the end
  // (interleaved: over the rounds completed by every case); the others say "interrupted".
  bool partial = false;
  Environment environment;
  Config config;
  std::vector<CaseResult> cases;
};

// The "Method/Payload/Size/Allocator" identity of a case (and "/xN" with N requests in flight, "/tT" with
// T client threads), used to pair it with its baseline.
[[nodiscard]] std::string case_key(const CaseResult& c);

// The requests one op of a case stands for: In flight x Client threads (1 for a single request).
[[nodiscard]] inline double requests_per_op(const CaseResult& c) noexcept {
  return static_cast<double>(c.inflight > 0 ? c.inflight : 1) * static_cast<double>(c.client_threads > 0 ? c.client_threads : 1);
}

// "string_copy weather 1000 (glibc)": how the notes and warnings name a case.
[[nodiscard]] std::string case_label(const CaseResult& c);

// " (fresh client)", " (in-flight client)" or nothing for the pooled client: what tells a row's two
// clients apart where one run holds both (--client pooled,inflight; the seeds).
[[nodiscard]] std::string_view client_mark(const CaseResult& c) noexcept;
// "views (in-flight client)": how the findings and tables name a row, its client marked.
[[nodiscard]] std::string row_name(const CaseResult& c);

// "glibc 2.36" of the environment's "glibc 2.36 (/lib/x86_64-linux-gnu/libc.so.6), called through ...":
// the allocator's name without where it was found on the machine that ran (the console's header, the
// findings and results pages name it so; report.json keeps the whole description).
[[nodiscard]] std::string allocator_short_name(std::string_view description);

// Fills stats.ratio/ratio_sd and memory.alloc_ratio of every case from the baseline case with the
// same method, payload, size and allocator. Paired (per-round) ratios when the run interleaved.
// Then recomputes every case's diagnostics (diagnostics.hpp), which judge the same baseline pairing.
void compute_ratios(Report& report);

// Sets c.outliers (upper outliers of c.samples_ns by Tukey's fence) and c.stats from the samples
// kept (statistics.hpp), leaving the ratios alone: what a case's numbers are made of.
void summarize_samples(CaseResult& c);

// Appends `from`'s cases to `into` (an allocator job's results into the parent's), keeps `into`'s
// environment and config, adds `from`'s warnings prefixed by its allocator, recomputes ratios.
void merge_reports(Report& into, Report from);

[[nodiscard]] nlohmann::json to_json(const Report& report);
[[nodiscard]] Result<Report> report_from_json(const nlohmann::json& json);
[[nodiscard]] Result<Report> parse_report(std::string_view text);
[[nodiscard]] Result<Report> read_report_file(const std::filesystem::path& path);

// The JSON text of `report` written whole to `fd` (a pipe to the parent, a file); the fd is not
// closed. Short writes are continued, EINTR is retried, anything else is returned.
[[nodiscard]] Status write_report_fd(int fd, const Report& report);
// Reads `fd` to end of file and parses it.
[[nodiscard]] Result<Report> read_report_fd(int fd);

}  // namespace ringlab::bench
