// The console table, summary and results page of a before/after run (ab_report.hpp).
#include "ringlab/bench/report/ab_report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>

#include "ringlab/bench/core/statistics.hpp"
#include "ringlab/bench/report/reporters.hpp"

namespace ringlab::bench {

namespace {

std::string time_text(double ns) {
  if (!std::isfinite(ns)) return "n/a";
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.2f} µs", ns / 1e3);
  return fmt::format("{:.2f} ms", ns / 1e6);
}

std::string ratio_text(const AbEstimate& e) {
  if (!std::isfinite(e.ratio)) return "n/a";
  if (!std::isfinite(e.low) || !std::isfinite(e.high)) return fmt::format("{:.3f} (too few rounds)", e.ratio);
  return fmt::format("{:.3f} ({:.3f}-{:.3f})", e.ratio, e.low, e.high);
}

std::string percent_text(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  return fmt::format("{:.1f} %", fraction * 100);
}

std::string count_pair(std::string_view what, const std::optional<double>& before, const std::optional<double>& after) {
  const auto text = [](const std::optional<double>& v) { return v ? fmt::format("{:.3g}", *v) : std::string("n/a"); };
  return fmt::format("{} {}→{}", what, text(before), text(after));
}

// "same", or the first count that differs and a mark when more do ("allocs 8.83→7.46 +1"): the table
// keeps to the console's width; report.json has every value.
std::string counts_text(const AbCase& c) {
  std::vector<std::string> parts;
  if (!same_count(c.before_allocations, c.after_allocations)) parts.push_back(count_pair("allocs", c.before_allocations, c.after_allocations));
  if (!same_count(c.before_bytes, c.after_bytes)) parts.push_back(count_pair("B", c.before_bytes, c.after_bytes));
  if (!same_count(c.before_syscalls, c.after_syscalls)) parts.push_back(count_pair("syscalls", c.before_syscalls, c.after_syscalls));
  if (parts.empty()) return "same";
  return parts.size() == 1 ? parts.front() : fmt::format("{} +{}", parts.front(), parts.size() - 1);
}

// "slower (CPU)", "faster (time, CPU)", "mixed (time faster, CPU slower)", "within the noise".
std::string verdict_text(const AbCase& c) {
  std::string text(verdict_name(c.verdict));
  if (c.verdict == AbVerdict::mixed) {
    text += fmt::format(" (time {}, CPU {})", verdict_name(c.time_verdict), verdict_name(c.cpu_verdict));
  } else if (!c.moved.empty()) {
    text += " (" + c.moved + ")";
  }
  if (c.over_gate) text += ", over the gate";
  return text;
}

// "2.1/1.4 %": the smallest detectable change of time and of CPU.
std::string detectable_text(const AbCase& c) {
  if (!std::isfinite(c.time.mde) || !std::isfinite(c.cpu.mde)) return "n/a";
  return fmt::format("{:.1f}/{:.1f} %", c.time.mde * 100, c.cpu.mde * 100);
}

// "5eb7313", "5eb7313+changes", or "5eb7313+code-3e1a3d6" for a build carrying another commit's code under
// test (the composition explains its uncommitted changes).
std::string short_commit(const AbBuild& build) {
  const std::string& commit = build.report.environment.git_commit;
  std::string text = commit.empty() ? "unknown" : commit.substr(0, 7);
  if (!build.code.empty()) return text + "+code-" + build.code.substr(0, std::min(build.code.find(' '), std::size_t{7}));
  if (build.report.environment.git_dirty.value_or(false)) text += "+changes";
  return text;
}

// The command as typed, without this machine's paths: the two binaries named BEFORE and AFTER, any other
// absolute path cut to its last part ("--out /tmp/x/results" reads "--out results").
std::string command_text(const AbReport& report) {
  Config config = report.config;
  for (std::size_t i = 0; i < config.arguments.size(); ++i) {
    std::string& argument = config.arguments[i];
    const auto equals = argument.find('=');
    const std::size_t value_at = argument.starts_with("--") && equals != std::string::npos ? equals + 1 : 0;
    if (argument.size() > value_at && argument[value_at] == '/') {
      argument = argument.substr(0, value_at) + std::filesystem::path(argument.substr(value_at)).filename().string();
    }
    for (auto [flag, name] : {std::pair{"--before", "BEFORE"}, std::pair{"--after", "AFTER"}}) {
      if (argument == flag && i + 1 < config.arguments.size()) config.arguments[i + 1] = name;
      if (argument.starts_with(std::string(flag) + "=")) argument = std::string(flag) + "=" + name;
    }
  }
  return run_command_text(config);
}

// How the intervals' level was set, for the summary line (`brief`) and the page: Benjamini and
// Hochberg's correction, or Bonferroni's for reports written before it.
std::string correction_text(const AbMethod& m, bool brief) {
  const std::size_t quantities = m.compared * m.per_case;
  const double q = (1 - m.family_level) * 100;
  if (m.correction == "Bonferroni") {
    if (brief) {
      return fmt::format("Bonferroni over {} cases × {}: {:.0f} % for the whole suite", m.compared, m.per_case,
                         m.family_level * 100);
    }
    return fmt::format("Bonferroni correction over {} cases × {} quantities, so that the whole suite keeps a {:.0f} % "
                       "chance that every interval holds its true ratio",
                       m.compared, m.per_case, m.family_level * 100);
  }
  if (brief) {
    return fmt::format("{} over {} cases × {} at {:g} %: {} of {} beyond the band", m.correction, m.compared,
                       m.per_case, q, m.discoveries, quantities);
  }
  return fmt::format(
      "Benjamini and Hochberg's correction over the {} quantities ({} cases × {}) at q = {:g} %: each quantity's "
      "p-value is the sign test's that its median lies beyond the band, the correction found {} of them beyond it, "
      "and every interval is drawn at 1 − max({}, 1) × {:g} %/{}, at which exactly those intervals clear the band. "
      "In an A/A, where nothing changed, the chance of any verdict over the whole suite stays at most {:g} %; with "
      "a change, at most {:g} % of the verdicts are expected to be false",
      quantities, m.compared, m.per_case, q, m.discoveries, m.discoveries, q, quantities, q, q);
}

}  // namespace

