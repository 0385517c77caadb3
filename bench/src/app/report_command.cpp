// `bench report RUN/report.json [--out DIR]` (or RUN): the results page of a report (reporters.hpp's
// render_results_page), written to DIR/<date>-<suite>-<commit>.md; with RUN/profile.json
// (tools/profile) the page says where the CPU goes. A before/after run's report (core/ab.hpp) gets its
// own page (ab_report.hpp), DIR/<date>-ab-<suite>-<before>-<after>.md; with --judge-again its verdicts are
// judged again from its per-round values by this bench's method (a report of an older bench).
#include <filesystem>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "ringlab/bench/core/ab.hpp"
#include "ringlab/bench/report/ab_report.hpp"
#include "ringlab/bench/report/profile_summary.hpp"
#include "ringlab/bench/report/reporters.hpp"

namespace ringlab::bench::app {

namespace {

// The report as the command that made the page was typed; an absolute path (a machine's own folders) is
// cut to the run's folder, and its file when a file was given.
std::string shown_path(const std::filesystem::path& given, bool run_folder) {
  if (!given.is_absolute()) return given.string();
  std::filesystem::path path = given.lexically_normal();
  if (!path.has_filename()) path = path.parent_path();  // "RUN/"
  return run_folder ? path.filename().string() : (path.parent_path().filename() / path.filename()).string();
}

int write_page(const ResultsPageCommand& command, const std::string& name, const std::string& text) {
  const std::filesystem::path folder(command.out);
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return report_error("report: creating " + folder.string() + ": " + error.message());
  const std::filesystem::path page = folder / name;
  const bool replaced = std::filesystem::exists(page);
  if (auto written = write_text_file(page, text); !written) return report_error("report: " + written.error().message);
  std::cout << "Written: " << page.string() << (replaced ? " (replacing the page of the same name)" : "") << "\n";
  return 0;
}

}  // namespace

int run_results_page_command(const ResultsPageCommand& command) {
  const std::filesystem::path given(command.report);
  // A run's folder is read as its report.json; any other folder is a seeds run's.
  const bool run_folder = std::filesystem::is_directory(given) && std::filesystem::exists(given / "report.json");
  if (std::filesystem::is_directory(given) && !run_folder) return run_seeds_page_command(command);
  const std::filesystem::path source = run_folder ? given / "report.json" : given;
  std::string page_command = "tools/bench report " + shown_path(given, run_folder);
  auto read_ab = read_if_ab_report_file(source);
  // A before/after report that does not parse is that report's error, not another kind's.
  if (!read_ab) return report_error("report: " + read_ab.error().message);
  if (auto& ab = *read_ab) {
    std::optional<std::string> printed;
    if (command.judge_again) {
      printed = ab->method.correction;
      judge(*ab);
      page_command += " --judge-again";
    }
    return write_page(command, ab_page_name(*ab), render_ab_page(*ab, page_command, printed));
  }
  if (command.judge_again) return report_error("report: --judge-again is for a before/after report (\"kind\": \"ab\")");
  auto report = read_report_file(source);
  if (!report) return report_error("report: " + report.error().message);
  // tools/profile's summary of the same run, next to its report.
  auto profile = read_profile_summary(source.parent_path().empty() ? "." : source.parent_path());
  if (!profile) return report_error("report: " + profile.error().message);
  return write_page(command, results_page_name(*report),
                    render_results_page(*report, page_command, *profile ? &**profile : nullptr));
}

}  // namespace ringlab::bench::app
