#include "ringlab/bench/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <unordered_map>

#include "ringlab/bench/cycle_counter.hpp"
#include "ringlab/bench/histogram.hpp"
#include "ringlab/bench/memory_diagnoser.hpp"
#include "ringlab/bench/statistics.hpp"

namespace ringlab::bench {

Clock cycle_counter_clock() {
  const TickClock& clock = tick_clock();
  return Clock{&now_ticks, &now_ticks_end, clock.hz};
}

std::string_view stage_name(Stage stage) noexcept {
  switch (stage) {
    case Stage::setup: return "setup";
    case Stage::pilot: return "pilot";
    case Stage::warmup: return "warmup";
    case Stage::measure: return "measure";
    case Stage::done: return "done";
    case Stage::skipped: return "skipped";
    case Stage::failed: return "failed";
  }
  return "?";
}

namespace {

// payload_name() lives in the strategies library; the runner spells the two names itself so that
// it (and its tests) do not need that library linked.
std::string_view payload_text(strategies::Payload payload) noexcept {
  switch (payload) {
    case strategies::Payload::weather: return "weather";
    case strategies::Payload::repos: return "repos";
  }
  return "?";
}

std::string_view method_text(strategies::Method method) noexcept {
  return method == strategies::Method::post ? "POST" : "GET";
}

enum Phase : std::size_t { connect, send, wait, head, body, deserialize, other, kPhaseCount };

struct CaseState {
  std::size_t index = 0;
  const CaseSpec* spec = nullptr;
  strategies::CaseConfig config;
  std::string name;
  std::unique_ptr<strategies::Strategy> strategy;
  CaseResult result;
  bool active = false;       // set up and not failed
  bool have_checksum = false;
  uint64_t checksum = 0;     // the full checksum, from verified ops
  bool have_consumed = false;
  uint64_t consumed = 0;     // the consumption fold, the same at every op
  std::optional<std::string> failure;  // set inside the timed loop; turned into status after
  uint64_t ops = 0;
  uint64_t random = 0;       // xorshift64 state: where the second verified op of an iteration goes

  // Durations (ticks) of the verified ops of measured iterations, for the verification's cost.
  std::vector<uint64_t> verified_ticks;

  // Phase durations in ticks, sampled every `phase_stride`-th measured op.
  std::array<std::vector<uint64_t>, kPhaseCount> phases;
  std::vector<uint64_t> op_ticks;  // the whole run() of each sampled op: the latency distribution
  uint64_t phase_stride = 1;
  uint64_t measured_ops = 0;

  // Summed over the timed segments of measured iterations only (verified ops excluded).
  AllocationCounts allocations;
  uint64_t minor_faults = 0;
  strategies::IoCounters io_before;
  strategies::IoCounters io_verified;  // the verified ops' share of the counters, taken out at the end
};

class Runner {
 public:
  Runner(std::span<const CaseSpec> cases, const RunnerOptions& options, const RunContext& context)
      : options_(options), context_(context) {
    states_.resize(cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      CaseState& s = states_[i];
      s.index = i;
      s.spec = &cases[i];
      s.config = cases[i].config;
      s.config.ticks = options_.phases ? context_.clock.start : nullptr;
      s.name = case_name(cases[i]);
      s.random = 0x9E3779B97F4A7C15ULL * (i + 1);
      CaseResult& r = s.result;
      r.strategy = cases[i].strategy != nullptr ? std::string(cases[i].strategy->name) : "?";
      r.method = cases[i].strategy != nullptr ? method_text(cases[i].strategy->method) : "GET";
      r.payload = payload_text(cases[i].config.payload);
      r.size = cases[i].config.count;
      r.allocator = context_.allocator;
      r.baseline = cases[i].strategy != nullptr && cases[i].strategy->baseline;
      r.reference = cases[i].strategy != nullptr && cases[i].strategy->reference;
    }
    memory_ = options_.memory && interposition_works();
  }

