#pragma once
// What a run found, said in a few generated lines: the summary under the console table and on a
// results page. Every sentence is computed from the report; nothing here is written by hand.
//
//   summarize_warnings  the diagnostics (diagnostics.hpp) grouped by kind: one line per kind with how
//                       many cases and the range of their CV; the kinds worth reading case by case (a
//                       bimodal distribution with its m-value, an unstable baseline with its CV) name
//                       every case, in one line per kind.
//   run_findings        per group (payload, size, allocator): the fastest contender and its Ratio with
//                       the Ratio's 95 % interval, how far it is from the floors (their sum and the
//                       larger of the two), the largest saving in allocations against the baseline and
//                       the baseline's page faults per op under its allocator; then which differences
//                       are within the noise (the Ratio's interval includes 1.0).
//
// Pure functions of the report (no clock, no I/O); the lines carry no trailing newline and no bullet.
#include <string>
#include <vector>

#include "ringlab/bench/core/results.hpp"

namespace ringlab::bench {

[[nodiscard]] std::vector<std::string> summarize_warnings(const Report& report);

[[nodiscard]] std::vector<std::string> run_findings(const Report& report);

}  // namespace ringlab::bench
