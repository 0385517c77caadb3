#pragma once
// The shape most of bench's numeric options share (options.cpp, load_command.cpp). Internal to
// bench/src/app.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <expected>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ringlab/bench/app/plan.hpp"
#include "ringlab/bench/core/list.hpp"
#include "commands.hpp"

namespace ringlab::bench::app {

// An option shown with its default in --help and refused outside [low, high]; `into` is filled when `app`
// is parsed and must outlive it.
template <class T, class Bound>
CLI::Option* add_ranged_option(CLI::App& app, std::string name, T& into, std::string help, Bound low, Bound high) {
  return app.add_option(std::move(name), into, std::move(help))->capture_default_str()->check(CLI::Range(low, high));
}
// The same for a duration given in whole milliseconds ("--request-timeout-ms 250").
inline CLI::Option* add_ranged_option(CLI::App& app, std::string name, std::chrono::milliseconds& into,
                                      std::string help, long long low_ms, long long high_ms) {
  return app
      .add_option_function<long long>(
          std::move(name), [&into](const long long& ms) { into = std::chrono::milliseconds(ms); }, std::move(help))
      ->default_str(std::to_string(into.count()))
      ->check(CLI::Range(low_ms, high_ms));
}

// An option that takes one of `choices` by its name (`name_of`), stored as the enum: shown in --help
// with the names and, when `show_default`, the current value's name as the default.
template <class Enum, class NameOf>
CLI::Option* add_choice_option(CLI::App& app, std::string name, Enum& into, std::string help,
                               std::initializer_list<Enum> choices, NameOf name_of, bool show_default = true) {
  std::vector<std::string> names;
  for (const Enum choice : choices) names.emplace_back(name_of(choice));
  std::vector<Enum> values(choices);
  CLI::Option* option = app.add_option_function<std::string>(
      std::move(name),
      [&into, names, values](const std::string& given) {
        for (std::size_t i = 0; i < names.size(); ++i) {
          if (names[i] == given) into = values[i];
        }
      },
      std::move(help));
  option->check(CLI::IsMember(names));
  if (show_default) option->default_str(std::string(name_of(into)));
  return option;
}

// The same for a comma-separated list of choices, each at most once, in the order given; the default
// shown is the list `into` holds.
template <class Enum, class NameOf>
CLI::Option* add_choice_list_option(CLI::App& app, std::string name, std::vector<Enum>& into, std::string help,
                                    std::initializer_list<Enum> choices, NameOf name_of) {
  std::vector<std::string> names;
  for (const Enum choice : choices) names.emplace_back(name_of(choice));
  std::vector<Enum> values(choices);
  std::string shown;
  for (const Enum value : into) shown += (shown.empty() ? "" : ",") + std::string(name_of(value));
  // The names' positions in `given`, or the refusal: an unknown name, or one given twice.
  const auto positions = [names](std::string_view given) -> std::expected<std::vector<std::size_t>, std::string> {
    std::vector<std::size_t> out;
    for (const std::string_view item : split_list(given)) {
      const auto found = std::find(names.begin(), names.end(), item);
      if (found == names.end()) return std::unexpected("'" + std::string(item) + "' is not one of " + join(names, ","));
      const auto index = static_cast<std::size_t>(found - names.begin());
      if (std::find(out.begin(), out.end(), index) != out.end()) {
        return std::unexpected("'" + std::string(item) + "' given twice");
      }
      out.push_back(index);
    }
    return out;
  };
  CLI::Option* option = app.add_option_function<std::string>(
      std::move(name),
      [&into, values, positions](const std::string& given) {
        into.clear();
        if (const auto found = positions(given)) {  // always: the check below runs first
          for (const std::size_t i : *found) into.push_back(values[i]);
        }
      },
      std::move(help));
  option->check(
      [positions](const std::string& given) {
        auto checked = positions(given);
        return checked ? std::string() : checked.error();
      },
      join(names, ","));
  option->default_str(shown);
  return option;
}

// --server-cpu (the suite's and the load's): auto, none or a CPU number, refused at parse time otherwise.
inline CLI::Option* add_server_cpu_option(CLI::App& app, ServerCpu& into, std::string help) {
  CLI::Option* option = app.add_option_function<std::string>(
      "--server-cpu",
      [&into](const std::string& given) {
        if (auto parsed = ServerCpu::parse(given)) into = *parsed;  // always: the check below runs first
      },
      std::move(help));
  option->check(
      [](const std::string& given) {
        auto parsed = ServerCpu::parse(given);
        return parsed ? std::string() : parsed.error().message;
      },
      "auto, none or a CPU");
  option->default_str(into.text());
  return option;
}

// Every option of `app` after parsing, by its long flag, as text: the value given (several joined by
// commas), else the default --help shows (empty where it shows none); a flag "true" or "false". Hidden
// options (an allocator job's protocol), --help, --version and subcommands' options are left out. This is
// report.json's config.options: read from the parser, so an option added to a group's parser is recorded
// with no line of its own.
inline std::map<std::string, std::string> option_values(const CLI::App& app) {
  std::map<std::string, std::string> out;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group().empty() || option->get_lnames().empty()) continue;
    const std::string flag = "--" + option->get_lnames().front();
    if (flag == "--help" || flag == "--version") continue;
    if (option->get_expected_max() == 0) {  // a flag: given or not
      out[flag] = option->count() > 0 ? "true" : "false";
    } else if (option->count() == 0) {
      out[flag] = option->get_default_str();
    } else {
      out[flag] = join(option->results(), ",");
    }
  }
  return out;
}

}  // namespace ringlab::bench::app
