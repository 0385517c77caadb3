// A results page: one report as a dated markdown page for docs/results/, with what a reader needs to
// trust or redo its figures (the command, the commit, the machine, the compiler, the allocator) above
// the generated findings and the tables.
#include "ringlab/bench/report/reporters.hpp"

#include <fmt/format.h>

#include "ringlab/bench/core/findings.hpp"
#include "ringlab/bench/core/table.hpp"
#include "ringlab/bench/report/profile_summary.hpp"
#include "sections.hpp"

namespace ringlab::bench {

namespace {

// A shell word as typed: quoted when it holds anything a shell would read specially.
std::string shell_word(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,/=:+%@") ==
                           std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (char ch : word) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}


}  // namespace

std::string run_command_text(const Config& config) {
  // --perf-control is given by tools/profile alone (its FIFOs are the protocol between the two): such a
  // run was typed as tools/profile with bench's other arguments, and the FIFOs' paths are the machine's.
  bool profiled = false;
  std::string arguments;
  for (std::size_t i = 0; i < config.arguments.size(); ++i) {
    const std::string& argument = config.arguments[i];
    if (argument == "--perf-control") {
      profiled = true;
      ++i;  // its value
      continue;
    }
    if (argument.starts_with("--perf-control=")) {
      profiled = true;
      continue;
    }
    arguments += " " + shell_word(argument);
  }
  return (profiled ? "tools/profile" : "tools/bench") + arguments;
}

std::string results_page_name(const Report& report) {
  const std::string date = report.environment.timestamp.substr(0, 10);
  const std::string commit = report.environment.git_commit.empty() ? "unknown" : report.environment.git_commit.substr(0, 7);
  return fmt::format("{}-{}-{}.md", date.empty() ? "undated" : date, report.config.suite, commit);
}

std::string render_results_page(const Report& report, std::string_view page_command, const ProfileSummary* profile) {
  const Environment& e = report.environment;
  const Config& c = report.config;
  std::string out = fmt::format("# Results: suite {}, {}\n\n", c.suite, e.timestamp.substr(0, 10));
  out += "Generated from a bench report; the figures below are the report's, none is written by hand.\n\n";
  out += "| | |\n|---|---|\n";
  const auto row = [&out](std::string_view name, const std::string& value) {
    out += fmt::format("| {} | {} |\n", name, value);
  };
  row("Command", fmt::format("`{}`", run_command_text(c)));
  row("Commit", fmt::format("`{}`{}", e.git_commit.empty() ? "unknown" : e.git_commit,
                            e.git_dirty.value_or(false) ? " with uncommitted changes" : ""));
  row("Machine", fmt::format("{}, {} cores, kernel {}", e.cpu, e.cores, e.kernel));
  row("Compiler", fmt::format("{}, {} build, simdjson On-Demand kernel {}; liburing {}, llhttp {}", e.compiler,
                              e.build_type, e.simdjson_kernel, e.liburing_version, e.llhttp_version));
  row("Allocator", allocator_short_name(e.allocator));
  std::string placement = e.client_cpu >= 0 ? fmt::format("client on CPU {}", e.client_cpu) : "client not pinned";
  if (e.server_cpu >= 0) placement += fmt::format(", server on CPU {}", e.server_cpu);
  placement += e.link ? "; link " + e.link->description : "; loopback";
  row("Placement", placement);
  row("Run", fmt::format("{} cases, {}, iterations of at least {} ms, {}..{} per case, target error {} %", report.cases.size(),
                         c.interleave ? "interleaved rounds" : "one case after another",
                         format_number(c.iteration_time_ms, 0), c.iterations, c.max_iterations,
                         format_number(c.target_error * 100, 1)));
  const auto load = [](const std::optional<LoadAverage>& l) { return l ? fmt::format("{:.2f}", l->one) : std::string("n/a"); };
  row("Started", fmt::format("{}; load average {} at start, {} at end", e.timestamp, load(e.load_average_start),
                             load(e.load_average_end)));
  row("Page made by", fmt::format("`{}`", page_command));
  append_section(out, "\n## What this run says\n\n", render_findings(report));
  const std::vector<std::string> warnings = summarize_warnings(report);
  if (!warnings.empty() || !e.warnings.empty()) {
    out += "\n## Warnings\n\n";
    for (const std::string& w : e.warnings) out += "- " + w + "\n";
    for (const std::string& w : warnings) out += "- " + w + "\n";
  }
  out += "\n## Table\n\n";
  out += render_compact_table(report);
  append_section(out, "\n", render_notes(report));
  out += "\n## Every column\n\n";
  out += render_table(report);
  append_section(out, "\n## Request phases (median per op)\n\n", render_phase_table(report));
  if (profile != nullptr) append_section(out, "\n## Where the CPU goes\n\n", render_profile_section(*profile, &report));
  out += "\nThe columns: docs/measuring.md.\n";
  return out;
}

}  // namespace ringlab::bench