  std::vector<CaseResult> run() {
    if (options_.interleave) {
      run_interleaved();
    } else {
      for (CaseState& s : states_) run_sequential(s);
    }
    std::vector<CaseResult> out;
    out.reserve(states_.size());
    for (CaseState& s : states_) out.push_back(std::move(s.result));
    check_checksums(out);
    return out;
  }

 private:
  [[nodiscard]] bool cancelled() const { return context_.cancel != nullptr && *context_.cancel != 0; }

  void progress(const CaseState& s, Stage stage, unsigned iteration = 0, unsigned iterations = 0,
                double last_ns = 0, std::string_view detail = {}) {
    if (context_.progress == nullptr) return;
    ProgressEvent e;
    e.case_index = s.index;
    e.case_count = states_.size();
    e.name = s.name;
    e.stage = stage;
    e.iteration = iteration;
    e.iterations = iterations;
    e.ops_per_iteration = s.ops;
    e.last_sample_ns = last_ns;
    e.detail = detail;
    context_.progress->on_progress(e);
  }

  void fail(CaseState& s, std::string reason) {
    if (s.active && s.strategy) s.strategy->teardown();
    s.active = false;
    s.result.status = CaseStatus::failed;
    s.result.reason = std::move(reason);
    progress(s, Stage::failed, 0, 0, 0, s.result.reason);
  }

  // make, skip_reason, setup. False when the case will not be measured.
  bool prepare(CaseState& s) {
    progress(s, Stage::setup);
    if (cancelled()) {
      fail(s, "interrupted");
      return false;
    }
    const strategies::Descriptor* d = s.spec->strategy;
    if (d == nullptr || d->make == nullptr) {
      fail(s, "no such strategy");
      return false;
    }
    s.strategy = d->make();
    if (!s.strategy) {
      fail(s, "strategy factory returned nothing");
      return false;
    }
    if (auto reason = s.strategy->skip_reason(context_.features)) {
      s.result.status = CaseStatus::skipped;
      s.result.reason = *reason;
      progress(s, Stage::skipped, 0, 0, 0, s.result.reason);
      return false;
    }
    if (auto status = s.strategy->setup(s.config); !status) {
      fail(s, "setup: " + status.error().message);
      return false;
    }
    s.active = true;
    return true;
  }

  // `run_start`/`run_end`: clock readings just around the run() call, so that the time run() spent
  // outside the client's stamped span (the strategy's own work before and after the request) is
  // accounted for too.
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
    if (t.start != 0) {
      uint64_t last = t.start;
      for (uint64_t stamp : {t.connected, t.request_sent, t.first_byte, t.head_parsed, t.body_done, t.deserialized}) {
        last = std::max(last, stamp);
      }
      const uint64_t run = run_end - run_start;
      const uint64_t stamped = last - t.start;
      auto& v = s.phases[other];
      if (run >= stamped && v.size() < v.capacity()) v.push_back(run - stamped);
    }
  }

  // One verified op (Check::verify), outside the clock: the full checksum of its records must equal
  // the generator's (the strategy checks) and the case's earlier ones (checked here). In measured
  // iterations its I/O is set aside, to be taken out of the case's counters. False with s.failure set.
  bool verified_op(CaseState& s, bool measured, std::string_view stage, unsigned number) {
    const strategies::IoCounters io_before = measured ? s.strategy->io_counters() : strategies::IoCounters{};
    const uint64_t t0 = context_.clock.start();
    auto r = s.strategy->run(nullptr, strategies::Check::verify);
    const uint64_t t1 = context_.clock.end();
    if (!r) [[unlikely]] {
      s.failure = fmt::format("{} iteration {} verified op: {}", stage, number, r.error().message);
      return false;
    }
    if (!s.have_checksum) {
      s.checksum = r->checksum;
      s.have_checksum = true;
    } else if (r->checksum != s.checksum) [[unlikely]] {
      s.failure = fmt::format("{} iteration {} verified op: checksum {:#018x} differs from the first one's {:#018x} "
                              "(the response or its deserialization is not deterministic)",
                              stage, number, r->checksum, s.checksum);
      return false;
    }
    if (!check_consumed(s, r->consumed, stage, number, 0)) return false;
    if (measured) {
      const strategies::IoCounters io_after = s.strategy->io_counters();
      strategies::IoCounters& v = s.io_verified;
      v.ring_enters += io_after.ring_enters - io_before.ring_enters;
      v.sqes_submitted += io_after.sqes_submitted - io_before.sqes_submitted;
      v.cqes_reaped += io_after.cqes_reaped - io_before.cqes_reaped;
      v.connections_opened += io_after.connections_opened - io_before.connections_opened;
      v.zero_copy_sends += io_after.zero_copy_sends - io_before.zero_copy_sends;
      v.zero_copy_copied += io_after.zero_copy_copied - io_before.zero_copy_copied;
      v.syscalls += io_after.syscalls - io_before.syscalls;
      if (s.verified_ticks.size() < s.verified_ticks.capacity()) s.verified_ticks.push_back(t1 - t0);
    }
    return true;
  }

