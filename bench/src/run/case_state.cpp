#include "case_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ringlab/bench/core/histogram.hpp"
#include "ringlab/bench/core/statistics.hpp"
#include "ringlab/bench/measure/cycle_counter.hpp"

namespace ringlab::bench {

namespace {

std::optional<double> median_ns(const std::vector<uint64_t>& ticks, double hz) {
  if (ticks.empty()) return std::nullopt;
  std::vector<double> ns;
  ns.reserve(ticks.size());
  for (uint64_t t : ticks) ns.push_back(ticks_to_ns(t, hz));
  std::sort(ns.begin(), ns.end());
  return quantile_sorted(ns, 0.5);
}

}  // namespace

void record_phases(CaseState& s, const http::Timeline& t, uint64_t run_start, uint64_t run_end) noexcept {
  const uint64_t op = s.measured_ops++;
  if (op % s.phase_stride != 0) return;
  if (s.op_ticks.size() < s.op_ticks.capacity()) s.op_ticks.push_back(run_end - run_start);
  const auto put = [&s](Phase phase, uint64_t from, uint64_t to) {
    auto& v = s.phases[phase];
    if (from != 0 && to >= from && v.size() < v.capacity()) v.push_back(to - from);
  };
  if (t.connected != 0) put(connect, t.start, t.connected);
  put(send, t.connected != 0 ? t.connected : t.start, t.request_sent);
  put(wait, t.request_sent, t.first_byte);
  put(head, t.first_byte, t.head_parsed);
  put(body, t.head_parsed, t.body_done);
  put(deserialize, t.body_done, t.deserialized);
  put(first_body, t.request_sent, t.first_body_byte);
  put(last_body, t.request_sent, t.last_body_byte);
  if (t.start != 0) {
    uint64_t last = t.start;
    for (uint64_t stamp : {t.connected, t.request_sent, t.first_byte, t.head_parsed, t.body_done, t.deserialized}) {
      last = std::max(last, stamp);
    }
    // A client made per op: its phases around the request, which `other` then leaves out.
    uint64_t first = t.start;
    if (t.client_begin != 0) {
      put(client_free, t.client_begin, t.client_freed);
      put(client_setup, t.client_freed, t.client_ready);
      put(client_teardown, last, t.client_closed);
      first = t.client_begin;
      last = std::max(last, t.client_closed);
    }
    const uint64_t run = run_end - run_start;
    const uint64_t stamped = last - first;
    auto& v = s.phases[other];
    if (run >= stamped && v.size() < v.capacity()) v.push_back(run - stamped);
  }
}

void fill_case_numbers(CaseState& s, double hz, bool memory) {
  CaseResult& r = s.result;
  r.checksum = s.checksum;
  r.verified_ops = s.verified_ticks.size();
  const strategies::IoCounters io = s.strategy->io_counters();
  const ResourceUsage usage = read_resource_usage();
  const auto total_ops = static_cast<double>(s.ops * r.samples_ns.size());
  // What the timed ops did: the counters' change over the measured iterations less the verified ops'.
  const auto per_op = [total_ops](uint64_t after, uint64_t before, uint64_t verified) {
    return total_ops > 0 ? static_cast<double>(after - before - verified) / total_ops : 0.0;
  };
  const strategies::IoCounters& b = s.io_before;
  const strategies::IoCounters& x = s.io_verified;
  r.io.ring_enters_per_op = per_op(io.ring_enters, b.ring_enters, x.ring_enters);
  r.io.sqes_per_op = per_op(io.sqes_submitted, b.sqes_submitted, x.sqes_submitted);
  r.io.cqes_per_op = per_op(io.cqes_reaped, b.cqes_reaped, x.cqes_reaped);
  r.io.connections_per_op = per_op(io.connections_opened, b.connections_opened, x.connections_opened);
  r.io.zero_copy_sends_per_op = per_op(io.zero_copy_sends, b.zero_copy_sends, x.zero_copy_sends);
  r.io.zero_copy_copied_per_op = per_op(io.zero_copy_copied, b.zero_copy_copied, x.zero_copy_copied);
  if (io.counts_syscalls) r.io.syscalls_per_op = per_op(io.syscalls, b.syscalls, x.syscalls);
  if (io.counts_copies) {
    r.io.body_bytes_per_op = per_op(io.body_bytes, b.body_bytes, x.body_bytes);
    r.io.kernel_copied_bytes_per_op = per_op(io.body_kernel_copied, b.body_kernel_copied, x.body_kernel_copied);
    r.io.ringlab_copied_bytes_per_op = per_op(io.body_ringlab_copied, b.body_ringlab_copied, x.body_ringlab_copied);
    r.io.mapped_bytes_per_op = per_op(io.body_mapped, b.body_mapped, x.body_mapped);
  }
  r.memory.peak_rss = usage.peak_rss_bytes;
  r.memory.minor_faults_per_op = total_ops > 0 ? static_cast<double>(s.minor_faults) / total_ops : 0.0;
  r.cpu.user_ns_per_op = total_ops > 0 ? static_cast<double>(s.cpu_user_ns) / total_ops : 0.0;
  r.cpu.system_ns_per_op = total_ops > 0 ? static_cast<double>(s.cpu_system_ns) / total_ops : 0.0;
  if (memory && total_ops > 0) {
    r.memory.bytes_per_op = static_cast<double>(s.allocations.bytes) / total_ops;
    r.memory.allocs_per_op = static_cast<double>(s.allocations.allocations) / total_ops;
  }
  r.phases.ops_sampled = s.op_ticks.size();
  if (!s.op_ticks.empty()) {
    // The per-op latency distribution of the sampled ops: built here, after the case, from the
    // durations kept during it (nothing but a push_back into reserved room next to the clock).
    Histogram latency;
    for (uint64_t ticks : s.op_ticks) latency.record(static_cast<uint64_t>(std::llround(ticks_to_ns(ticks, hz))));
    r.latency = latency_from(latency);
  }
  for (std::size_t phase = 0; phase < kPhaseCount; ++phase) {
    r.phases.*kPhaseFields[phase] = median_ns(s.phases[phase], hz);
  }
  summarize_samples(r);
}

void record_held_memory(CaseState& s) {
  Memory& m = s.result.memory;
  const strategies::HeldMemory held = s.strategy->held_memory();
  if (held.connections > 0) {
    m.held_bytes_per_connection = held.per_connection();
    m.held_body_bytes_per_connection =
        static_cast<double>(held.body_bytes) / static_cast<double>(held.connections);
  }
  const std::optional<uint64_t> now = read_resident_bytes();
  if (s.resident_before && now) {
    // Signed: memory the allocator had kept from before and hands out again is not new to the process,
    // and a trim during setup can even shrink it.
    const double grown = static_cast<double>(*now) - static_cast<double>(*s.resident_before);
    m.rss_bytes_per_connection = grown / static_cast<double>(std::max<std::size_t>(1, s.config.inflight));
  }
}

std::string verification_note(const CaseState& s, double hz) {
  const std::optional<double> verified = median_ns(s.verified_ticks, hz);
  const std::optional<double> timed = median_ns(s.op_ticks, hz);
  if (!verified || !timed) return {};
  // Both are single ops, so that the same preemptions and outliers weigh on both.
  return fmt::format("verification (full checksum, clock stopped) on {} ops: {:.1f} µs per verified op against "
                     "{:.1f} µs per timed op",
                     s.verified_ticks.size(), *verified / 1e3, *timed / 1e3);
}

}  // namespace ringlab::bench
