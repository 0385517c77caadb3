#pragma once
// Reporters: the console/markdown table in BenchmarkDotNet's shape, the phase table, CSV and JSON,
// and the results/<timestamp>/ folder they are written to.
//
// All renderers are pure functions of a Report (no clock, no environment reads), so the three
// formats of one report can be checked against each other. Numbers in the markdown table are
// rounded for reading (a unit per column, see statistics.hpp); CSV and JSON carry the exact values
// in base units (ns, bytes), with empty fields (CSV) or null (JSON) where a value is n/a.
//
// Table conventions: rows grouped by payload, size and allocator (a blank row between groups),
// in the order the cases ran; a case that failed shows FAILED in Mean and a case that was skipped
// shows "skipped", with the reasons listed under the table; Ratio is "?" where the group has no
// baseline; "n/a" where a value was not measured; reference rows (the floors) are suffixed "(ref)".
// Each time column has one unit (from its smallest value) and no digit finer than the timer.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/core/results.hpp"

namespace ringlab::bench {

enum class Format { md, csv, json, gbench, html };
[[nodiscard]] std::string_view format_name(Format format) noexcept;
// The file a format is written to in the results folder: "report.md", ..., "report.gbench.json".
[[nodiscard]] std::string format_file_name(Format format);
// "md,csv,json" -> formats; an unknown or repeated name is an error naming it.
[[nodiscard]] Result<std::vector<Format>> parse_formats(std::string_view list);

// Extra columns of the main table, off by default (bench --columns, kept in Config::columns): the
// per-op latency percentiles of the sampled ops. "p50,p99" -> {"p50", "p99"}; "all" -> every one; an
// unknown or repeated name is an error naming it and the known ones. Any of them makes the console show
// the full table.
[[nodiscard]] Result<std::vector<std::string>> parse_columns(std::string_view list);
// "p50,p90,p99,p999,max"
[[nodiscard]] std::string known_columns();

// The environment block (a fenced "ini" block as BenchmarkDotNet prints it).
[[nodiscard]] std::string render_environment(const Report& report);
// The stability warnings (diagnostics.hpp) as a block for above the table; empty when none.
[[nodiscard]] std::string render_warnings(const Report& report);
// The main table, in markdown, every column (report.md, and the console with --columns).
[[nodiscard]] std::string render_table(const Report& report);
// The table that fits a terminal (at most kConsoleWidth columns for the default suites): Method,
// Size, Median, Ratio and its 95 % interval, Allocated, Allocs/op, Page faults/op, Syscalls/op (Payload
// and Allocator only when several ran); rows of strategies that do not apply to the payload left out.
[[nodiscard]] std::string render_compact_table(const Report& report);
// Median time of each request phase per op, one row per ok case; empty when no case has phases.
[[nodiscard]] std::string render_phase_table(const Report& report);
// Skipped and failed cases with reasons, outliers removed, strategy notes; empty when none.
[[nodiscard]] std::string render_notes(const Report& report);
// What each column means (also printed by --help).
[[nodiscard]] std::string render_legend();
// "What this run says" (core/findings.hpp's run_findings) as a markdown list, a group's details as
// nested items: report.md and results pages; empty when there is nothing to say.
[[nodiscard]] std::string render_findings(const Report& report);
// The width the console output keeps to: lines of prose are wrapped to it.
inline constexpr std::size_t kConsoleWidth = 160;
// `text` in lines of at most `width` columns, the first after `first_prefix`, the others after `indent`:
// broken between clauses (after ", ", "; ", ": ") where the next clause then fits on its line, else
// between words, so that a phrase such as "0.96x the larger" is not cut; a word longer than a line (a
// path) gets a line of its own. Every line ends in '\n'.
[[nodiscard]] std::string wrap_text(std::string_view text, std::size_t width, std::string_view first_prefix,
                                    std::string_view indent);
// What a suite run prints on the terminal: a short header, the warnings summarized by kind
// (findings.hpp), the compact table (the full one and the phases when config.columns asks for
// columns), failed and skipped cases, one line for the rows that do not apply, and "What this run says".
[[nodiscard]] std::string render_console(const Report& report);
// Everything above, in order, with every warning case by case: report.md.
[[nodiscard]] std::string render_markdown(const Report& report);
[[nodiscard]] std::string render_csv(const Report& report);
[[nodiscard]] std::string render_json(const Report& report);
// google-benchmark's JSON output (context + benchmarks), readable by its compare.py: one family per
// strategy, one repetition per measured iteration (real_time = ns per op), the mean, median, stddev
// and cv aggregates from ringlab's statistics, ringlab's per-op values as user counters; failed and
// skipped cases carry error_occurred. gbench.cpp says the mapping in full.
[[nodiscard]] std::string render_gbench(const Report& report);
// One self-contained HTML page (no script, nothing fetched): the environment, the warnings, the main
// and phase tables (the markdown ones as HTML tables), the notes, per group of cases a box plot of
// the samples and a stacked bar of the phases as inline SVG, and the legend.
[[nodiscard]] std::string render_html(const Report& report);

// The command that made the report, as typed at the project's root: "tools/bench get --sizes 1000";
// a run under tools/profile (it has --perf-control) is "tools/profile get ...", without the FIFOs.
[[nodiscard]] std::string run_command_text(const Config& config);
struct ProfileSummary;  // profile_summary.hpp
// A results page (bench report): a markdown page for docs/results/ that names the command, the commit
// (and whether the tree had uncommitted changes), the machine, the compiler and the allocator, then
// the findings, the warnings, the compact table, the notes, every column and the phases, and, given
// the run's profile (tools/profile's profile.json), where the CPU goes.
// `page_command` is the command that made the page. Machine paths are left out.
[[nodiscard]] std::string render_results_page(const Report& report, std::string_view page_command,
                                              const ProfileSummary* profile = nullptr);
// "2026-12-04-headline-ccf9a3f.md": the run's date, suite and commit.
[[nodiscard]] std::string results_page_name(const Report& report);

// "2024-05-01_12-00-00" for a UTC time in seconds.
[[nodiscard]] std::string results_folder_name(long long unix_seconds);

// Creates <root>/<results_folder_name(now)><suffix> (with "-2", "-3"... when it exists: a run never
// overwrites another) and returns its path.
[[nodiscard]] Result<std::filesystem::path> create_results_folder(const std::filesystem::path& root,
                                                                  std::string_view suffix, long long unix_seconds);
// Writes `text` to `path` (replacing it); errors name the step and the path.
[[nodiscard]] Status write_text_file(const std::filesystem::path& path, std::string_view text);

// Creates the results folder (create_results_folder, no suffix) and writes
// report.<format> for each format. Returns the paths written.
[[nodiscard]] Result<std::vector<std::filesystem::path>> write_reports(const Report& report,
                                                                      const std::filesystem::path& root,
                                                                      const std::vector<Format>& formats,
                                                                      long long unix_seconds);
// Writes report.<format> for each format into `folder` (made if need be, files in it replaced): a run
// that names its own folders (bench seeds: one per seed under the run's). Returns the paths written.
[[nodiscard]] Result<std::vector<std::filesystem::path>> write_reports_into(const Report& report,
                                                                           const std::filesystem::path& folder,
                                                                           const std::vector<Format>& formats);

}  // namespace ringlab::bench
