// `bench compare`'s command line (compare.hpp runs it): its arguments and their checks, and the
// subcommand run on its own (compare_main).
#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <ostream>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "ringlab/bench/app/cli.hpp"
#include "ringlab/bench/core/compare.hpp"

namespace ringlab::bench {
namespace {

constexpr std::string_view kDescription =
    "Compares two report.json files: pairs their cases by strategy, method, payload, size, allocator,\n"
    "in-flight count and client threads, and prints both means, NEW/OLD and Welch's t-test on the kept\n"
    "samples; where both runs have ratios, each case's Ratio in both (against its own run's baseline, so\n"
    "a drift of the machine between the runs cancels) and how many moved by more than --ratio-tolerance.\n"
    "Reports whose settings (iteration time, sizes, in flight, client threads, provided-buffer ring, allocators,\n"
    "CPU placement, interleave) or machines (CPU model, kernel, allocator) differ are refused with exit status 2.";

// A finite number written whole ("5", "0.5"); nullopt otherwise.
std::optional<double> parse_number(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// A percentage of at least 0 (--fail-over, --ratio-tolerance).
CLI::Validator percentage() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto number = parse_number(text);
        return number && *number >= 0 ? std::string() : "'" + text + "': expected a percentage >= 0";
      },
      "PCT >= 0");
}

}  // namespace

void add_compare_arguments(CLI::App& app, CompareCommand& into) {
  app.footer("\n" + std::string(kDescription));
  app.add_option("files", into.files, "OLD.json NEW.json: two report.json files")->expected(2)->required();
  app.add_option_function<double>(
         "--fail-over", [&into](const double& percent) { into.fail_over = percent; },
         "exit 1 if a case is significantly slower by more than PCT %, or broke")
      ->type_name("PCT")
      ->check(percentage());
  app.add_option("--alpha", into.options.alpha, "significance level of the two-sided test (default 0.001, i.e. 99.9 %)")
      ->type_name("A")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const auto number = parse_number(text);
            return number && *number > 0 && *number < 1 ? std::string() : "'" + text + "': expected a number in (0, 1)";
          },
          "A in (0, 1)"));
  app.add_option("--ratio-tolerance", into.options.ratio_tolerance,
                 "a Ratio that moved by at most PCT % between the runs counts as unchanged (default 3)")
      ->type_name("PCT")
      ->check(percentage());
  app.add_flag("--force", into.force, "compare anyway, listing the differences above the comparison");
}

int compare_main(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  CompareCommand command;
  CLI::App cli;
  cli.name("bench compare");
  cli.description("compare two report.json files");
  add_compare_arguments(cli, command);
  if (const std::optional<app::ParseEnd> end = app::parse_arguments(cli, args)) {
    if (end->status == 0) {
      out << end->output;
      return 0;
    }
    err << "bench compare: " << end->message << "\n" << cli.help();
    return 2;
  }
  return run_compare(command, out, err);
}

}  // namespace ringlab::bench
