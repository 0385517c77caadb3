#include "ringlab/bench/run/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "case_state.hpp"
#include "fresh_client.hpp"
#include "client_threads.hpp"
#include "iteration.hpp"
#include "slowed_strategy.hpp"
#include "ringlab/bench/core/statistics.hpp"
#include "ringlab/bench/measure/cycle_counter.hpp"
#include "ringlab/bench/measure/memory_diagnoser.hpp"

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
      r.connection = std::string(strategies::connection_name(cases[i].config.connection));
      r.server_mode = std::string(strategies::server_mode_name(cases[i].config.server_mode));
      r.inflight = cases[i].config.inflight;
      r.client = std::string(strategies::client_name(cases[i].config.client));
      r.client_threads = std::max<std::size_t>(1, cases[i].client_threads);
      r.allocator = context_.allocator;
      r.baseline = cases[i].strategy != nullptr && cases[i].strategy->baseline;
      r.reference = cases[i].strategy != nullptr && cases[i].strategy->reference;
      r.peer = cases[i].strategy != nullptr && cases[i].strategy->peer;
      if (cases[i].strategy != nullptr) r.parse_floor = std::string(cases[i].strategy->parse_floor);
      r.partial_checksum = cases[i].strategy != nullptr && cases[i].strategy->partial_checksum;
    }
    memory_ = options_.memory && interposition_works();
    iterations_ = IterationRunner(context_, options_.phases, memory_);
  }

  std::vector<CaseResult> run() {
    if (options_.interleave || context_.driver != nullptr) {
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

  void fail(CaseState& s, std::string reason) { end(s, CaseStatus::failed, Stage::failed, std::move(reason)); }
  void skip(CaseState& s, std::string reason) { end(s, CaseStatus::skipped, Stage::skipped, std::move(reason)); }

  // A case that will not be measured (any further): its strategy torn down when it was set up.
  void end(CaseState& s, CaseStatus status, Stage stage, std::string reason) {
    if (s.active && s.strategy) s.strategy->teardown();
    s.active = false;
    s.result.status = status;
    s.result.reason = std::move(reason);
    progress(s, stage, 0, 0, 0, s.result.reason);
  }

  // make, skip_reason, skip_case, setup. False when the case will not be measured.
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
    const bool many_in_flight = s.config.inflight > 1;
    const bool fresh_client = s.config.client == strategies::Client::fresh;
    if (fresh_client && (many_in_flight || s.config.connection == strategies::Connection::fresh)) {
      // bench refuses both on the command line (build_cases); a caller of run_cases gets the same answer.
      fail(s, many_in_flight ? "a fresh client runs one request: it does not combine with more than one in flight"
                             : "a fresh client opens its own connection: --connection fresh is redundant with it");
      return false;
    }
    if (fresh_client && s.result.client_threads > 1) {
      fail(s, "a fresh client is built on the runner's thread: it does not combine with more than one client thread");
      return false;
    }
    // --client inflight: the row's N-in-flight form, at one request in flight too.
    const bool inflight_form = many_in_flight || s.config.client == strategies::Client::inflight;
    if (inflight_form && d->make_inflight == nullptr) {
      s.result.not_applicable = true;
      skip(s, many_in_flight ? "runs one request in flight at a time" : "has no N-in-flight form");
      return false;
    }
    if (fresh_client) {
      s.strategy = std::make_unique<FreshClient>(*d, d->make());
    } else if (s.result.client_threads > 1) {
      auto threaded = std::make_unique<ThreadedStrategy>(inflight_form ? d->make_inflight : d->make,
                                                         s.result.client_threads, context_.client_cpus);
      if (threaded->made()) {
        s.threads = threaded.get();
        s.strategy = std::move(threaded);
      }
    } else {
      s.strategy = inflight_form ? d->make_inflight() : d->make();
    }
    if (!s.strategy) {
      fail(s, "strategy factory returned nothing");
      return false;
    }
    if (!options_.slowdown_strategy.empty() && s.result.strategy == options_.slowdown_strategy) {
      s.strategy = std::make_unique<SlowedStrategy>(std::move(s.strategy), options_.slowdown_percent,
                                                    context_.clock.start, context_.clock.end);
    }
    auto reason = s.strategy->skip_reason(context_.features);
    if (!reason) {
      reason = s.strategy->skip_case(s.config);
      s.result.not_applicable = reason.has_value();
    }
    if (reason) {
      skip(s, *reason);
      return false;
    }
    s.resident_before = read_resident_bytes();
    if (auto status = s.strategy->setup(s.config); !status) {
      fail(s, "setup: " + status.error().message);
      return false;
    }
    s.active = true;
    return true;
  }

  [[nodiscard]] double to_ns(uint64_t ticks) const { return ticks_to_ns(ticks, context_.clock.hz); }

  bool pilot(CaseState& s) {
    const double target_ns = options_.iteration_time_ms * 1e6;
    const uint64_t max_ops = std::max<uint64_t>(1, options_.max_ops_per_iteration);
    uint64_t ops = 1;
    for (unsigned stage = 1; stage <= std::max(1u, options_.max_pilot_stages); ++stage) {
      s.ops = ops;
      progress(s, Stage::pilot, stage);
      auto ticks = iterations_.run(s, ops, false, "pilot", stage);
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
    record_held_memory(s);  // the connections have seen the case's bodies and are idle now
    return true;
  }

  // Warm-up iteration `w` (1-based); false when the case failed.
  bool warmup_one(CaseState& s, unsigned w) {
    auto ticks = iterations_.run(s, s.ops, false, "warmup", w);
    if (!ticks) {
      fail(s, *s.failure);
      return false;
    }
    progress(s, Stage::warmup, w, options_.warmup, to_ns(*ticks) / static_cast<double>(s.ops));
    if (cancelled()) {
      fail(s, "interrupted");
      return false;
    }
    s.result.warmup_iterations = w;
    return true;
  }

  bool warmup(CaseState& s) {
    for (unsigned w = 1; w <= options_.warmup; ++w) {
      if (!warmup_one(s, w)) return false;
    }
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

  // One measured iteration; nullopt when the case failed.
  std::optional<IterationSample> measure_one(CaseState& s, unsigned number, unsigned planned) {
    const uint64_t cpu_before = s.cpu_user_ns + s.cpu_system_ns;
    auto ticks = iterations_.run(s, s.ops, true, "measurement", number);
    if (!ticks) {
      fail(s, *s.failure);
      return std::nullopt;
    }
    const double ops = static_cast<double>(s.ops);
    const IterationSample sample{to_ns(*ticks) / ops,
                                 static_cast<double>(s.cpu_user_ns + s.cpu_system_ns - cpu_before) / ops};
    s.result.samples_ns.push_back(sample.ns_per_op);
    progress(s, Stage::measure, number, planned, sample.ns_per_op);
    return sample;
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
    fill_case_numbers(s, context_.clock.hz, memory_);
    for (IterationHook* hook : context_.hooks) hook->case_end(s.index, *s.spec, r);
    r.notes = s.strategy->notes();
    if (std::string cost = verification_note(s, context_.clock.hz); !cost.empty()) {
      if (!r.notes.empty()) r.notes += "; ";
      r.notes += cost;
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
      if (prepare(s)) (void)pilot(s);
    }
    if (context_.driver != nullptr && !agree_ops()) return;
    // Every case has been idle since its pilot while the later cases were set up and piloted: longer,
    // with many cases, than a server keeps an idle kept-alive connection (nginx 75 s, ours 30 s by
    // default). Each drops its connection, and the untimed verified op that starts its first warm-up
    // iteration opens a new one. The warm-up then runs in rounds too, right before the measured rounds,
    // so that no case idles longer than a round from here on.
    for (CaseState& s : states_) {
      if (s.active) s.strategy->drop_connection();
    }
    for (unsigned w = 1; w <= options_.warmup; ++w) {
      for (std::size_t index : interleave_order(n, w - 1)) {
        if (cancelled()) {
          for (CaseState& s : states_) {
            if (s.active) fail(s, "interrupted");
          }
          return;
        }
        CaseState& s = states_[index];
        if (s.active) (void)warmup_one(s, w);
      }
    }
    const std::size_t min_rounds = balanced_rounds(n, std::max(1u, options_.iterations));
    const std::size_t max_rounds =
        std::max(min_rounds, (std::max<std::size_t>(options_.max_iterations, 1) / n) * n);
    for (CaseState& s : states_) {
      if (s.active) (void)begin_measuring(s, max_rounds);
    }
    if (context_.driver != nullptr) {
      run_driven();
      return;
    }
    for (std::size_t round = 0; round < max_rounds; ++round) {
      for (std::size_t index : interleave_order(n, round)) {
        CaseState& s = states_[index];
        if (!s.active) continue;
        // Checked at every iteration, not every round: a round of many cases lasts seconds.
        if (cancelled()) {
          finish_measured("interrupted");
          return;
        }
        (void)measure_one(s, static_cast<unsigned>(round + 1), static_cast<unsigned>(max_rounds));
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

  // The driver's ops per iteration for every case, after the pilots. False (every case failed) when it
  // has none to give.
  bool agree_ops() {
    std::vector<std::string> names;
    std::vector<uint64_t> piloted;
    for (const CaseState& s : states_) {
      names.push_back(s.name);
      piloted.push_back(s.active ? s.ops : 0);
    }
    auto agreed = context_.driver->agree_ops(names, piloted);
    if (agreed && agreed->size() != states_.size()) {
      agreed = std::unexpected(Error{fmt::format("the driver gave {} ops counts for {} cases", agreed->size(),
                                                 states_.size())});
    }
    if (!agreed) {
      for (CaseState& s : states_) {
        if (s.active) fail(s, "driver: " + agreed.error().message);
      }
      return false;
    }
    for (std::size_t i = 0; i < states_.size(); ++i) {
      if (states_[i].active && (*agreed)[i] > 0) states_[i].ops = (*agreed)[i];
    }
    return true;
  }

  // The measured iterations the driver asks for, one at a time, until it says the measurement is over.
  void run_driven() {
    RoundDriver& driver = *context_.driver;
    std::vector<unsigned> counts(states_.size(), 0);
    for (;;) {
      if (cancelled()) return finish_measured("interrupted");
      auto next = driver.next_case();
      if (!next) return finish_measured("driver: " + next.error().message);
      if (!*next) break;
      const std::size_t index = **next;
      if (index >= states_.size() || !states_[index].active) {
        const Status told = driver.measured(index, std::nullopt, "no such case measuring");
        if (!told) return finish_measured("driver: " + told.error().message);
        continue;
      }
      CaseState& s = states_[index];
      auto sample = measure_one(s, ++counts[index], 0);
      const Status told = driver.measured(index, sample, sample ? std::string_view{} : s.result.reason);
      if (!told) return finish_measured("driver: " + told.error().message);
    }
    // The driver ended the measurement. A case still active without a sample is one it never asked for
    // (a failed iteration ends its case): left out of the run (a before/after run measures only the
    // cases both builds measure), not failed by this build.
    finish_measured("left out by the driver: the before/after run compares only the cases both builds measure",
                    CaseStatus::skipped);
  }

  // Every case still measuring is finished with the samples it has, so that the report keeps what was
  // measured (ratios pair the rounds both sides completed); one with none ends as `unmeasured` (failed or
  // skipped) with `reason`.
  void finish_measured(const std::string& reason, CaseStatus unmeasured = CaseStatus::failed) {
    for (CaseState& s : states_) {
      if (!s.active) continue;
      if (!s.result.samples_ns.empty()) {
        finish(s);
      } else if (unmeasured == CaseStatus::skipped) {
        skip(s, reason);
      } else {
        fail(s, reason);
      }
    }
  }

  const RunnerOptions& options_;
  const RunContext& context_;
  std::vector<CaseState> states_;
  bool memory_ = false;
  IterationRunner iterations_{context_, options_.phases, false};
};

}  // namespace

std::vector<CaseResult> run_cases(std::span<const CaseSpec> cases, const RunnerOptions& options,
                                  const RunContext& context) {
  Runner runner(cases, options, context);
  return runner.run();
}

}  // namespace ringlab::bench
