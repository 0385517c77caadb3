#include "columns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

#include "ringlab/bench/process/allocators.hpp"

namespace ringlab::bench::columns {

namespace {

using Number = std::optional<double>;

bool ok(const CaseResult& c) { return c.status == CaseStatus::ok; }

// A value the statistics only have for a case that was measured.
template <double Stats::*kField>
Number stat(const Report&, const CaseResult& c) {
  if (!ok(c)) return std::nullopt;
  return c.stats.*kField;
}
template <double Latency::*kField>
Number latency(const Report&, const CaseResult& c) {
  if (!ok(c) || !c.latency || c.latency->count == 0) return std::nullopt;
  return (*c.latency).*kField;
}
// A member of one part of the case as it stands, whatever the case's status: null where the part holds
// null (not measured); a count as a double.
template <auto kPart, auto kField>
Number part_value(const Report&, const CaseResult& c) {
  const auto& value = (c.*kPart).*kField;
  if constexpr (std::is_integral_v<std::remove_cvref_t<decltype(value)>>) {
    return static_cast<double>(value);
  } else {
    return value;
  }
}
template <auto kField>
constexpr auto optional_stat = &part_value<&CaseResult::stats, kField>;
template <auto kField>
constexpr auto stat_count = &part_value<&CaseResult::stats, kField>;
template <auto kField>
constexpr auto phase = &part_value<&CaseResult::phases, kField>;
template <auto kField>
constexpr auto memory = &part_value<&CaseResult::memory, kField>;
template <auto kField>
constexpr auto io = &part_value<&CaseResult::io, kField>;

std::string bool_text(bool v) { return v ? "true" : "false"; }

// A case that ran no io_uring ring (a socket peer, libcurl, floor_parse) has no SQEs or CQEs to count.
bool used_ring(const CaseResult& c) {
  return c.io.ring_enters_per_op > 0 || c.io.sqes_per_op > 0 || c.io.cqes_per_op > 0;
}

std::string_view no_baseline(const CaseResult&) { return "?"; }
std::string_view nothing_of_that_kind(const CaseResult&) { return "-"; }

bool several_allocators(const Report& report) {
  return std::any_of(report.cases.begin(), report.cases.end(),
                     [&report](const CaseResult& c) { return c.allocator != report.cases.front().allocator; });
}
// A case had more than one request in flight, or more than one client thread: an op is then a round of
// N requests on each of T threads, and the per-request columns say what one request cost.
bool any_inflight(const Report& report) {
  return std::any_of(report.cases.begin(), report.cases.end(),
                     [](const CaseResult& c) { return c.inflight > 1 || c.client_threads > 1; });
}
Number per_request(const CaseResult& c, double per_op) { return per_op / requests_per_op(c); }
Number cpu_per_op(const CaseResult& c) {
  if (!ok(c)) return std::nullopt;
  return c.cpu.user_ns_per_op + c.cpu.system_ns_per_op;
}

bool any_zero_copy(const Report& report) {
  return std::any_of(report.cases.begin(), report.cases.end(),
                     [](const CaseResult& c) { return ok(c) && c.io.zero_copy_sends_per_op > 0; });
}

// A case counted its body's copies (ringlab's stack and the socket peers do; a report of library peers
// alone, or one written before the copies were counted, has none).
bool any_copies(const Report& report) {
  return std::any_of(report.cases.begin(), report.cases.end(),
                     [](const CaseResult& c) { return ok(c) && c.io.body_bytes_per_op.has_value(); });
}
bool any_mapped(const Report& report) {
  return std::any_of(report.cases.begin(), report.cases.end(),
                     [](const CaseResult& c) { return ok(c) && c.io.mapped_bytes_per_op.value_or(0) > 0; });
}

constexpr unsigned kTables = kCompact | kFull;

// A phase's median per op (Phases::*kField) under `key`, in report.csv and report.gbench.json: the tables
// show the phases in a table of their own (markdown.cpp's phase_table).
template <std::optional<double> Phases::*kField>
constexpr Column phase_column(std::string_view key) {
  return Column{.key = key, .kind = Kind::time, .views = kCsv | kGbench, .number = phase<kField>};
}

constexpr std::array kColumns{
    // What a case is (the tables lay these out themselves, as the identity of a row).
    Column{.key = "strategy", .kind = Kind::text, .views = kCsv, .text = [](const CaseResult& c) { return c.strategy; }},
    Column{.key = "method", .kind = Kind::text, .views = kCsv, .text = [](const CaseResult& c) { return c.method; }},
    Column{.key = "payload", .kind = Kind::text, .views = kCsv, .text = [](const CaseResult& c) { return c.payload; }},
    Column{.key = "size", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return std::to_string(c.size); }},
    Column{.key = "connection", .kind = Kind::text, .views = kCsv, .text = [](const CaseResult& c) { return c.connection; }},
    Column{.key = "server_mode", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return c.server_mode; }},
    Column{.key = "inflight", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return std::to_string(c.inflight); }},
    Column{.key = "client", .kind = Kind::text, .views = kCsv, .text = [](const CaseResult& c) { return c.client; }},
    Column{.key = "client_threads", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return std::to_string(c.client_threads); }},
    Column{.key = "allocator", .kind = Kind::text, .views = kCsv, .text = [](const CaseResult& c) { return c.allocator; }},
    Column{.key = "baseline", .kind = Kind::text, .views = kCsv, .text = [](const CaseResult& c) { return bool_text(c.baseline); }},
    Column{.key = "status", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return std::string(status_name(c.status)); }},
    Column{.key = "reason", .kind = Kind::text, .views = kCsv, .text = [](const CaseResult& c) { return c.reason; }},
    Column{.key = "ops_per_iteration", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return std::to_string(c.ops_per_iteration); }},
    Column{.key = "warmup_iterations", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return std::to_string(c.warmup_iterations); }},
    Column{.key = "samples", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return std::to_string(c.samples_ns.size()); }},
    Column{.key = "n", .kind = Kind::count, .views = kCsv, .number = stat_count<&Stats::n>},
    Column{.key = "outliers", .kind = Kind::count, .views = kCsv, .number = stat_count<&Stats::outliers>},

    // Time per op.
    Column{.header = "Mean", .key = "mean_ns", .kind = Kind::time, .views = kFull | kCsv, .number = stat<&Stats::mean>,
           .legend = "  Mean           : arithmetic mean of the per-op time of the measured iterations (upper outliers removed)\n"},
    Column{.header = "Error", .key = "error_ns", .kind = Kind::time, .views = kFull | kCsv, .number = stat<&Stats::error>,
           .legend = "  Error          : half of the 99.9 % confidence interval of the mean (Student t, n-1 degrees of freedom)\n"},
    Column{.header = "StdDev", .key = "stddev_ns", .kind = Kind::time, .views = kFull | kCsv, .number = stat<&Stats::stddev>,
           .legend = "  StdDev         : standard deviation of the per-op times of the iterations\n"},
    Column{.header = "Median", .key = "median_ns", .kind = Kind::time, .views = kTables | kCsv, .number = stat<&Stats::median>,
           .legend = "  Median         : 50th percentile of the per-op times of the iterations\n"},
    Column{.header = "P95", .key = "p95_ns", .kind = Kind::time, .views = kFull | kCsv, .number = stat<&Stats::p95>,
           .legend = "  P95            : 95th percentile of the per-op times of the iterations (linear interpolation)\n"},
    Column{.key = "min_ns", .kind = Kind::time, .views = kCsv, .number = stat<&Stats::min>},
    Column{.key = "max_ns", .kind = Kind::time, .views = kCsv, .number = stat<&Stats::max>},
    Column{.header = "Op P50", .key = "latency_p50_ns", .kind = Kind::op_time, .views = kFull | kCsv,
           .number = latency<&Latency::p50>, .option = "p50",
           .legend = "  Op P50 .. Max  : with --columns p50,p90,p99,p999,max (or all): percentiles and maximum of the latency\n"
                     "                   of single ops (those whose phases were sampled), from a log-linear histogram exact\n"
                     "                   to 3 digits\n"},
    Column{.header = "Op P90", .key = "latency_p90_ns", .kind = Kind::op_time, .views = kFull | kCsv,
           .number = latency<&Latency::p90>, .option = "p90"},
    Column{.header = "Op P99", .key = "latency_p99_ns", .kind = Kind::op_time, .views = kFull | kCsv,
           .number = latency<&Latency::p99>, .option = "p99"},
    Column{.header = "Op P99.9", .key = "latency_p999_ns", .kind = Kind::op_time, .views = kFull | kCsv,
           .number = latency<&Latency::p999>, .option = "p999"},
    Column{.header = "Op Max", .key = "latency_max_ns", .kind = Kind::op_time, .views = kFull | kCsv,
           .number = latency<&Latency::max>, .option = "max"},
    Column{.key = "latency_count", .kind = Kind::count, .views = kCsv,
           .number = [](const Report&, const CaseResult& c) -> Number {
             if (!c.latency) return std::nullopt;
             return static_cast<double>(c.latency->count);
           }},

    // Many requests in flight (--inflight): what one request cost, when an op is a round of N.
    Column{.header = "Req/s", .key = "requests_per_second", .kind = Kind::count, .views = kTables | kCsv | kGbench,
           .number = [](const Report&, const CaseResult& c) -> Number {
             if (!ok(c) || c.stats.median <= 0) return std::nullopt;
             return requests_per_op(c) * 1e9 / c.stats.median;
           },
           .shown = any_inflight,
           .legend = "  Req/s          : with --inflight: requests completed per second, In flight x 1 s / Median\n"
                     "                   (x Client threads with --client-threads)\n"},
    Column{.header = "CPU/req", .key = "cpu_ns_per_request", .kind = Kind::time, .views = kTables | kCsv | kGbench,
           .number = [](const Report&, const CaseResult& c) -> Number {
             const Number cpu = cpu_per_op(c);
             return cpu ? per_request(c, *cpu) : std::nullopt;
           },
           .shown = any_inflight,
           .legend = "  CPU/req        : with --inflight: CPU time of the client's measuring thread (user + system, getrusage\n"
                     "                   RUSAGE_THREAD) per request, with that of the strategy's own worker threads\n"
                     "                   (blocking_sockets' N threads, which report theirs); a library's own threads are\n"
                     "                   not in it; with --client-threads T: the T client threads' summed, per request of all T\n"},
    Column{.header = "Sys/req", .key = "cpu_system_ns_per_request", .kind = Kind::time, .views = kFull | kCsv,
           .number = [](const Report&, const CaseResult& c) -> Number {
             return ok(c) ? per_request(c, c.cpu.system_ns_per_op) : std::nullopt;
           },
           .shown = any_inflight,
           .legend = "  Sys/req        : with --inflight: the kernel's share of CPU/req\n"},
    Column{.header = "Syscalls/req", .key = "syscalls_per_request", .kind = Kind::count, .views = kTables | kCsv,
           .number = [](const Report&, const CaseResult& c) -> Number {
             return c.io.syscalls_per_op ? per_request(c, *c.io.syscalls_per_op) : std::nullopt;
           },
           .shown = any_inflight,
           .legend = "  Syscalls/req   : with --inflight: Syscalls/op / In flight (/ Client threads with --client-threads)\n"},
    Column{.header = "CPU/op", .key = "cpu_ns_per_op", .kind = Kind::time, .views = kFull | kCsv | kGbench,
           .number = [](const Report&, const CaseResult& c) { return cpu_per_op(c); },
           .legend = "  CPU/op         : CPU time of the client's measuring thread per op, user + system (getrusage\n"
                     "                   RUSAGE_THREAD, tick-sampled split), with the strategy's own worker threads'; below\n"
                     "                   Median by the time the op waited (above it when workers ran at once)\n"},
    Column{.key = "cpu_user_ns_per_op", .kind = Kind::time, .views = kCsv | kGbench,
           .number = [](const Report&, const CaseResult& c) -> Number { return ok(c) ? Number(c.cpu.user_ns_per_op) : std::nullopt; }},
    Column{.key = "cpu_system_ns_per_op", .kind = Kind::time, .views = kCsv | kGbench,
           .number = [](const Report&, const CaseResult& c) -> Number { return ok(c) ? Number(c.cpu.system_ns_per_op) : std::nullopt; }},

    // Against the baseline.
    Column{.header = "Ratio", .key = "ratio", .kind = Kind::ratio, .views = kTables | kCsv | kGbench,
           .number = optional_stat<&Stats::ratio>, .missing = no_baseline,
           .legend = "  Ratio          : against the baseline of the same payload and size: the median of the per-round ratios\n"
                     "                   (paired rounds, the default), or the mean of every pairing of samples (--no-interleave)\n"},
    Column{.header = "RatioSD", .key = "ratio_sd", .kind = Kind::ratio, .views = kFull | kCsv,
           .number = optional_stat<&Stats::ratio_sd>, .missing = no_baseline,
           .legend = "  RatioSD        : standard deviation of that distribution of ratios\n"},
    Column{.header = "Ratio 95% CI", .key = "ratio_low", .kind = Kind::ratio, .views = kTables | kCsv,
           .number = optional_stat<&Stats::ratio_low>,
           .text = [](const CaseResult& c) -> std::string {
             // The baseline the ratios are taken against has none; a second baseline (the same row under
             // another client: --client pooled,inflight) has its interval against the first.
             if (c.baseline && !c.stats.ratio_low) return "-";
             if (!c.stats.ratio_low || !c.stats.ratio_high) return "n/a";
             return fmt::format("{:.2f}-{:.2f}", *c.stats.ratio_low, *c.stats.ratio_high);
           },
           .legend = "  Ratio 95% CI   : the 95 % confidence interval of Ratio, the median of the per-round ratios: between the\n"
                     "                   order statistics that bound a median with at least 95 % probability (binomial, no\n"
                     "                   assumption about the distribution); n/a without 6 paired rounds or with --no-interleave\n"},
    Column{.key = "ratio_high", .kind = Kind::ratio, .views = kCsv, .number = optional_stat<&Stats::ratio_high>},
    Column{.header = "Sys Ratio", .kind = Kind::ratio, .views = kFull,
           .number = [](const Report& report, const CaseResult& c) { return alloc::ratio_to_system(report, c); },
           .missing = no_baseline, .shown = several_allocators,
           .legend = "  Sys Ratio      : allocator jobs only: Mean / the same strategy's Mean under the system allocator (glibc)\n"},

    // Memory.
    Column{.header = "Allocated", .key = "bytes_per_op", .kind = Kind::bytes, .views = kTables | kCsv | kGbench,
           .number = memory<&Memory::bytes_per_op>,
           .legend = "  Allocated      : heap bytes requested per op (malloc family and operator new; 1 KB = 1024 B)\n"},
    Column{.header = "Allocs/op", .key = "allocs_per_op", .kind = Kind::count, .views = kTables | kCsv | kGbench,
           .number = memory<&Memory::allocs_per_op>,
           .legend = "  Allocs/op      : heap allocation calls per op\n"},
    Column{.header = "Alloc Ratio", .key = "alloc_ratio", .kind = Kind::ratio, .views = kFull | kCsv,
           .number = memory<&Memory::alloc_ratio>,
           .missing = [](const CaseResult& c) -> std::string_view { return c.memory.bytes_per_op ? "?" : "n/a"; },
           .legend = "  Alloc Ratio    : Allocated / the baseline's Allocated\n"},
    Column{.key = "peak_rss_bytes", .kind = Kind::bytes, .views = kCsv | kGbench,
           .number = [](const Report&, const CaseResult& c) -> Number { return static_cast<double>(c.memory.peak_rss); }},
    Column{.header = "Page faults/op", .key = "minor_faults_per_op", .kind = Kind::count, .views = kTables | kCsv | kGbench,
           .number = [](const Report&, const CaseResult& c) -> Number { return c.memory.minor_faults_per_op; },
           .legend = "  Page faults/op : minor page faults of the measuring thread per op (getrusage), with the strategy's own\n"
                     "                   worker threads'; the usual cause of the run-to-run spread of strategies that\n"
                     "                   allocate megabytes per op\n"},
    // Many requests in flight: what a connection costs while it waits (read after setup and the pilot).
    Column{.header = "Held/conn", .key = "held_bytes_per_connection", .kind = Kind::bytes, .views = kTables | kCsv,
           .number = memory<&Memory::held_bytes_per_connection>, .shown = any_inflight,
           .legend = "  Held/conn      : with --inflight: what the strategy keeps per connection while idle, after setup and the\n"
                     "                   pilot: body buffers' capacity, models' record vectors (not the strings records own\n"
                     "                   outside them), receive buffers (a provided-buffer ring counted once, shared by N)\n"},
    Column{.key = "held_body_bytes_per_connection", .kind = Kind::bytes, .views = kCsv,
           .number = memory<&Memory::held_body_bytes_per_connection>},
    Column{.header = "RSS/conn", .key = "rss_bytes_per_connection", .kind = Kind::bytes, .views = kFull | kCsv,
           .number = memory<&Memory::rss_bytes_per_connection>, .shown = any_inflight,
           .legend = "  RSS/conn       : with --inflight: bench's resident memory after setup and the pilot less before setup,\n"
                     "                   / In flight: what the case made the client keep (strategy, allocator, sockets' user\n"
                     "                   memory; the server is another process); memory the allocator kept from earlier cases\n"
                     "                   and hands out again is not in it\n"},

    // The kernel.
    Column{.header = "Syscalls/op", .key = "syscalls_per_op", .kind = Kind::count, .views = kTables | kCsv | kGbench,
           .number = [](const Report&, const CaseResult& c) { return c.io.syscalls_per_op; },
           .legend = "  Syscalls/op    : system calls on the request path per op: io_uring_enter for ringlab's io_uring\n"
                     "                   strategies; connect, send, recv, poll/epoll_wait for the socket peers; n/a for libcurl,\n"
                     "                   which does not report its own\n"},
    Column{.key = "ring_enters_per_op", .kind = Kind::count, .views = kCsv | kGbench, .number = io<&Io::ring_enters_per_op>},
    Column{.header = "SQEs/op", .key = "sqes_per_op", .kind = Kind::count, .views = kFull | kCsv | kGbench,
           .number = [](const Report&, const CaseResult& c) -> Number {
             return used_ring(c) ? Number(c.io.sqes_per_op) : std::nullopt;
           },
           .missing = nothing_of_that_kind,
           .legend = "  SQEs/op        : submission queue entries submitted per op (\"-\": the case uses no io_uring ring)\n"},
    Column{.header = "CQEs/op", .key = "cqes_per_op", .kind = Kind::count, .views = kFull | kCsv | kGbench,
           .number = [](const Report&, const CaseResult& c) -> Number {
             return used_ring(c) ? Number(c.io.cqes_per_op) : std::nullopt;
           },
           .missing = nothing_of_that_kind,
           .legend = "  CQEs/op        : completion queue entries reaped per op (\"-\": no io_uring ring)\n"},
    Column{.key = "connections_per_op", .kind = Kind::count, .views = kCsv | kGbench, .number = io<&Io::connections_per_op>},
    Column{.header = "ZC sends/op", .key = "zero_copy_sends_per_op", .kind = Kind::count, .views = kFull | kCsv,
           .number = io<&Io::zero_copy_sends_per_op>, .shown = any_zero_copy,
           .legend = "  ZC sends/op    : only when a case used SEND_ZC: zero-copy sends per op, and ZC copied/op: how many of\n"
                     "                   them the kernel copied anyway (IORING_SEND_ZC_REPORT_USAGE); over loopback or veth\n"
                     "                   every one is copied, since the receiver is on the same machine\n"},
    Column{.header = "ZC copied/op", .key = "zero_copy_copied_per_op", .kind = Kind::count, .views = kFull | kCsv,
           .number = [](const Report&, const CaseResult& c) -> Number {
             return c.io.zero_copy_sends_per_op > 0 ? Number(c.io.zero_copy_copied_per_op) : std::nullopt;
           },
           .missing = nothing_of_that_kind, .shown = any_zero_copy},

    // The body's copies on the client's side (ringlab's stack; a library peer's are its own: n/a).
    Column{.header = "Copies", .key = "body_copies", .kind = Kind::ratio, .views = kTables | kCsv,
           .number = [](const Report&, const CaseResult& c) -> Number {
             const Io& io = c.io;
             if (!ok(c) || !io.body_bytes_per_op || *io.body_bytes_per_op <= 0) return std::nullopt;
             return (io.kernel_copied_bytes_per_op.value_or(0) + io.ringlab_copied_bytes_per_op.value_or(0)) /
                    *io.body_bytes_per_op;
           },
           .shown = any_copies,
           .legend = "  Copies         : body bytes copied on the client's side per body byte: by the kernel from the socket\n"
                     "                   (every receive but a mapping) plus by ringlab's code after they landed (a sink's\n"
                     "                   appends and growth, a string's padded copy); 1.00 = the receive's copy alone; n/a for\n"
                     "                   a library peer, or an op without a body\n"},
    Column{.key = "body_bytes_per_op", .kind = Kind::bytes, .views = kCsv, .number = io<&Io::body_bytes_per_op>},
    Column{.header = "Kernel copied/op", .key = "kernel_copied_bytes_per_op", .kind = Kind::bytes, .views = kFull | kCsv,
           .number = io<&Io::kernel_copied_bytes_per_op>, .shown = any_copies,
           .legend = "  Kernel copied/op, ringlab copied/op: the body bytes per op behind Copies: copied from the socket into\n"
                     "                   user memory by a receive; copied or moved by ringlab's code after they landed\n"},
    Column{.header = "ringlab copied/op", .key = "ringlab_copied_bytes_per_op", .kind = Kind::bytes,
           .views = kFull | kCsv, .number = io<&Io::ringlab_copied_bytes_per_op>, .shown = any_copies},
    Column{.header = "Mapped/op", .key = "mapped_bytes_per_op", .kind = Kind::bytes, .views = kFull | kCsv,
           .number = io<&Io::mapped_bytes_per_op>, .shown = any_mapped,
           .legend = "  Mapped/op      : only when a case mapped body bytes into user memory with no copy: those bytes per op\n"},

    // The phases of a request (their own table: markdown.cpp's render_phase_table).
    Column{.key = "phase_ops_sampled", .kind = Kind::count, .views = kCsv,
           .number = [](const Report&, const CaseResult& c) -> Number { return static_cast<double>(c.phases.ops_sampled); }},
    phase_column<&Phases::connect>("phase_connect_ns"),
    phase_column<&Phases::send>("phase_send_ns"),
    phase_column<&Phases::wait>("phase_wait_ns"),
    phase_column<&Phases::head>("phase_head_ns"),
    phase_column<&Phases::body>("phase_body_ns"),
    phase_column<&Phases::deserialize>("phase_deserialize_ns"),
    phase_column<&Phases::other>("phase_other_ns"),
    phase_column<&Phases::first_body>("phase_first_body_ns"),
    phase_column<&Phases::last_body>("phase_last_body_ns"),
    phase_column<&Phases::client_free>("phase_client_free_ns"),
    phase_column<&Phases::client_setup>("phase_client_setup_ns"),
    phase_column<&Phases::client_teardown>("phase_client_teardown_ns"),

    // Proof and trust.
    Column{.key = "checksum", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return fmt::format("{:#018x}", c.checksum); }},
    Column{.key = "verified_ops", .kind = Kind::count, .views = kCsv,
           .number = [](const Report&, const CaseResult& c) -> Number { return static_cast<double>(c.verified_ops); }},
    Column{.key = "reference", .kind = Kind::text, .views = kCsv, .text = [](const CaseResult& c) { return bool_text(c.reference); }},
    Column{.key = "not_applicable", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return bool_text(c.not_applicable); }},
    Column{.key = "cv", .kind = Kind::ratio, .views = kCsv,
           .number = [](const Report&, const CaseResult& c) { return c.diagnostics.cv; }},
    Column{.key = "m_value", .kind = Kind::ratio, .views = kCsv,
           .number = [](const Report&, const CaseResult& c) { return c.diagnostics.m_value; }},
    Column{.key = "bimodal", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return bool_text(c.diagnostics.bimodal); }},
    Column{.key = "target_error_missed", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return bool_text(c.diagnostics.target_error_missed); }},
    Column{.key = "error_above_mean", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return bool_text(c.diagnostics.error_above_mean); }},
    Column{.key = "too_few_iterations", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return bool_text(c.diagnostics.too_few_iterations); }},
    Column{.key = "baseline_unstable", .kind = Kind::text, .views = kCsv,
           .text = [](const CaseResult& c) { return bool_text(c.diagnostics.baseline_unstable); }},
};

}  // namespace

std::span<const Column> all() { return kColumns; }

bool in_table(const Column& column, const Report& report, View view) {
  if (column.header.empty() || (column.views & view) == 0) return false;
  if (column.shown != nullptr && !column.shown(report)) return false;
  if (!column.option.empty()) {
    const auto& asked = report.config.columns;
    return std::find(asked.begin(), asked.end(), column.option) != asked.end();
  }
  return true;
}

std::string csv_value(const Column& column, const Report& report, const CaseResult& c) {
  if (column.number == nullptr) return column.text != nullptr ? column.text(c) : std::string();
  const Number value = column.number(report, c);
  if (!value || !std::isfinite(*value)) return {};
  return fmt::format("{}", *value);  // the shortest text that reads back to the same double
}

}  // namespace ringlab::bench::columns