  // The consumption fold is the same at every op of a case; false with s.failure set when not.
  bool check_consumed(CaseState& s, uint64_t consumed, std::string_view stage, unsigned number, uint64_t op) {
    if (!s.have_consumed) {
      s.consumed = consumed;
      s.have_consumed = true;
      return true;
    }
    if (consumed == s.consumed) [[likely]] return true;
    s.failure = fmt::format("{} iteration {} op {}: consumption {:#018x} differs from the first op's {:#018x} "
                            "(the response or its deserialization is not deterministic)",
                            stage, number, op + 1, consumed, s.consumed);
    return false;
  }

  // Ops [first, last) of an iteration between two clock readings: the timed region. In measured
  // iterations the allocations, page faults and the hooks' counters are read around it (and only
  // around it: verified ops are not in them). Returns the ticks, or nullopt with s.failure set.
  std::optional<uint64_t> timed_segment(CaseState& s, uint64_t first, uint64_t last, bool measured,
                                        std::string_view stage, unsigned number) {
    http::Timeline timeline{};
    http::Timeline* const tl = options_.phases ? &timeline : nullptr;
    strategies::Strategy& strategy = *s.strategy;
    const bool stamping = measured && tl != nullptr;
    uint64_t run_start = 0;
    uint64_t run_end = 0;
    if (measured) {
      for (IterationHook* hook : context_.hooks) hook->iteration_begin(s.index);
      s.minor_faults -= read_resource_usage().minor_faults;
      if (memory_) start_counting_allocations();
    }
    std::optional<strategies::Error> error;
    uint64_t failed_op = 0;
    uint64_t consumed = s.consumed;
    const uint64_t t0 = context_.clock.start();
    for (uint64_t i = first; i < last; ++i) {
      if (tl != nullptr) timeline = http::Timeline{};
      if (stamping) run_start = context_.clock.start();
      auto r = strategy.run(tl, strategies::Check::consume);
      if (stamping) run_end = context_.clock.end();
      if (!r) [[unlikely]] {
        error = std::move(r.error());
        failed_op = i;
        break;
      }
      if (r->consumed != consumed) [[unlikely]] {
        consumed = r->consumed;
        failed_op = i;
        break;
      }
      if (stamping) record_phases(s, timeline, run_start, run_end);
    }
    const uint64_t t1 = context_.clock.end();
    if (measured) {
      if (memory_) {
        const AllocationCounts c = stop_counting_allocations();
        s.allocations.allocations += c.allocations;
        s.allocations.bytes += c.bytes;
        s.allocations.frees += c.frees;
      }
      s.minor_faults += read_resource_usage().minor_faults;
      for (IterationHook* hook : context_.hooks) hook->iteration_end(s.index, last - first);
    }
    if (error) {
      s.failure = fmt::format("{} iteration {} op {}: {}", stage, number, failed_op + 1, error->message);
      return std::nullopt;
    }
    if (!check_consumed(s, consumed, stage, number, failed_op)) return std::nullopt;
    return t1 - t0;
  }

