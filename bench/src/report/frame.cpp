// What frames the markdown table: the environment block above it (as BenchmarkDotNet prints it) and the
// legend below it (also bench --help's footer).
#include "ringlab/bench/report/reporters.hpp"

#include <fmt/format.h>

#include <cmath>

#include "columns.hpp"

namespace ringlab::bench {

namespace {

constexpr std::string_view kNa = "n/a";

}  // namespace

std::string render_environment(const Report& report) {
  const Environment& e = report.environment;
  const Config& c = report.config;
  std::string out = "```ini\n";
  out += fmt::format("ringlab bench, {} (kernel {})\n", e.os.empty() ? "Linux" : e.os, e.kernel);
  out += fmt::format("CPU: {}, {} logical cores; governor {}; perf_event_paranoid {}\n", e.cpu, e.cores,
                     e.governor, e.perf_event_paranoid);
  out += fmt::format("Timer: {} at {} MHz ({}); overhead {} ns, resolution {} ns\n", e.tick_source,
                     format_number(e.tsc_hz / 1e6, 3), e.tsc_hz_source, format_number(e.timer_overhead_ns, 1),
                     format_number(e.timer_resolution_ns, 2));
  out += fmt::format("io_uring: {}\n", e.io_uring_features);
  out += fmt::format("Build: {}, {}; liburing {}, simdjson {} (On-Demand kernel: {}), llhttp {}\n", e.compiler,
                     e.build_type, e.liburing_version, e.simdjson_version, e.simdjson_kernel, e.llhttp_version);
  out += fmt::format("Source: ringlab {}, commit {}{}; flags: {}\n", e.version.empty() ? "n/a" : e.version,
                     e.git_commit.empty() ? "unknown" : e.git_commit,
                     e.git_dirty.value_or(false) ? " with uncommitted changes" : "",
                     e.compiler_flags.empty() ? "n/a" : e.compiler_flags);
  out += fmt::format("Allocator: {}\n", e.allocator);
  std::string pinning = e.client_cpu >= 0 ? fmt::format("client on CPU {}", e.client_cpu) : "client not pinned";
  if (e.server_cpu >= 0) pinning += fmt::format(", server on CPU {}", e.server_cpu);
  out += fmt::format("Server: {}; {}\n", e.server, pinning);
  if (!e.server_environment.empty()) {
    const auto field = [&](const char* key) {
      const auto it = e.server_environment.find(key);
      return it == e.server_environment.end() ? std::string(kNa) : it->second;
    };
    out += fmt::format("Server host (GET /env): {}, kernel {}, {} cores, {} thread(s), build {} {}\n", field("cpu"),
                       field("kernel"), field("cores"), field("threads"), field("version"), field("build_type"));
  }
  if (e.link) {
    const LinkInfo& l = *e.link;
    out += fmt::format("Link: {}\n", l.description);
    out += fmt::format("Link measured: RTT {} us median ({} min, {} ping-pongs; configured {} us), rate {} Mbit/s ({} MB bulk)\n",
                       format_number(l.measured_rtt_us, 1), format_number(l.measured_rtt_min_us, 1), l.rtt_samples,
                       format_number(l.configured_rtt_us, 1), format_number(l.measured_rate_mbit, 0),
                       format_number(l.rate_sample_bytes / 1e6, 1));
    out += fmt::format("Link built: {}\n", l.emulator);
  } else {
    out += "Link: loopback (no emulation)\n";
  }
  out += fmt::format(
      "Run: suite {}, iteration time {} ms, warm-up {}, iterations {}..{}, target error {} %, {}{}{}{}{}\n", c.suite,
      format_number(c.iteration_time_ms, 0), c.warmup, c.iterations, c.max_iterations,
      format_number(c.target_error * 100, 1), c.interleave ? "interleaved rounds" : "one case after another",
      c.memory ? "" : ", memory diagnoser off",
      c.connection == "fresh" ? ", a new connection per request (--connection fresh)" : "",
      c.client == "fresh"                          ? ", a new client per request, built and destroyed inside each op (--client fresh)"
      : c.client != "pooled" && !c.client.empty() ? fmt::format(", clients {} (--client {})", c.client, c.client)
                                                   : std::string(),
      c.server_mode == "seed" ? ", GET bodies serialized per request and sent chunked (--server-mode seed)" : "");
  const auto load = [](const std::optional<LoadAverage>& l) {
    return l ? fmt::format("{:.2f} {:.2f} {:.2f}", l->one, l->five, l->fifteen) : std::string(kNa);
  };
  out += fmt::format("Started: {}; load average (1, 5, 15 min) at start {}, at end {}\n", e.timestamp,
                     load(e.load_average_start), load(e.load_average_end));
  for (const std::string& w : e.warnings) out += fmt::format("WARNING: {}\n", w);
  out += "```\n";
  return out;
}

std::string render_legend() {
  std::string out = R"legend(Legend
  Method         : the strategy (bench --list says where its bytes land and which .NET pattern it mirrors);
                   "(ref)" marks a reference row, a physical limit rather than a contender (floor_transfer:
                   the transfer alone, no parse; floor_parse: the parse alone, no network)
  Payload        : the route's records (weather: GET /weather, repos: GET /repos, github: GET /github,
                   profiles: GET /profiles, the records of jos's GitHub dummy API, read into his 3-field DTO)
  Size           : records per response (GET) or per posted body (POST)
)legend";
  // Each column of the tables says what it is in its row of the column table (columns.cpp).
  for (const columns::Column& column : columns::all()) out += column.legend;
  out += R"legend(  Phases         : median per op of start->connected (Connect), ->request sent (Send), ->first response
                   byte (Wait), ->headers parsed (Head), ->body complete (Body), ->deserialized (Deserialize),
                   and the time run() took outside that stamped span (Other). Medians: with a tail of slow
                   requests (a wake-up on the other CPU) they add up to less than the Mean. n/a: not seen
                   in the sampled ops (Connect on a kept-alive connection; Send and Wait for libcurl, which
                   does not say when the request went out; every phase of a case that stamps none).
                   1st body and Last body are points, not phases: from the request sent to the first and
                   the last body byte reaching the body sink (ringlab's own exchange stamps them; n/a for
                   the client libraries). A body sent as it is serialized (--server-mode seed) shows its
                   first bytes long before its last. With --client fresh, Client free, Client setup and
                   Client teardown: the last op's client destroyed, the new one built and set up (ring or
                   event loop, buffers), and torn down after the request (ring and connection closed)
  Warnings       : above the table, per case: CV (StdDev/Mean), a bimodal distribution (m-value > 3.2, as
                   BenchmarkDotNet), Error above the target error or above the Mean, fewer than 5 iterations
                   kept; and a baseline whose CV is above 10 %, which makes every ratio against it unreliable.
                   The console counts them by kind and names only the bimodal cases and unstable baselines
  Findings       : "What this run says" under the table, generated from the results: per size the fastest
                   contender and its Ratio with the interval, how far it is from the floors (their sum and
                   the larger one), the largest saving in allocations, the baseline's page faults under its
                   allocator, and which differences are within the noise (the interval includes 1.0)
  Precision      : one unit per column, chosen from its smallest value (the phase table: one unit for
                   the whole table, from its median value); no digit finer than the timer (its
                   resolution for iteration times, its overhead for single ops)
  ?              : no baseline in the group;  n/a : not measured;  FAILED/skipped : see the notes
  1 ns           : 1 nanosecond (0.000000001 s);  1 μs : 1 microsecond (0.000001 s);  1 ms : 0.001 s
)legend";
  return out;
}

}  // namespace ringlab::bench
