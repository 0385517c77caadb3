// `bench report RUN/report.json [--out DIR]`: the results page of a report (reporters.hpp's
// render_results_page), written to DIR/<date>-<suite>-<commit>.md.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "ringlab/bench/report/reporters.hpp"

namespace ringlab::bench::app {

int run_results_page_command(const ResultsPageCommand& command) {
  const std::filesystem::path source(command.report);
  if (std::filesystem::is_directory(source)) return run_seeds_page_command(command);
  auto report = read_report_file(source);
  if (!report) return report_error("report: " + report.error().message);
  // The page names the report as the command that made it was typed; an absolute path (a machine's
  // own folders) is cut to the run's folder and file.
  const std::string shown =
      source.is_absolute() ? (source.parent_path().filename() / source.filename()).string() : source.string();
  const std::filesystem::path folder(command.out);
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return report_error("report: creating " + folder.string() + ": " + error.message());
  const std::filesystem::path page = folder / results_page_name(*report);
  const bool replaced = std::filesystem::exists(page);
  if (auto written = write_text_file(page, render_results_page(*report, "tools/bench report " + shown)); !written) {
    return report_error("report: " + written.error().message);
  }
  std::cout << "Written: " << page.string() << (replaced ? " (replacing the page of the same date, suite and commit)" : "")
            << "\n";
  return 0;
}

}  // namespace ringlab::bench::app