std::string render_ab_table(const AbReport& report) {
  std::string out = "| Case | Before | After | Time after/before (interval) | CPU after/before (interval) | Detectable "
                    "time/CPU | Counts/op | Verdict |\n|---|--:|--:|--:|--:|--:|---|---|\n";
  for (const AbCase& c : report.cases) {
    if (c.verdict == AbVerdict::not_compared) {
      out += fmt::format("| {} | | | | | | | not compared: {} |\n", c.name, c.reason);
      continue;
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", c.name, time_text(median_of(c.before_ns)),
                       time_text(median_of(c.after_ns)), ratio_text(c.time), ratio_text(c.cpu), detectable_text(c),
                       counts_text(c), verdict_text(c));
  }
  return out;
}

std::string render_ab_summary(const AbReport& report) {
  const AbMethod& m = report.method;
  std::size_t faster = 0;
  std::size_t slower = 0;
  std::size_t within = 0;
  std::size_t mixed = 0;
  std::size_t counts = 0;
  std::map<std::size_t, std::vector<double>> time_detectable;  // by size
  std::map<std::size_t, std::vector<double>> cpu_detectable;
  for (const AbCase& c : report.cases) {
    if (c.verdict == AbVerdict::faster) ++faster;
    if (c.verdict == AbVerdict::slower) ++slower;
    if (c.verdict == AbVerdict::within_noise) ++within;
    if (c.verdict == AbVerdict::mixed) ++mixed;
    if (c.verdict == AbVerdict::not_compared) continue;
    if (c.counts_differ()) ++counts;
    if (std::isfinite(c.time.mde)) time_detectable[c.size].push_back(c.time.mde);
    if (std::isfinite(c.cpu.mde)) cpu_detectable[c.size].push_back(c.cpu.mde);
  }
  std::string out = fmt::format(
      "{} rounds, {} cases compared: {} slower, {} faster, {} within the noise{}; {} with different counts per op.\n",
      report.rounds, m.compared, slower, faster, within, mixed > 0 ? fmt::format(", {} mixed", mixed) : std::string(),
      counts);
  out += fmt::format(
      "Verdicts: time and CPU after/before, each outside ±{:g} % (the noise band) with its median's interval at "
      "{:.3f} % ({}).\n",
      m.noise_band * 100, m.case_level * 100, correction_text(m, /*brief=*/true));
  const auto range = [](const std::vector<double>& values) {
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    return fmt::format("{} to {}", percent_text(*low), percent_text(*high));
  };
  for (const auto& [size, values] : time_detectable) {
    out += fmt::format("Smallest detectable change at {} records (90 % power): time {}, CPU {}, over its {} cases.\n",
                       size, range(values), cpu_detectable.contains(size) ? range(cpu_detectable[size]) : "n/a",
                       values.size());
  }
  if (m.fail_over) {
    const auto over = over_gate(report);
    std::string names;
    for (const AbCase* c : over) names += (names.empty() ? "" : ", ") + c->name;
    out += over.empty() ? fmt::format("Gate: no case slower beyond {:g} %.\n", *m.fail_over * 100)
                        : fmt::format("Gate: {} slower beyond {:g} %: {}.\n", over.size(), *m.fail_over * 100, names);
  }
  if (!report.slowdown.empty()) out += fmt::format("Injected: --slowdown {} in the after build.\n", report.slowdown);
  if (report.partial) out += "Partial: the run was stopped; the rounds above are those completed.\n";
  return out;
}

std::string ab_page_name(const AbReport& report) {
  const std::string date = report.environment.timestamp.substr(0, 10);
  return fmt::format("{}-ab-{}-{}-{}.md", date.empty() ? "undated" : date, report.config.suite,
                     short_commit(report.before), short_commit(report.after));
}