  // One iteration of `ops` timed calls. Verification runs outside the clock on extra ops: one before
  // the timed ones and, when there are two or more, one between them at a random place, so a strategy
  // that reads wrong data fails its case whichever op goes wrong. Returns the timed ticks, or nullopt
  // with s.failure set.
  std::optional<uint64_t> iteration(CaseState& s, uint64_t ops, bool measured, std::string_view stage,
                                    unsigned number) {
    if (!verified_op(s, measured, stage, number)) return std::nullopt;
    // xorshift64: cheap, deterministic per case, and nothing the strategy can predict.
    s.random ^= s.random << 13;
    s.random ^= s.random >> 7;
    s.random ^= s.random << 17;
    const uint64_t split = ops >= 2 ? 1 + s.random % (ops - 1) : ops;
    auto first = timed_segment(s, 0, split, measured, stage, number);
    if (!first) return std::nullopt;
    if (split == ops) return first;
    if (!verified_op(s, measured, stage, number)) return std::nullopt;
    auto second = timed_segment(s, split, ops, measured, stage, number);
    if (!second) return std::nullopt;
    return *first + *second;
  }

  [[nodiscard]] double to_ns(uint64_t ticks) const { return ticks_to_ns(ticks, context_.clock.hz); }

  bool pilot(CaseState& s) {
    const double target_ns = options_.iteration_time_ms * 1e6;
    const uint64_t max_ops = std::max<uint64_t>(1, options_.max_ops_per_iteration);
    uint64_t ops = 1;
    for (unsigned stage = 1; stage <= std::max(1u, options_.max_pilot_stages); ++stage) {
      s.ops = ops;
      progress(s, Stage::pilot, stage);
      auto ticks = iteration(s, ops, false, "pilot", stage);
      if (!ticks) {
        fail(s, *s.failure);
        return false;
      }
      if (cancelled()) {
        fail(s, "interrupted");
        return false;
      }
      const double elapsed = to_ns(*ticks);
      if (elapsed >= target_ns || ops >= max_ops) break;
      // Enough ops for the target at the per-op time just measured, at least one more. An
      // iteration shorter than 1 % of the target is dominated by the clock's overhead and the
      // first call's cold caches: grow at most 16x from it rather than trust its estimate.
      uint64_t next = ops * 16;
      if (elapsed > 0) {
        const double needed = std::ceil(target_ns / (elapsed / static_cast<double>(ops)));
        if (elapsed >= target_ns / 100 || needed < static_cast<double>(next)) {
          next = needed >= static_cast<double>(max_ops) ? max_ops : static_cast<uint64_t>(needed);
        }
      }
      ops = std::min(max_ops, std::max(ops + 1, next));
    }
    s.ops = ops;
    return true;
  }

  bool warmup(CaseState& s) {
    for (unsigned w = 1; w <= options_.warmup; ++w) {
      auto ticks = iteration(s, s.ops, false, "warmup", w);
      if (!ticks) {
        fail(s, *s.failure);
        return false;
      }
      progress(s, Stage::warmup, w, options_.warmup, to_ns(*ticks) / static_cast<double>(s.ops));
      if (cancelled()) {
        fail(s, "interrupted");
        return false;
      }
    }
    s.result.warmup_iterations = options_.warmup;
    return true;
  }

  bool begin_measuring(CaseState& s, uint64_t planned_iterations) {
    s.result.ops_per_iteration = s.ops;
    const uint64_t planned_ops = s.ops * std::max<uint64_t>(1, planned_iterations);
    const std::size_t capacity = std::max<std::size_t>(1, options_.phase_samples);
    s.phase_stride = std::max<uint64_t>(1, (planned_ops + capacity - 1) / capacity);
    if (options_.phases) {
      for (auto& v : s.phases) v.reserve(capacity);
      s.op_ticks.reserve(capacity);
    }
    s.result.samples_ns.reserve(planned_iterations);
    s.verified_ticks.reserve(2 * std::max<std::size_t>(1, planned_iterations));
    s.io_before = s.strategy->io_counters();
    for (IterationHook* hook : context_.hooks) {
      if (auto status = hook->case_begin(s.index, *s.spec); !status) {
        fail(s, "hook: " + status.error().message);
        return false;
      }
    }
    return true;
  }

