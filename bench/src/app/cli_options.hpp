#pragma once
// The shape most of bench's numeric options share (options.cpp, load_command.cpp). Internal to
// bench/src/app.
#include <CLI/CLI.hpp>

#include <chrono>
#include <string>
#include <utility>

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

}  // namespace ringlab::bench::app