std::string render_ab_page(const AbReport& report, std::string_view page_command,
                           const std::optional<std::string>& judged_again_from) {
  const Environment& e = report.environment;
  std::string out = fmt::format("# Before and after: suite {}, {} against {}, {}\n\n", report.config.suite,
                                short_commit(report.after), short_commit(report.before),
                                e.timestamp.substr(0, 10));
  out += "Generated from a bench before/after report; the figures below are the report's, none is written by hand.\n\n";
  out += "| | |\n|---|---|\n";
  const auto row = [&out](std::string_view name, const std::string& value) { out += fmt::format("| {} | {} |\n", name, value); };
  row("Command", fmt::format("`{}`", command_text(report)));
  row("Commit", fmt::format("`{}`{}: the bench that drove the workers{}", e.git_commit.empty() ? "unknown" : e.git_commit,
                            e.git_dirty.value_or(false) ? " with uncommitted changes" : "",
                            report.side == "client" ? " and whose server both builds sent to" : ""));
  for (auto [name, build] : {std::pair{"Before", &report.before}, std::pair{"After", &report.after}}) {
    const Environment& be = build->report.environment;
    // A composed build's tree differs from its commit by exactly the code it carries: that, not "uncommitted".
    const std::string origin = !build->code.empty()      ? fmt::format(" with the code under test of `{}`", build->code)
                               : be.git_dirty.value_or(false) ? " with uncommitted changes"
                                                              : "";
    row(name, fmt::format("bench built from `{}`{}, {} build", be.git_commit.empty() ? "unknown" : be.git_commit,
                          origin, be.build_type));
  }
  row("Machine", fmt::format("{}, {} cores, kernel {}", e.cpu, e.cores, e.kernel));
  row("Allocator", allocator_short_name(report.before.report.environment.allocator));
  std::string placement = e.client_cpu >= 0 ? fmt::format("both workers on CPU {}", e.client_cpu) : "workers not pinned";
  if (e.server_cpu >= 0) placement += fmt::format(", server on CPU {}", e.server_cpu);
  row("Placement", placement + "; loopback");
  row("Server", report.side == "server" ? "each build's own embedded server (--compare-side server)"
                                        : "one embedded server for both builds (--compare-side client)");
  row("Page made by", fmt::format("`{}`", page_command));
  if (judged_again_from) {
    row("Verdicts", fmt::format("judged again from the report's per-round values by the bench that made this page "
                                "({}); the run itself printed verdicts by {}",
                                report.method.correction, *judged_again_from));
  }
  out += "\n## How the verdicts are reached\n\n";
  out += fmt::format(
      "Each build runs as its own worker process, driven by one parent round by round, both with the same "
      "address-space layout: in each of the {} rounds every case runs one measured iteration in each build, back to "
      "back, which build goes first alternating from round to round, and the cases' order rotating by one each "
      "round. Both builds measure a case with the same ops per iteration (the before build's pilot). One value is a "
      "balanced pair of rounds, one with each build first (the mean of their two log ratios: the second of a pair "
      "runs in caches the first warmed, and that effect cancels). For each case and for its time and its CPU per op, "
      "after/before is the median of those values, and its interval the distribution-free interval of that median "
      "at {:.3f} % ({}). A quantity is slower when its interval lies wholly above 1 + {:g} %, "
      "faster when wholly below 1/(1 + {:g} %): the noise band stands for what two processes of one build may still "
      "differ by. The case is slower (or faster) when time, CPU or both say so, the verdict naming which, and mixed "
      "when they disagree. Detectable is the smallest change the run could have found at {:.0f} % power: the band "
      "plus (z of {:.3f} %, the level of a run in which it were the only change, + z of the power) times the median's standard error (1.2533 × 1.4826 × the "
      "median absolute deviation of the values / √values). Allocations, bytes and system calls per op are counts, "
      "compared as counts (the same within 0.01 per op or 0.1 %).\n\n",
      report.rounds, report.method.case_level * 100, correction_text(report.method, /*brief=*/false),
      report.method.noise_band * 100, report.method.noise_band * 100, report.method.power * 100,
      report.method.detect_level * 100);
  out += "## Cases\n\n" + render_ab_table(report) + "\n" + render_ab_summary(report);
  std::vector<std::string> warnings = e.warnings;
  for (auto [name, build] : {std::pair{"before", &report.before}, std::pair{"after", &report.after}}) {
    for (const std::string& w : build->report.environment.warnings) warnings.push_back(fmt::format("{}: {}", name, w));
    for (const CaseResult& c : build->report.cases) {
      if (c.notes.find("--slowdown") != std::string::npos) {
        warnings.push_back(fmt::format("{}: {}: {}", name, case_label(c), c.notes));
      }
    }
  }
  if (!warnings.empty()) {
    out += "\n## Warnings and notes\n\n";
    for (const std::string& w : warnings) out += "- " + w + "\n";
  }
  return out;
}

}  // namespace ringlab::bench
