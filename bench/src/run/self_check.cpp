#include "ringlab/bench/run/self_check.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "ringlab/bench/core/statistics.hpp"
#include "ringlab/bench/core/table.hpp"
#include "ringlab/bench/measure/cycle_counter.hpp"

namespace ringlab::bench {

uint64_t spin(uint64_t steps) noexcept {
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (uint64_t i = 0; i < steps; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    // The state "may change" here as far as the compiler knows: every step must be computed.
    asm volatile("" : "+r"(x));
  }
  return x;
}

namespace {

class SpinStrategy final : public strategies::Strategy {
 public:
  explicit SpinStrategy(uint64_t steps) : steps_(steps) {}
  strategies::Status setup(const strategies::CaseConfig&) override { return {}; }
  strategies::Result<strategies::Outcome> run(http::Timeline*, strategies::Check check) override {
    const uint64_t value = spin(steps_);
    return strategies::Outcome{value, check == strategies::Check::verify ? value : 0};
  }

 private:
  uint64_t steps_;
};

// Descriptors need plain factories; the work of each is set before a run (the self-check runs on
// one thread, and only it reads these).
uint64_t g_work_a = 4000;
std::unique_ptr<strategies::Strategy> make_a() { return make_spin_strategy(g_work_a); }
std::unique_ptr<strategies::Strategy> make_2a() { return make_spin_strategy(2 * g_work_a); }

constexpr strategies::Descriptor kSpinA{"spin_a", "xorshift64 chain of A steps", "fixed work",
                                        strategies::Method::get, true, false, &make_a};
constexpr strategies::Descriptor kSpin2A{"spin_2a", "xorshift64 chain of 2A steps", "fixed work",
                                         strategies::Method::get, false, false, &make_2a};

}  // namespace

std::unique_ptr<strategies::Strategy> make_spin_strategy(uint64_t steps) {
  return std::make_unique<SpinStrategy>(steps);
}

Result<SelfCheckResult> run_self_check(const SelfCheckOptions& options, const RunContext& context) {
  g_work_a = std::max<uint64_t>(1, options.work);
  RunnerOptions runner = options.runner;
  runner.phases = false;
  runner.interleave = false;
  SelfCheckResult result;
  const TickClock& clock = tick_clock();
  result.tick_source = clock.source;
  result.timer_overhead_ns = clock.overhead_ns;
  result.timer_resolution_ns = clock.resolution_ns;

  CaseSpec a;
  a.strategy = &kSpinA;
  a.config.count = options.work;
  // The size column carries the steps: the two spin cases return different checksums, so they must
  // not be one payload/size group (the runner would fail 2A against A's checksum).
  CaseSpec two_a;
  two_a.strategy = &kSpin2A;
  two_a.config.count = 2 * options.work;

  for (std::size_t run = 0; run < result.means_ns.size(); ++run) {
    const std::vector<CaseSpec> one{a};
    auto results = run_cases(one, runner, context);
    if (results.empty() || results[0].status != CaseStatus::ok) {
      return fail(fmt::format("self-check: spin run {}: {}", run + 1, results.empty() ? "no result" : results[0].reason));
    }
    result.means_ns[run] = results[0].stats.mean;
  }
  const auto [lo, hi] = std::minmax_element(result.means_ns.begin(), result.means_ns.end());
  result.spread = (*hi - *lo) / mean(result.means_ns);

  const auto pair = run_cases(std::vector<CaseSpec>{a, two_a}, runner, context);
  for (const CaseResult& c : pair) {
    if (c.status != CaseStatus::ok) return fail(fmt::format("self-check: {}: {}", c.strategy, c.reason));
  }
  // The same ratio distribution as the table's Ratio column (every pairing of kept samples).
  const RatioStats ratio =
      ratio_all_pairs(without(pair[1].samples_ns, pair[1].outliers), without(pair[0].samples_ns, pair[0].outliers));
  if (!std::isfinite(ratio.mean)) return fail("self-check: no ratio between spin_2a and spin_a");
  result.ratio = ratio.mean;
  result.ratio_sd = ratio.sd;
  return result;
}

std::string render_self_check(const SelfCheckResult& r) {
  const auto verdict = [](bool ok) { return ok ? "ok" : "MISSED"; };
  std::string out = "Self-check\n";
  out += fmt::format("  timer       {}: overhead {} ns, resolution {} ns\n", r.tick_source,
                     format_number(r.timer_overhead_ns, 1), format_number(r.timer_resolution_ns, 2));
  out += fmt::format("  stability   spin A, 3 runs: means {} / {} / {} ns; spread {} % (target <= 2 %): {}\n",
                     format_number(r.means_ns[0], 1), format_number(r.means_ns[1], 1),
                     format_number(r.means_ns[2], 1), format_number(r.spread * 100, 2), verdict(r.spread_ok()));
  out += fmt::format("  linearity   spin 2A / spin A: ratio {} (RatioSD {}) (target 1.95-2.05): {}\n",
                     format_number(r.ratio, 3), format_number(r.ratio_sd, 3), verdict(r.ratio_ok()));
  return out;
}

}  // namespace ringlab::bench
