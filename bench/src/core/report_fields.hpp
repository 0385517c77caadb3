#pragma once
// report.json's field table: every struct of the results model (results.hpp) with each field's JSON
// key, once. report_json.cpp's writer and reader both visit it, so they cannot drift apart. Internal to
// bench/src/core.
//
// A visitor `v` offers v(key, field) for a value, v.object(key, field, describe) for a nested struct
// and v.optional_object(key, field, describe) for an optional one (null when absent). `S` is the
// struct or the const struct: the writer visits const objects, the reader mutable ones. Add a field
// here and to the struct; never rename a key (readers of older files rely on it), and bump
// kReportSchemaVersion when the meaning of the file changes.
#include "ringlab/bench/core/results.hpp"

namespace ringlab::bench::report_fields {

template <class V, class S>
void describe_load_average(V& v, S& load) {
  v("one", load.one);
  v("five", load.five);
  v("fifteen", load.fifteen);
}

template <class V, class S>
void describe_link(V& v, S& link) {
  v("spec", link.spec);
  v("description", link.description);
  v("emulator", link.emulator);
  v("configured_rtt_us", link.configured_rtt_us);
  v("measured_rtt_us", link.measured_rtt_us);
  v("measured_rtt_min_us", link.measured_rtt_min_us);
  v("rtt_samples", link.rtt_samples);
  v("measured_rate_mbit", link.measured_rate_mbit);
  v("rate_sample_bytes", link.rate_sample_bytes);
  v("wire", link.wire);
}

template <class V, class S>
void describe_environment(V& v, S& e) {
  v("timestamp", e.timestamp);
  v("cpu", e.cpu);
  v("cores", e.cores);
  v("kernel", e.kernel);
  v("os", e.os);
  v("io_uring_features", e.io_uring_features);
  v("governor", e.governor);
  v("perf_event_paranoid", e.perf_event_paranoid);
  v("compiler", e.compiler);
  v("build_type", e.build_type);
  v("version", e.version);
  v("git_commit", e.git_commit);
  v("git_dirty", e.git_dirty);
  v("compiler_flags", e.compiler_flags);
  v.optional_object("load_average_start", e.load_average_start, [](auto& w, auto& x) { describe_load_average(w, x); });
  v.optional_object("load_average_end", e.load_average_end, [](auto& w, auto& x) { describe_load_average(w, x); });
  v("liburing_version", e.liburing_version);
  v("simdjson_version", e.simdjson_version);
  v("llhttp_version", e.llhttp_version);
  v("simdjson_kernel", e.simdjson_kernel);
  v("allocator", e.allocator);
  v("tick_source", e.tick_source);
  v("tsc_hz", e.tsc_hz);
  v("tsc_hz_source", e.tsc_hz_source);
  v("timer_overhead_ns", e.timer_overhead_ns);
  v("timer_resolution_ns", e.timer_resolution_ns);
  v("client_cpu", e.client_cpu);
  v("server_cpu", e.server_cpu);
  v("server", e.server);
  v("server_environment", e.server_environment);
  v.optional_object("link", e.link, [](auto& w, auto& x) { describe_link(w, x); });
  v("warnings", e.warnings);
}

template <class V, class S>
void describe_config(V& v, S& c) {
  v("suite", c.suite);
  v("filter", c.filter);
  v("sizes", c.sizes);
  v("payload", c.payload);
  v("connection", c.connection);
  v("server_mode", c.server_mode);
  v("iteration_time_ms", c.iteration_time_ms);
  v("warmup", c.warmup);
  v("iterations", c.iterations);
  v("max_iterations", c.max_iterations);
  v("target_error", c.target_error);
  v("interleave", c.interleave);
  v("memory", c.memory);
  v("phases", c.phases);
  v("counters", c.counters);
  v("allocators", c.allocators);
  v("url", c.url);
  v("link", c.link);
  v("out", c.out);
  v("formats", c.formats);
  v("columns", c.columns);
  v("cpu", c.cpu);
  v("server_cpu", c.server_cpu);
  v("arguments", c.arguments);
}

template <class V, class S>
void describe_stats(V& v, S& s) {
  v("n", s.n);
  v("outliers", s.outliers);
  v("mean", s.mean);
  v("error", s.error);
  v("stddev", s.stddev);
  v("median", s.median);
  v("p95", s.p95);
  v("min", s.min);
  v("max", s.max);
  v("ratio", s.ratio);
  v("ratio_sd", s.ratio_sd);
  v("ratio_low", s.ratio_low);
  v("ratio_high", s.ratio_high);
}

template <class V, class S>
void describe_memory(V& v, S& m) {
  v("bytes_per_op", m.bytes_per_op);
  v("allocs_per_op", m.allocs_per_op);
  v("alloc_ratio", m.alloc_ratio);
  v("peak_rss", m.peak_rss);
  v("minor_faults_per_op", m.minor_faults_per_op);
}

template <class V, class S>
void describe_io(V& v, S& io) {
  v("ring_enters_per_op", io.ring_enters_per_op);
  v("sqes_per_op", io.sqes_per_op);
  v("cqes_per_op", io.cqes_per_op);
  v("connections_per_op", io.connections_per_op);
  v("zero_copy_sends_per_op", io.zero_copy_sends_per_op);
  v("zero_copy_copied_per_op", io.zero_copy_copied_per_op);
  v("syscalls_per_op", io.syscalls_per_op);
}

template <class V, class S>
void describe_phases(V& v, S& p) {
  v("ops_sampled", p.ops_sampled);
  v("connect", p.connect);
  v("send", p.send);
  v("wait", p.wait);
  v("head", p.head);
  v("body", p.body);
  v("deserialize", p.deserialize);
  v("other", p.other);
}

template <class V, class S>
void describe_latency(V& v, S& l) {
  v("count", l.count);
  v("p50", l.p50);
  v("p90", l.p90);
  v("p99", l.p99);
  v("p999", l.p999);
  v("max", l.max);
  v("buckets", l.buckets);  // [lowest_ns, highest_ns, count] triples: compact, and a plot reads them directly
}

template <class V, class S>
void describe_diagnostics(V& v, S& d) {
  v("cv", d.cv);
  v("m_value", d.m_value);
  v("bimodal", d.bimodal);
  v("target_error_missed", d.target_error_missed);
  v("error_above_mean", d.error_above_mean);
  v("too_few_iterations", d.too_few_iterations);
  v("baseline_unstable", d.baseline_unstable);
}

template <class V, class S>
void describe_case(V& v, S& c) {
  v("strategy", c.strategy);
  v("method", c.method);
  v("payload", c.payload);
  v("size", c.size);
  v("connection", c.connection);
  v("server_mode", c.server_mode);
  v("allocator", c.allocator);
  v("baseline", c.baseline);
  v("reference", c.reference);
  v("status", c.status);
  v("reason", c.reason);
  v("not_applicable", c.not_applicable);
  v("ops_per_iteration", c.ops_per_iteration);
  v("warmup_iterations", c.warmup_iterations);
  v("samples_ns", c.samples_ns);
  v("outliers", c.outliers);
  v.object("stats", c.stats, [](auto& w, auto& x) { describe_stats(w, x); });
  v.object("memory", c.memory, [](auto& w, auto& x) { describe_memory(w, x); });
  v.object("io", c.io, [](auto& w, auto& x) { describe_io(w, x); });
  v.object("phases", c.phases, [](auto& w, auto& x) { describe_phases(w, x); });
  v.optional_object("latency", c.latency, [](auto& w, auto& x) { describe_latency(w, x); });
  v.object("diagnostics", c.diagnostics, [](auto& w, auto& x) { describe_diagnostics(w, x); });
  v("counters", c.counters);
  v("checksum", c.checksum);
  v("notes", c.notes);
}

}  // namespace ringlab::bench::report_fields
