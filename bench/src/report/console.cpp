// What a suite run prints on the terminal: a short header, the warnings summarized by kind, a table
// that fits a terminal (or the full one with --columns), the notes that matter, and the generated
// "What this run says". report.md keeps everything: the full environment, every warning case by case,
// every column, the phases, the counters and the legend.
#include "ringlab/bench/report/reporters.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/findings.hpp"
#include "ringlab/bench/core/table.hpp"
#include "sections.hpp"

namespace ringlab::bench {

std::string wrap_text(std::string_view text, std::size_t width, std::string_view first_prefix,
                      std::string_view indent) {
  // The clauses, each with the separator that ends it.
  std::vector<std::string_view> clauses;
  std::size_t start = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if ((text[i] == ',' || text[i] == ';' || text[i] == ':') && text[i + 1] == ' ') {
      clauses.push_back(text.substr(start, i + 1 - start));
      start = i + 2;
    }
  }
  clauses.push_back(text.substr(start));
  std::string out;
  std::string line(first_prefix);
  bool line_has_word = false;
  const auto break_line = [&] {
    out += line + "\n";
    line = std::string(indent);
    line_has_word = false;
  };
  for (const std::string_view clause : clauses) {
    const std::size_t clause_width = display_width(clause);
    // The clause on a line of its own would fit, but not after what this line holds: a new line.
    if (line_has_word && display_width(line) + 1 + clause_width > width &&
        display_width(indent) + clause_width <= width) {
      break_line();
    }
    std::size_t pos = 0;
    while (pos < clause.size()) {
      while (pos < clause.size() && clause[pos] == ' ') ++pos;
      if (pos >= clause.size()) break;
      std::size_t end = clause.find(' ', pos);
      if (end == std::string_view::npos) end = clause.size();
      const std::string_view word = clause.substr(pos, end - pos);
      if (line_has_word && display_width(line) + 1 + display_width(word) > width) break_line();
      if (line_has_word) line += ' ';
      line += word;
      line_has_word = true;
      pos = end;
    }
  }
  if (line_has_word) out += line + "\n";
  return out;
}

namespace {

std::string load_text(const std::optional<LoadAverage>& l) {
  return l ? fmt::format("{:.2f}", l->one) : std::string("n/a");
}

std::string render_header(const Report& report) {
  const Environment& e = report.environment;
  const Config& c = report.config;
  std::string out;
  const auto line = [&out](const std::string& text) { out += wrap_text(text, kConsoleWidth, "", "    "); };
  line(fmt::format("ringlab bench {}, commit {}{}, {} build, {}; simdjson kernel {}", e.version.empty() ? "n/a" : e.version,
                   e.git_commit.empty() ? "unknown" : e.git_commit.substr(0, 12),
                   e.git_dirty.value_or(false) ? " (uncommitted changes)" : "", e.build_type, e.compiler,
                   e.simdjson_kernel));
  line(fmt::format("{}, {} cores, kernel {}; allocator {}", e.cpu, e.cores, e.kernel, allocator_short_name(e.allocator)));
  std::string placement = e.client_cpu >= 0 ? fmt::format("client on CPU {}", e.client_cpu) : "client not pinned";
  if (e.server_cpu >= 0) placement += fmt::format(", server on CPU {}", e.server_cpu);
  line(fmt::format("{}; {}; {}", placement, e.link ? e.link->description : "loopback",
                   c.url.empty() ? "embedded server" : "server " + c.url));
  if (e.link) {
    // What the link gave, not only what was asked of it: the emulator's timers and the stacks add delay.
    const LinkInfo& l = *e.link;
    line(fmt::format("Link measured: RTT {} us median ({} min, {} ping-pongs; configured {} us), rate {} Mbit/s",
                     format_number(l.measured_rtt_us, 1), format_number(l.measured_rtt_min_us, 1), l.rtt_samples,
                     format_number(l.configured_rtt_us, 1), format_number(l.measured_rate_mbit, 0)));
  }
  line(fmt::format("suite {}: {} cases, {}, iterations of at least {} ms, {}..{} per case, target error {} %; "
                   "load average {} at start, {} at end",
                   c.suite, report.cases.size(), c.interleave ? "interleaved rounds" : "one case after another",
                   format_number(c.iteration_time_ms, 0), c.iterations, c.max_iterations,
                   format_number(c.target_error * 100, 1), load_text(e.load_average_start),
                   load_text(e.load_average_end)));
  for (const std::string& w : e.warnings) out += wrap_text(w, kConsoleWidth, "WARNING: ", "    ");
  return out;
}

std::string render_console_notes(const Report& report) {
  std::string out;
  std::string not_applicable;
  for (const CaseResult& c : report.cases) {
    if (c.status == CaseStatus::failed) {
      out += wrap_text(fmt::format("FAILED {}: {}", case_label(c), c.reason), kConsoleWidth, "- ", "  ");
    } else if (c.status == CaseStatus::skipped && !c.not_applicable) {
      out += wrap_text(fmt::format("skipped {}: {}", case_label(c), c.reason), kConsoleWidth, "- ", "  ");
    }
  }
  // One line for every row left out as not applying, by strategy and payload, with the first reason.
  std::vector<std::string> listed;
  for (const CaseResult& c : report.cases) {
    if (!c.not_applicable) continue;
    const std::string key = c.strategy + " " + c.payload;
    bool seen = false;
    for (const std::string& l : listed) seen = seen || l == key;
    if (seen) continue;
    listed.push_back(key);
    not_applicable += (not_applicable.empty() ? "" : "; ") + fmt::format("{} on {} ({})", c.strategy, c.payload, c.reason);
  }
  if (!not_applicable.empty()) {
    out += wrap_text("not shown, not applicable: " + not_applicable, kConsoleWidth, "- ", "  ");
  }
  return out;
}

}  // namespace

std::string render_console(const Report& report) {
  std::string out = render_header(report);
  out += "\n";
  if (const std::vector<std::string> warnings = summarize_warnings(report); !warnings.empty()) {
    out += "Warnings (every case's in report.md)\n";
    for (const std::string& w : warnings) out += wrap_text(w, kConsoleWidth, "- ", "  ");
    out += "\n";
  }
  // --columns asks for more than the terminal's default: the full table, as report.md has it.
  const bool full = !report.config.columns.empty();
  out += full ? render_table(report) : render_compact_table(report);
  if (full) append_section(out, "\nRequest phases (median per op)\n\n", render_phase_table(report));
  append_section(out, "\n", render_console_notes(report));
  if (const std::vector<std::string> findings = run_findings(report); !findings.empty()) {
    out += "\nWhat this run says\n";
    for (const std::string& f : findings) {
      // Lines of a group's own detail come indented from run_findings: they go on under the group's item,
      // at its text's indentation, not as items of their own.
      if (f.starts_with("  ")) {
        out += wrap_text(f.substr(2), kConsoleWidth, "  ", "  ");
      } else {
        out += wrap_text(f, kConsoleWidth, "- ", "  ");
      }
    }
  }
  return out;
}

}  // namespace ringlab::bench
