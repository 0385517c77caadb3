// `bench seeds`: every seed's methods (seeds.hpp) measured under the seeds' conditions, one interleaved run
// per seed against one embedded server each, the reports written to OUT/<time>-seeds/<seed>/, and the page
// that puts the write-ups' figures beside ringlab's: OUT/<time>-seeds/seeds.md, and docs/seeds.md when
// every seed ran to the end. `bench report OUT/<time>-seeds` makes the page again from those reports.
#include <algorithm>
#include <ctime>
#include <deque>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "ringlab/bench/process/allocators.hpp"
#include "ringlab/bench/report/reporters.hpp"
#include "ringlab/bench/run/suites.hpp"
#include "ringlab/bench/seeds/seeds.hpp"

namespace ringlab::bench::app {

namespace {

// The seeds a run measures: all, or those --filter names (globs over the seeds' names).
std::vector<const seeds::Seed*> chosen_seeds(const std::string& filter) {
  std::vector<const seeds::Seed*> chosen;
  for (const seeds::Seed& seed : seeds::all_seeds()) {
    if (filter_matches(filter, seed.name)) chosen.push_back(&seed);
  }
  return chosen;
}

std::string seed_names() {
  std::vector<std::string> names;
  for (const seeds::Seed& seed : seeds::all_seeds()) names.emplace_back(seed.name);
  return join(names, ", ");
}

Status write_page(const std::filesystem::path& path, std::span<const seeds::SeedRun> runs, std::string_view command) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return fail(fmt::format("create {}: {}", path.parent_path().string(), ec.message()));
  return write_text_file(path, seeds::render_seeds_page(runs, command));
}

}  // namespace

int run_seeds_command(const RunPlan& plan, const std::string& executable) {
  const std::vector<const seeds::Seed*> chosen = chosen_seeds(plan.cases.filter);
  if (chosen.empty()) {
    return report_error(fmt::format("seeds: --filter '{}' matches no seed; seeds: {}", plan.cases.filter, seed_names()));
  }
  // Every seed's cases before any server starts: a bad table is an error now, not after minutes.
  std::vector<seeds::SeedCases> cases;
  for (const seeds::Seed* seed : chosen) {
    auto made = seeds::seed_cases(*seed, strategies::registry());
    if (!made) return report_error(made.error().message);
    cases.push_back(std::move(*made));
  }
  if (auto writable = check_out_root(plan.outputs.out); !writable) return report_error(writable.error().message);
  auto folder = create_results_folder(plan.outputs.out, "-seeds", std::time(nullptr));
  if (!folder) return report_error(folder.error().message);

  const std::string allocator_name = alloc::detect_allocator().name();
  // Reports by seed; a deque, so that the runs' pointers stay valid as it grows.
  std::deque<Report> reports;
  std::vector<seeds::SeedRun> runs;
  bool complete = true;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const seeds::Seed& seed = *chosen[i];
    if (!seed.shares_run_of.empty()) {
      // The same rows as a seed already run (another of the write-up's tables): that run's report.
      const auto shared = std::find_if(runs.begin(), runs.end(), [&](const seeds::SeedRun& r) {
        return r.seed != nullptr && r.seed->name == seed.shares_run_of;
      });
      if (shared != runs.end()) {
        runs.push_back({&seed, shared->report, shared->not_run});
        continue;
      }
    }
    std::cerr << fmt::format("seed {} ({} of {}): {} cases\n", seed.name, i + 1, chosen.size(), cases[i].cases.size());
    RunPlan seed_plan = plan;
    seed_plan.cases.server_mode = strategies::ServerMode::seed;
    seed_plan.link.leg = seed.link_leg;
    if (!seed.link.empty()) {
      auto spec = link::parse_link_spec(seed.link);  // every seed's is checked by a test
      if (!spec) return report_error(fmt::format("seed {}: --link {}: {}", seed.name, seed.link, spec.error()));
      seed_plan.link.spec = std::move(*spec);
    }
    auto measured = measure_run(seed_plan, std::move(cases[i].cases), executable, allocator_name);
    if (!measured && !seed.link.empty()) {
      // An emulated link needs root and network namespaces: without them this seed is not run, and the page
      // says why; the others are.
      std::cerr << fmt::format("bench: seed {} not run: {}\n", seed.name, measured.error().message);
      runs.push_back({&seed, nullptr, measured.error().message});
      continue;
    }
    if (!measured) {
      return report_error(fmt::format("seed {}: {}", seed.name, measured.error().message), measured.error().exit_code);
    }
    Report& report = reports.emplace_back(std::move(measured->report));
    report.config.suite = seeds::seed_suite_name(seed);
    auto written = write_reports_into(report, *folder / std::string(seed.name), plan.outputs.formats);
    if (!written) return report_error(written.error().message);
    runs.push_back({&seed, &report, {}});
    complete = complete && !report.partial && exit_code_for(report.cases) == 0;
    if (g_cancel != 0) break;
  }

  const std::filesystem::path run_page = *folder / "seeds.md";
  const std::string shown = "tools/bench report " + (std::filesystem::path(plan.outputs.out).is_absolute()
                                                         ? folder->filename().string()
                                                         : folder->string());
  if (auto written = write_page(run_page, runs, shown); !written) return report_error(written.error().message);
  std::cout << "Seeds page of this run: " << run_page.string() << "\n";
  if (complete && chosen.size() == seeds::all_seeds().size()) {
    if (auto written = write_page(plan.outputs.seeds_page, runs, shown); !written) {
      return report_error(written.error().message);
    }
    std::cout << "Written: " << plan.outputs.seeds_page << "\n";
  } else {
    std::cout << plan.outputs.seeds_page << " left as it was: "
              << (complete ? "not every seed ran (--filter)" : "a case failed or the run was interrupted") << "\n";
  }
  if (g_cancel != 0) return report_error("interrupted: the reports above are partial", interrupted_exit_code());
  for (const Report& report : reports) {
    if (const int code = exit_code_for(report.cases); code != 0) return code;
  }
  return 0;
}

int run_seeds_page_command(const ResultsPageCommand& command) {
  namespace fs = std::filesystem;
  const fs::path folder(command.report);
  std::deque<Report> reports;
  std::vector<seeds::SeedRun> runs;
  for (const seeds::Seed& seed : seeds::all_seeds()) {
    const std::string_view run_of = seed.shares_run_of.empty() ? seed.name : seed.shares_run_of;
    const fs::path path = folder / std::string(run_of) / "report.json";
    if (!fs::exists(path)) {
      runs.push_back({&seed, nullptr, fmt::format("the run in {} has no report of it", folder.filename().string())});
      continue;
    }
    auto report = read_report_file(path);
    if (!report) return report_error("report: " + report.error().message);
    runs.push_back({&seed, &reports.emplace_back(std::move(*report)), {}});
  }
  if (reports.empty()) {
    return report_error(fmt::format("report: {} holds no seed's report.json (a folder bench seeds wrote has one per "
                                    "seed: {})",
                                    command.report, seed_names()));
  }
  const std::string shown = folder.is_absolute() ? folder.filename().string() : folder.string();
  if (auto written = write_page(command.seeds_page, runs, "tools/bench report " + shown); !written) {
    return report_error("report: " + written.error().message);
  }
  std::cout << "Written: " << command.seeds_page << "\n";
  return 0;
}

}  // namespace ringlab::bench::app
