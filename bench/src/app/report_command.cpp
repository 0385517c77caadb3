// `bench report RUN/report.json [--out DIR]` (or RUN): the results page of a report (reporters.hpp's
// render_results_page), written to DIR/<date>-<suite>-<commit>.md; with RUN/profile.json
// (tools/profile) the page says where the CPU goes.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "ringlab/bench/report/profile_summary.hpp"
#include "ringlab/bench/report/reporters.hpp"

namespace ringlab::bench::app {

int run_results_page_command(const ResultsPageCommand& command) {
  const std::filesystem::path given(command.report);
  // A run's folder is read as its report.json; any other folder is a seeds run's.
  const bool run_folder = std::filesystem::is_directory(given) && std::filesystem::exists(given / "report.json");
  if (std::filesystem::is_directory(given) && !run_folder) return run_seeds_page_command(command);
  const std::filesystem::path source = run_folder ? given / "report.json" : given;
  auto report = read_report_file(source);
  if (!report) return report_error("report: " + report.error().message);
  // tools/profile's summary of the same run, next to its report.
  auto profile = read_profile_summary(source.parent_path().empty() ? "." : source.parent_path());
  if (!profile) return report_error("report: " + profile.error().message);
  // The page names the report as the command that made it was typed; an absolute path (a machine's
  // own folders) is cut to the run's folder, and its file when a file was given.
  std::string shown = given.string();
  if (given.is_absolute()) {
    std::filesystem::path path = given.lexically_normal();
    if (!path.has_filename()) path = path.parent_path();  // "RUN/"
    shown = run_folder ? path.filename().string() : (path.parent_path().filename() / path.filename()).string();
  }
  const std::filesystem::path folder(command.out);
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return report_error("report: creating " + folder.string() + ": " + error.message());
  const std::filesystem::path page = folder / results_page_name(*report);
  const bool replaced = std::filesystem::exists(page);
  const std::string text = render_results_page(*report, "tools/bench report " + shown, *profile ? &**profile : nullptr);
  if (auto written = write_text_file(page, text); !written) {
    return report_error("report: " + written.error().message);
  }
  std::cout << "Written: " << page.string() << (replaced ? " (replacing the page of the same date, suite and commit)" : "")
            << "\n";
  return 0;
}

}  // namespace ringlab::bench::app
