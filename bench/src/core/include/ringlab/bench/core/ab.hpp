#pragma once
// A before/after run (bench --before BENCH --after BENCH): two builds of ringlab measured in the same
// rounds, and what its report holds (RUN/report.json with "kind": "ab").
//
// The samples: in every round each case runs one measured iteration in each build, the two back to
// back, so a pair is taken under the same state of the machine; which goes first alternates from round
// to round. The second of a pair runs right after the same case in the other build, in caches the first
// warmed (and, for one binary, on its code): an A/A measured the first of a pair up to 2.7 % slower at
// 10,000 records. So one value is a balanced pair of rounds, one with each build first: the mean of their
// two log ratios, in which that order effect cancels. The answer per case, from those values:
//   ratio      their median, as a ratio after / before
//   interval   the distribution-free interval of that median (statistics.hpp's median_interval) at one
//              level for every interval of the run, set by the correction for the 2m quantities judged
//              (m cases compared, each with its time and its CPU), below
//   verdict    per quantity: slower when the interval lies wholly above 1 + band, faster when wholly
//              below 1 / (1 + band), else within the noise. `band` (--noise-band, 1 % by default) is the
//              equivalence band: what two processes of one build may still differ by is not a change.
//              The case's verdict: slower (or faster) when one quantity or both say so and neither says
//              the opposite, mixed when they disagree; `moved` names which ("time, CPU")
//   mde        the smallest change the run could have detected: band + (z(1 - q / 4m) + z(power)) x the
//              median's standard error, 1.2533 x 1.4826 x MAD(values) / sqrt(n values) (the normal
//              approximation of a median's error, the spread read robustly), power 90 %: at the level of a
//              run in which it would be the only change (R = 1), so it does not depend on the others
// The correction (Benjamini and Hochberg's, q = 5 %): each quantity's p-value is the sign test's that its
// values' median lies beyond the band on the side they lean to (beyond_band_p); ranked p_(1) <= ... <=
// p_(2m), the R quantities up to the largest i with p_(i) <= i q / 2m are beyond the band, and every
// interval is drawn at 1 - max(R, 1) q / 2m (Benjamini and Yekutieli's intervals for selected
// parameters). The sign interval at level L clears the band exactly when p <= 1 - L, so the intervals
// and the verdicts agree: the R quantities' intervals clear the band and no other's does. In an A/A, where
// every quantity is unchanged, the chance of any verdict other than within the noise stays at most q over
// the whole suite (for independent or positively dependent p-values, as the cases of one machine give);
// with a change, at most a share q of the verdicts is expected to be false. Against Bonferroni's level
// for every interval (1 - q / 2m) this gains where a change moves several quantities (a slowed strategy
// at three sizes, in time and CPU): the R of them share a level R times looser.
// Time and CPU per op (the client's user and system time) are both judged because they answer different
// halves of the question: a change that adds waiting shows in time, and CPU, free of the loopback's and
// the server's timing, is the quieter of the two for the rows that wait (over three runs, a 2 % busy wait
// in views was found by CPU at all 9 of its sizes and runs, by time at 4). Allocations, bytes
// allocated and system calls per op are counts, compared as counts (AbCase::counts_differ): the same when
// they differ by at most 0.01 per op or 0.1 %, since a count per op is an average over the measured ops
// and a receive may split differently from op to op (3.002 against 3.001 system calls per op); one
// allocation or system call more per op always differs.
//
// The gate (--fail-over X %): a case is over it when its time's or its CPU's interval lies wholly above
// 1 + X; bench then exits with kExitSlower. A uniform drift of the machine moves both builds of a pair alike, so it
// moves no ratio.
//
// Ownership: plain values. Errors: reading a report returns an Error naming the key.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/core/results.hpp"

namespace ringlab::bench {

inline constexpr int kAbSchemaVersion = 1;
inline constexpr std::string_view kAbKind = "ab";

// One build of the pair.
struct AbBuild {
  std::string bench;  // the bench binary as given
  // Where its code under test came from when that is not its own commit (tools/bench ab HARNESS:CODE:FOLDERS
  // builds HARNESS with FOLDERS checked out from CODE: "3e1a3d6 (http/src, json/src)"); empty: its commit's.
  std::string code;
  Report report;  // its worker's report: its environment (commit, flags) and its cases' counts
};

// after / before of one quantity.
struct AbEstimate {
  std::size_t pairs = 0;     // values: balanced pairs of rounds (rounds, when the order is not known)
  double ratio = 0;          // median of the per-round ratios; NaN without pairs
  double low = 0;            // the corrected interval; NaN with too few pairs for its level
  double high = 0;
  double mde = 0;            // smallest detectable change as a fraction (0.012: 1.2 %); NaN with < 2 pairs
};

enum class AbVerdict { faster, slower, within_noise, mixed, not_compared };
[[nodiscard]] std::string_view verdict_name(AbVerdict verdict) noexcept;

struct AbCase {
  std::string name;        // "string_copy weather 1000"
  std::string strategy;
  std::size_t size = 0;
  // The case's place in each build's worker report (its cases are in the order of its case list).
  std::optional<std::size_t> before_index;
  std::optional<std::size_t> after_index;
  // Per round, in round order: the two builds' ns per op and client CPU ns per op, and which went first.
  std::vector<double> before_ns;
  std::vector<double> after_ns;
  std::vector<double> before_cpu_ns;
  std::vector<double> after_cpu_ns;
  std::vector<bool> after_first;
  AbEstimate time;
  AbEstimate cpu;
  AbVerdict time_verdict = AbVerdict::not_compared;
  AbVerdict cpu_verdict = AbVerdict::not_compared;
  AbVerdict verdict = AbVerdict::not_compared;  // the two together
  std::string moved;   // which of them moved the verdict: "time", "CPU", "time, CPU"; empty: neither
  bool over_gate = false;
  std::string reason;  // not compared: why (a side skipped or failed it, or has no such case)
  // Per op, each side's, from its worker's report (null: not counted there).
  std::optional<double> before_allocations;
  std::optional<double> after_allocations;
  std::optional<double> before_bytes;
  std::optional<double> after_bytes;
  std::optional<double> before_syscalls;
  std::optional<double> after_syscalls;