  // One measured iteration; false when the case failed.
  bool measure_one(CaseState& s, unsigned number, unsigned planned) {
    auto ticks = iteration(s, s.ops, true, "measurement", number);
    if (!ticks) {
      fail(s, *s.failure);
      return false;
    }
    const double sample = to_ns(*ticks) / static_cast<double>(s.ops);
    s.result.samples_ns.push_back(sample);
    progress(s, Stage::measure, number, planned, sample);
    return true;
  }

  // Error / Mean of the samples after outlier removal is at or below the target.
  [[nodiscard]] bool converged(const CaseState& s) const {
    const auto& samples = s.result.samples_ns;
    if (samples.size() < 2) return false;
    const Summary summary = summarize(without(samples, upper_outliers(samples)));
    return summary.n >= 2 && summary.mean > 0 && summary.error / summary.mean <= options_.target_error;
  }

  void finish(CaseState& s) {
    CaseResult& r = s.result;
    r.checksum = s.checksum;
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
    r.memory.peak_rss = usage.peak_rss_bytes;
    r.memory.minor_faults_per_op = total_ops > 0 ? static_cast<double>(s.minor_faults) / total_ops : 0.0;
    if (memory_ && total_ops > 0) {
      r.memory.bytes_per_op = static_cast<double>(s.allocations.bytes) / total_ops;
      r.memory.allocs_per_op = static_cast<double>(s.allocations.allocations) / total_ops;
    }
    r.phases.ops_sampled = s.op_ticks.size();
    if (!s.op_ticks.empty()) {
      // The per-op latency distribution of the sampled ops: built here, after the case, from the
      // durations kept during it (nothing but a push_back into reserved room next to the clock).
      Histogram latency;
      for (uint64_t ticks : s.op_ticks) latency.record(static_cast<uint64_t>(std::llround(to_ns(ticks))));
      r.latency = latency_from(latency);
    }
    const auto median_ns = [this](const std::vector<uint64_t>& v) -> std::optional<double> {
      if (v.empty()) return std::nullopt;
      std::vector<double> ns;
      ns.reserve(v.size());
      for (uint64_t t : v) ns.push_back(to_ns(t));
      std::sort(ns.begin(), ns.end());
      return quantile_sorted(ns, 0.5);
    };
    r.phases.connect = median_ns(s.phases[connect]);
    r.phases.send = median_ns(s.phases[send]);
    r.phases.wait = median_ns(s.phases[wait]);
    r.phases.head = median_ns(s.phases[head]);
    r.phases.body = median_ns(s.phases[body]);
    r.phases.deserialize = median_ns(s.phases[deserialize]);
    r.phases.other = median_ns(s.phases[other]);
    summarize_samples(r);
    for (IterationHook* hook : context_.hooks) hook->case_end(s.index, *s.spec, r);
    r.notes = s.strategy->notes();
    const std::optional<double> verified = median_ns(s.verified_ticks);
    const std::optional<double> timed = median_ns(s.op_ticks);
    if (verified && timed) {
      // What verifying costs: a verified op's median less a timed op's (both single ops, so that the
      // same preemptions and outliers weigh on both).
      if (!r.notes.empty()) r.notes += "; ";
      r.notes += fmt::format("verification (full checksum, clock stopped) on {} ops: {:.1f} µs per verified op "
                             "against {:.1f} µs per timed op",
                             s.verified_ticks.size(), *verified / 1e3, *timed / 1e3);
    }
    s.strategy->teardown();
    s.active = false;
    progress(s, Stage::done, static_cast<unsigned>(r.samples_ns.size()), 0, r.stats.mean);
  }

