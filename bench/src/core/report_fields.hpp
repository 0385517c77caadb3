#pragma once
// report.json's field table: every struct of the results model (results.hpp) with each field's JSON
// key, once. report_json.cpp's writer and reader both visit it, so they cannot drift apart. Internal to
// bench/src/core.
//
// A visitor `v` offers v(key, field) for a value, v.object(key, field, describe) for a nested struct
// and v.optional_object(key, field, describe) for an optional one (null when absent). `S` is the
// struct or the const struct: the writer visits const objects, the reader mutable ones. A value's key
// is its member's name (RINGLAB_REPORT_FIELDS). Add a field here and to the struct; never rename a
// member (readers of older files rely on its key), and bump kReportSchemaVersion when the meaning of the
// file changes.
#include "member_list.hpp"
#include "ringlab/bench/core/results.hpp"

// RINGLAB_REPORT_FIELDS(v, s, a, b) is `v("a", s.a); v("b", s.b)`: each member offered under its own name.
#define RINGLAB_REPORT_FIELD(v, s, member) v(#member, s.member)
#define RINGLAB_REPORT_FIELDS(v, s, ...) RINGLAB_FOR_EACH_MEMBER(RINGLAB_REPORT_FIELD, v, s, __VA_ARGS__)

namespace ringlab::bench::report_fields {

template <class V, class S>
void describe_load_average(V& v, S& load) {
  RINGLAB_REPORT_FIELDS(v, load, one, five, fifteen);
}

template <class V, class S>
void describe_link(V& v, S& link) {
  RINGLAB_REPORT_FIELDS(v, link, spec, description, emulator, leg, configured_rtt_us, measured_rtt_us, measured_rtt_min_us,
                                 rtt_samples, measured_rate_mbit, rate_sample_bytes, wire);
}

template <class V, class S>
void describe_environment(V& v, S& e) {
  RINGLAB_REPORT_FIELDS(v, e, timestamp, cpu, cores, kernel, os, io_uring_features, governor, perf_event_paranoid,
                              compiler, build_type, version, git_commit, git_dirty, compiler_flags);
  v.optional_object("load_average_start", e.load_average_start, [](auto& w, auto& x) { describe_load_average(w, x); });
  v.optional_object("load_average_end", e.load_average_end, [](auto& w, auto& x) { describe_load_average(w, x); });
  RINGLAB_REPORT_FIELDS(v, e, liburing_version, simdjson_version, llhttp_version, simdjson_kernel, allocator,
                              tick_source, tsc_hz, tsc_hz_source, timer_overhead_ns, timer_resolution_ns, client_cpu,
                              server_cpu, server, server_environment);
  v.optional_object("link", e.link, [](auto& w, auto& x) { describe_link(w, x); });
  RINGLAB_REPORT_FIELDS(v, e, warnings);
}

template <class V, class S>
void describe_config(V& v, S& c) {
  RINGLAB_REPORT_FIELDS(v, c, suite, filter, sizes, payload, connection, server_mode, inflight, client, client_threads,
                              ring_buffers, ring_buffer_bytes, iteration_time_ms, warmup,
                              iterations, max_iterations, target_error, interleave, memory, phases, counters,
                              allocators, url, link, link_leg, out, formats, columns, cpu, server_cpu, arguments,
                              options);
}

template <class V, class S>
void describe_stats(V& v, S& s) {
  RINGLAB_REPORT_FIELDS(v, s, n, outliers, mean, error, stddev, median, p95, min, max, ratio, ratio_sd, ratio_low,
                              ratio_high);
}

template <class V, class S>
void describe_memory(V& v, S& m) {
  RINGLAB_REPORT_FIELDS(v, m, bytes_per_op, allocs_per_op, alloc_ratio, peak_rss, minor_faults_per_op,
                              held_bytes_per_connection, held_body_bytes_per_connection, rss_bytes_per_connection);
}

template <class V, class S>
void describe_cpu(V& v, S& cpu) {
  RINGLAB_REPORT_FIELDS(v, cpu, user_ns_per_op, system_ns_per_op);
}

template <class V, class S>
void describe_io(V& v, S& io) {
  RINGLAB_REPORT_FIELDS(v, io, ring_enters_per_op, sqes_per_op, cqes_per_op, connections_per_op, zero_copy_sends_per_op,
                               zero_copy_copied_per_op, syscalls_per_op, body_bytes_per_op, kernel_copied_bytes_per_op,
                               ringlab_copied_bytes_per_op, mapped_bytes_per_op);
}

template <class V, class S>
void describe_phases(V& v, S& p) {
  RINGLAB_REPORT_FIELDS(v, p, ops_sampled, connect, send, wait, head, body, deserialize, other, first_body, last_body,
                              client_free, client_setup, client_teardown);
}

template <class V, class S>
void describe_latency(V& v, S& l) {
  // buckets: [lowest_ns, highest_ns, count] triples: compact, and a plot reads them directly
  RINGLAB_REPORT_FIELDS(v, l, count, p50, p90, p99, p999, max, buckets);
}

template <class V, class S>
void describe_diagnostics(V& v, S& d) {
  RINGLAB_REPORT_FIELDS(v, d, cv, m_value, bimodal, target_error_missed, error_above_mean, too_few_iterations,
                              baseline_unstable);
}

template <class V, class S>
void describe_case(V& v, S& c) {
  RINGLAB_REPORT_FIELDS(v, c, strategy, method, payload, size, connection, server_mode, inflight, client, client_threads, allocator, baseline,
                              reference, peer, parse_floor,
                              status, reason, not_applicable, ops_per_iteration, warmup_iterations, samples_ns,
                              outliers);
  v.object("stats", c.stats, [](auto& w, auto& x) { describe_stats(w, x); });
  v.object("memory", c.memory, [](auto& w, auto& x) { describe_memory(w, x); });
  v.object("cpu", c.cpu, [](auto& w, auto& x) { describe_cpu(w, x); });
  v.object("io", c.io, [](auto& w, auto& x) { describe_io(w, x); });
  v.object("phases", c.phases, [](auto& w, auto& x) { describe_phases(w, x); });
  v.optional_object("latency", c.latency, [](auto& w, auto& x) { describe_latency(w, x); });
  v.object("diagnostics", c.diagnostics, [](auto& w, auto& x) { describe_diagnostics(w, x); });
  RINGLAB_REPORT_FIELDS(v, c, counters, checksum, verified_ops, notes);
}

}  // namespace ringlab::bench::report_fields

// Used above only: not for the files that include this one.
#undef RINGLAB_REPORT_FIELDS
#undef RINGLAB_REPORT_FIELD
