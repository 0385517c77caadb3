#pragma once
// `bench compare OLD.json NEW.json [--fail-over PCT] [--alpha A] [--ratio-tolerance PCT]`: two runs
// side by side, case by case, with a verdict on whether each difference is more than noise.
//
// Pairing: a case is identified by (strategy, method, payload, size, allocator, in flight, client
// threads): a run of --inflight 1,64 has two cases of each row. A case found in only one file is
// listed as such, never dropped.
//
// Per case: both means (ns per op, over the samples the statistics kept, i.e. samples_ns without
// the outliers), the ratio new / old, and Welch's two-sided t-test on those samples (unequal
// variances; the Student t distribution from statistics.hpp). The difference is significant when
// p < alpha, 0.001 by default (99.9 %, the confidence level of the table's Error column). The test
// assumes independent samples; iterations of a benchmark are only roughly that, so read p as a
// noise filter, not as a probability of anything.
//
// Ratios: where both runs measured a baseline, each case's Ratio (against its own run's baseline,
// paired by round) is shown from both runs with their quotient. A drift of the whole machine between
// the two runs (30 % on a shared VM) moves the means but cancels in the ratios, so a change of code
// shows there; the line under the table counts the ratios that moved less than --ratio-tolerance
// (default 3 %) and names the largest move.
//
// Comparability: two runs whose settings or machines differ measure different things, and a
// difference between them says nothing about the code. compare refuses them (exit status 2, naming
// each key that differs) unless --force, which prints the differences above the comparison. The
// keys: config.iteration_time_ms, sizes, connection, server_mode, inflight, client, client_threads,
// allocators, interleave, cpu, server_cpu; environment.cpu (the model), kernel, allocator, client_cpu
// and server_cpu (the placement the run really had). The allocator is compared without folders
// ("glibc 2.36 (libc.so.6), called through bench"): two builds of two commits in two checkouts of one
// machine ran the same allocator.
//
// Regression check: with --fail-over PCT the exit status is 1 when some case got slower by more
// than PCT percent *and* the difference is significant (a large ratio that is not significant is
// noise, and failing on it would make the check useless on a noisy machine), or when a case that
// was ok in OLD failed or was skipped in NEW. Exit status 2: bad arguments or unreadable files.
//
// Ownership: plain values; nothing refers into the reports after a call returns.
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/core/results.hpp"

namespace ringlab::bench {

struct WelchTest {
  double t = 0;   // (mean_a - mean_b) / standard error of the difference
  double df = 0;  // Welch-Satterthwaite degrees of freedom
  double p = 1;   // two-sided
};

// Welch's t-test of a against b; nullopt when either has fewer than two values. Two samples without
// any spread give p = 1 if their means are equal and p = 0 if not.
[[nodiscard]] std::optional<WelchTest> welch_test(std::span<const double> a, std::span<const double> b);

enum class Verdict {
  same,            // the difference is not significant
  faster,          // significantly faster in NEW
  slower,          // significantly slower in NEW
  broken,          // ok in OLD, failed or skipped in NEW
  not_comparable,  // not ok in OLD, or too few samples for the test
  only_old,        // absent from NEW
  only_new,        // absent from OLD
};
[[nodiscard]] std::string_view verdict_name(Verdict verdict) noexcept;

struct CaseComparison {
  std::string strategy;
  std::string method;
  std::string payload;
  std::size_t size = 0;
  std::string allocator;
  std::optional<double> old_mean;  // ns per op; absent when the case is absent or not ok there
  std::optional<double> new_mean;
  std::size_t inflight = 1;        // requests in flight (--inflight)
  std::size_t client_threads = 1;  // --client-threads
  std::optional<double> ratio;     // new / old
  std::optional<double> old_ratio;  // the case's Ratio against OLD's baseline; absent without one
  std::optional<double> new_ratio;  // and against NEW's
  bool baseline = false;            // the case the ratios divide by (its own Ratio is 1 in both)
  std::optional<WelchTest> test;
  Verdict verdict = Verdict::not_comparable;
  std::string note;  // why it is not comparable / broken
};

struct CompareOptions {
  double alpha = 0.001;          // significance level of the two-sided test
  double ratio_tolerance = 3.0;  // percent: a Ratio that moved less is counted unchanged (--ratio-tolerance)
};

struct Difference {
  std::string key;  // "config.iteration_time_ms", "environment.kernel"
  std::string old_value;
  std::string new_value;
};
// The comparability keys (above) whose values differ, in a fixed order; empty when comparable.
[[nodiscard]] std::vector<Difference> comparability_differences(const Report& old_report, const Report& new_report);

// Every case of either report, in OLD's order, then the cases only NEW has.
[[nodiscard]] std::vector<CaseComparison> compare_reports(const Report& old_report, const Report& new_report,
                                                          const CompareOptions& options = {});

// The cases that fail a --fail-over check: significantly slower by more than `percent` %, or broken.
[[nodiscard]] std::vector<CaseComparison> regressions(std::span<const CaseComparison> comparisons, double percent);

// The comparison as a console table (time units chosen per column as in the main table; In flight and
// Threads when a case has more than one, the Ratio columns when both runs have ratios), the count of
// ratios within the tolerance, then one line per note.
[[nodiscard]] std::string format_comparison(std::span<const CaseComparison> comparisons, const CompareOptions& options);

// The subcommand's arguments: `bench compare OLD.json NEW.json [--fail-over PCT] [--alpha A]
// [--ratio-tolerance PCT] [--force]`,
// parsed by the command line (app/cli.hpp's add_compare_arguments).
struct CompareCommand {
  std::vector<std::string> files;   // OLD.json NEW.json
  std::optional<double> fail_over;  // --fail-over PCT
  bool force = false;
  CompareOptions options;           // --alpha, --ratio-tolerance
};

// Runs a parsed comparison. Prints the table to `out` and problems to `err`. Returns the process
// exit status: 0 fine, 1 regression (with --fail-over), 2 unreadable reports, or reports that are
// not comparable (without --force).
[[nodiscard]] int run_compare(const CompareCommand& command, std::ostream& out, std::ostream& err);

}  // namespace ringlab::bench