  void run_sequential(CaseState& s) {
    if (!prepare(s) || !pilot(s) || !warmup(s)) return;
    const unsigned min_n = std::max(1u, options_.iterations);
    const unsigned max_n = std::max(min_n, options_.max_iterations);
    if (!begin_measuring(s, max_n)) return;
    for (unsigned n = 1; n <= max_n; ++n) {
      if (!measure_one(s, n, max_n)) return;
      if (cancelled()) {
        fail(s, "interrupted");
        return;
      }
      if (n >= min_n && converged(s)) break;
    }
    finish(s);
  }

  void run_interleaved() {
    const std::size_t n = states_.size();
    if (n == 0) return;
    for (CaseState& s : states_) {
      if (prepare(s) && pilot(s)) warmup(s);
    }
    const std::size_t min_rounds = balanced_rounds(n, std::max(1u, options_.iterations));
    const std::size_t max_rounds =
        std::max(min_rounds, (std::max<std::size_t>(options_.max_iterations, 1) / n) * n);
    for (CaseState& s : states_) {
      if (s.active) (void)begin_measuring(s, max_rounds);
    }
    for (std::size_t round = 0; round < max_rounds; ++round) {
      for (std::size_t index : interleave_order(n, round)) {
        CaseState& s = states_[index];
        if (!s.active) continue;
        // Checked at every iteration, not every round: a round of many cases lasts seconds.
        if (cancelled()) {
          finish_interrupted();
          return;
        }
        measure_one(s, static_cast<unsigned>(round + 1), static_cast<unsigned>(max_rounds));
      }
      const std::size_t done = round + 1;
      if (done >= min_rounds && done % n == 0) {
        const bool all = std::all_of(states_.begin(), states_.end(),
                                     [this](const CaseState& s) { return !s.active || converged(s); });
        if (all) break;
      }
    }
    for (CaseState& s : states_) {
      if (s.active) finish(s);
    }
  }

  // Interleaved run stopped by a signal: every case that has samples is finished with them, so that the
  // report keeps what was measured (ratios pair the rounds both sides completed); one with none is
  // marked interrupted.
  void finish_interrupted() {
    for (CaseState& s : states_) {
      if (!s.active) continue;
      if (s.result.samples_ns.empty()) {
        fail(s, "interrupted");
      } else {
        finish(s);
      }
    }
  }

  const RunnerOptions& options_;
  const RunContext& context_;
  std::vector<CaseState> states_;
  bool memory_ = false;
};

}  // namespace

std::string case_name(const CaseSpec& spec) {
  const std::string_view strategy = spec.strategy != nullptr ? spec.strategy->name : "?";
  return fmt::format("{} {} {}", strategy, payload_text(spec.config.payload), spec.config.count);
}

std::vector<CaseResult> run_cases(std::span<const CaseSpec> cases, const RunnerOptions& options,
                                  const RunContext& context) {
  Runner runner(cases, options, context);
  return runner.run();
}

void check_checksums(std::vector<CaseResult>& results) {
  std::unordered_map<std::string, const CaseResult*> baselines;
  for (const CaseResult& r : results) {
    if (r.baseline && r.status == CaseStatus::ok) baselines.emplace(case_key(r), &r);
  }
  for (CaseResult& r : results) {
    if (r.status != CaseStatus::ok || r.baseline) continue;
    const auto found = baselines.find(case_key(r));
    if (found == baselines.end()) continue;
    const CaseResult& base = *found->second;
    if (r.checksum != base.checksum) {
      r.status = CaseStatus::failed;
      r.reason = fmt::format("checksum {:#018x} differs from baseline {}'s {:#018x}: the strategy read "
                             "different data",
                             r.checksum, base.strategy, base.checksum);
    }
  }
}

std::vector<std::size_t> interleave_order(std::size_t n, std::size_t round) {
  std::vector<std::size_t> order(n);
  for (std::size_t position = 0; position < n; ++position) {
    order[position] = (position + n - round % n) % n;
  }
  return order;
}

std::size_t balanced_rounds(std::size_t n, std::size_t at_least) noexcept {
  if (n == 0) return 0;
  return ((at_least + n - 1) / n) * n;
}

}  // namespace ringlab::bench
