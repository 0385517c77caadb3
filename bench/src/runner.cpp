#include "ringlab/bench/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <unordered_map>

#include "ringlab/bench/cycle_counter.hpp"
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
  uint64_t checksum = 0;
  std::optional<std::string> failure;  // set inside the timed loop; turned into status after
  uint64_t ops = 0;

  // Phase durations in ticks, sampled every `phase_stride`-th measured op.
  std::array<std::vector<uint64_t>, kPhaseCount> phases;
  uint64_t phase_stride = 1;
  uint64_t measured_ops = 0;

  AllocationCounts allocations;  // summed over measured iterations
  strategies::IoCounters io_before;
  ResourceUsage usage_before;
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
      CaseResult& r = s.result;
      r.strategy = cases[i].strategy != nullptr ? std::string(cases[i].strategy->name) : "?";
      r.method = cases[i].strategy != nullptr ? method_text(cases[i].strategy->method) : "GET";
      r.payload = payload_text(cases[i].config.payload);
      r.size = cases[i].config.count;
      r.allocator = context_.allocator;
      r.baseline = cases[i].strategy != nullptr && cases[i].strategy->baseline;
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

  // One iteration of `ops` calls between two clock readings. Returns the ticks, or nullopt with
  // s.failure set. `measured`: phase bookkeeping on.
  std::optional<uint64_t> iteration(CaseState& s, uint64_t ops, bool measured, std::string_view stage,
                                    unsigned number) {
    http::Timeline timeline{};
    http::Timeline* const tl = options_.phases ? &timeline : nullptr;
    strategies::Strategy& strategy = *s.strategy;
    uint64_t failed_op = 0;
    std::optional<strategies::Error> error;
    uint64_t bad_checksum = 0;
    bool mismatch = false;
    const bool stamping = measured && tl != nullptr;
    uint64_t run_start = 0;
    uint64_t run_end = 0;
    const uint64_t t0 = context_.clock.start();
    for (uint64_t i = 0; i < ops; ++i) {
      if (tl != nullptr) timeline = http::Timeline{};
      if (stamping) run_start = context_.clock.start();
      auto r = strategy.run(tl);
      if (stamping) run_end = context_.clock.end();
      if (!r) [[unlikely]] {
        error = std::move(r.error());
        failed_op = i;
        break;
      }
      if (!s.have_checksum) [[unlikely]] {
        s.checksum = *r;
        s.have_checksum = true;
      } else if (*r != s.checksum) [[unlikely]] {
        bad_checksum = *r;
        failed_op = i;
        mismatch = true;
        break;
      }
      if (stamping) record_phases(s, timeline, run_start, run_end);
    }
    const uint64_t t1 = context_.clock.end();
    if (error) {
      s.failure = fmt::format("{} iteration {} op {}: {}", stage, number, failed_op + 1, error->message);
      return std::nullopt;
    }
    if (mismatch) {
      s.failure = fmt::format("{} iteration {} op {}: checksum {:#018x} differs from the first run's {:#018x} "
                              "(the response or its deserialization is not deterministic)",
                              stage, number, failed_op + 1, bad_checksum, s.checksum);
      return std::nullopt;
    }
    return t1 - t0;
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
    }
    s.result.samples_ns.reserve(planned_iterations);
    s.io_before = s.strategy->io_counters();
    s.usage_before = read_resource_usage();
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
    for (IterationHook* hook : context_.hooks) hook->iteration_begin(s.index);
    if (memory_) start_counting_allocations();
    auto ticks = iteration(s, s.ops, true, "measurement", number);
    if (memory_) {
      const AllocationCounts c = stop_counting_allocations();
      s.allocations.allocations += c.allocations;
      s.allocations.bytes += c.bytes;
      s.allocations.frees += c.frees;
    }
    for (IterationHook* hook : context_.hooks) hook->iteration_end(s.index, s.ops);
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
    const auto per_op = [total_ops](uint64_t after, uint64_t before) {
      return total_ops > 0 ? static_cast<double>(after - before) / total_ops : 0.0;
    };
    r.io.ring_enters_per_op = per_op(io.ring_enters, s.io_before.ring_enters);
    r.io.sqes_per_op = per_op(io.sqes_submitted, s.io_before.sqes_submitted);
    r.io.cqes_per_op = per_op(io.cqes_reaped, s.io_before.cqes_reaped);
    r.io.connections_per_op = per_op(io.connections_opened, s.io_before.connections_opened);
    r.io.zero_copy_sends_per_op = per_op(io.zero_copy_sends, s.io_before.zero_copy_sends);
    r.io.zero_copy_copied_per_op = per_op(io.zero_copy_copied, s.io_before.zero_copy_copied);
    r.io.syscalls_per_op = per_op(io.syscalls, s.io_before.syscalls);
    r.memory.peak_rss = usage.peak_rss_bytes;
    r.memory.minor_faults_per_op = per_op(usage.minor_faults, s.usage_before.minor_faults);
    if (memory_ && total_ops > 0) {
      r.memory.bytes_per_op = static_cast<double>(s.allocations.bytes) / total_ops;
      r.memory.allocs_per_op = static_cast<double>(s.allocations.allocations) / total_ops;
    }
    r.phases.ops_sampled = s.phases[send].size();
    const auto median_ns = [this](std::vector<uint64_t>& v) -> std::optional<double> {
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
    r.outliers = upper_outliers(r.samples_ns);
    const Summary summary = summarize(without(r.samples_ns, r.outliers));
    r.stats.n = summary.n;
    r.stats.outliers = r.outliers.size();
    r.stats.mean = summary.mean;
    r.stats.error = summary.error;
    r.stats.stddev = summary.stddev;
    r.stats.median = summary.median;
    r.stats.p95 = summary.p95;
    r.stats.min = summary.min;
    r.stats.max = summary.max;
    for (IterationHook* hook : context_.hooks) hook->case_end(s.index, *s.spec, r);
    r.notes = s.strategy->notes();
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
        measure_one(s, static_cast<unsigned>(round + 1), static_cast<unsigned>(max_rounds));
      }
      if (cancelled()) {
        for (CaseState& s : states_) {
          if (s.active) fail(s, "interrupted");
        }
        return;
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
