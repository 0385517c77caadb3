#pragma once
// The text forms of a before/after run (core/ab.hpp): the console's table (at most kConsoleWidth
// columns), the summary under it, and the results page `bench report` makes of its report.json.
//
// Ownership: returns strings; reads the report only. Errors: none (what was not measured reads n/a).
#include <optional>
#include <string>
#include <string_view>

#include "ringlab/bench/core/ab.hpp"

namespace ringlab::bench {

// A markdown table, a row per case: the two builds' median time per op, after / before with its
// corrected interval, the smallest detectable change, CPU per op after / before with its interval, the
// counts (allocations, bytes, system calls per op: "same" or what changed) and the verdict.
[[nodiscard]] std::string render_ab_table(const AbReport& report);
// The lines under it: the verdicts counted, per size the smallest change the run could detect, the gate.
[[nodiscard]] std::string render_ab_summary(const AbReport& report);
// The results page: what was compared (both commits), machine, command, how the verdicts are reached,
// the table, the summary, the cases not compared, each side's warnings. `page_command`: what made it.
// `judged_again_from`: set when the verdicts were judged again from the per-round values (bench report
// --judge-again): the correction of the verdicts the run itself printed.
[[nodiscard]] std::string render_ab_page(const AbReport& report, std::string_view page_command,
                                         const std::optional<std::string>& judged_again_from = std::nullopt);
// "2026-12-05-ab-headline-1a2b3c4-5d6e7f8.md": date, suite and the two commits.
[[nodiscard]] std::string ab_page_name(const AbReport& report);

}  // namespace ringlab::bench