  // Allocations, bytes or system calls per op that are not the same on both sides.
  [[nodiscard]] bool counts_differ() const noexcept;
};

// How the verdicts were reached (see the top of this file).
struct AbMethod {
  std::size_t compared = 0;        // m: the cases with a verdict other than not_compared
  std::size_t per_case = 2;        // quantities judged per case: time and CPU
  double family_level = 0.95;      // 1 - q, q the correction's rate over the whole suite
  double case_level = 0.95;        // every interval's: 1 - max(R, 1) q / (m x per_case)
  double detect_level = 0.95;      // Detectable's: 1 - q / (m x per_case)
  std::size_t discoveries = 0;     // R: the quantities beyond the band
  double noise_band = 0.01;        // --noise-band
  double power = 0.90;
  std::optional<double> fail_over;  // --fail-over as a fraction; null: no gate
  // "Benjamini-Hochberg"; reports written before it read "Bonferroni" (every interval at 1 - q / 2m, the
  // verdicts from the intervals alone).
  std::string correction = "Benjamini-Hochberg";
};

struct AbReport {
  int schema_version = kAbSchemaVersion;
  bool partial = false;            // stopped by a signal: the rounds done by then
  Environment environment;         // the parent's: machine, placement, the server
  Config config;                   // the run plan's
  // What differs between the builds: "client" (one server, started once, for both) or "server" (each
  // build's own embedded server, on the same CPU).
  std::string side = "client";
  std::string slowdown;            // --slowdown given to the after build ("views:2"); empty: none
  std::size_t rounds = 0;          // rounds completed
  AbBuild before;
  AbBuild after;
  AbMethod method;
  std::vector<AbCase> cases;
};

// Per-op counts the same on both sides within kCountTolerancePerOp or kCountToleranceShare of the larger.
inline constexpr double kCountTolerancePerOp = 0.01;
inline constexpr double kCountToleranceShare = 0.001;
[[nodiscard]] bool same_count(const std::optional<double>& a, const std::optional<double>& b) noexcept;

// The values a quantity is judged by, ascending: the log ratio after / before of each balanced pair of
// rounds (`after_first[i]`: the after build ran first in round i), the mean of the pair's two; with
// `after_first` empty (the order not known), each round's log ratio. Rounds without a positive value on
// both sides are left out.
[[nodiscard]] std::vector<double> pair_log_ratios(std::span<const double> before, std::span<const double> after,
                                                  const std::vector<bool>& after_first);
// The two-sided p-value of the sign test that the median of `sorted_logs` lies beyond the band, on the
// side more of them lie: 2 P(B(n, 1/2) <= the values not beyond it), at most 1; 1 without values.
[[nodiscard]] double beyond_band_p(std::span<const double> sorted_logs, double band);
// after / before of paired samples (pair_log_ratios): ratio, interval at `level`, smallest detectable
// change at `detect_level` (`level` when not given).
[[nodiscard]] AbEstimate estimate_change(std::span<const double> before, std::span<const double> after,
                                         const std::vector<bool>& after_first, double level, double band,
                                         double power, std::optional<double> detect_level = std::nullopt);
// The standard normal's quantile, p in (0, 1).
[[nodiscard]] double normal_quantile(double p) noexcept;

// Fills every case's estimates and verdict from its pairs and the counts from the builds' reports, and
// the method's m, R and levels (the correction above). Cases with a reason set stay not compared.
void judge(AbReport& report);

// Cases over the gate (none without one).
[[nodiscard]] std::vector<const AbCase*> over_gate(const AbReport& report);

[[nodiscard]] nlohmann::json to_json(const AbReport& report);
[[nodiscard]] Result<AbReport> ab_report_from_json(const nlohmann::json& json);
// True when `json` is a before/after report ("kind": "ab").
[[nodiscard]] bool is_ab_report(const nlohmann::json& json);
[[nodiscard]] Result<AbReport> read_ab_report_file(const std::filesystem::path& path);
// As read_ab_report_file, but a JSON file that is not a before/after report is nullopt, not an error: the
// caller reads it as another kind of report. A file that says it is one and does not parse is the error.
[[nodiscard]] Result<std::optional<AbReport>> read_if_ab_report_file(const std::filesystem::path& path);

}  // namespace ringlab::bench
