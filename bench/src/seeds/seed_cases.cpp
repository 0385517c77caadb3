// The seeds' cases: the rows of a seed as CaseSpecs under the seeds' conditions (seeds.hpp).
#include <algorithm>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "ringlab/bench/run/suites.hpp"
#include "ringlab/bench/seeds/seeds.hpp"

namespace ringlab::bench::seeds {

std::vector<std::size_t> sizes_of(const Seed& seed) {
  std::vector<std::size_t> sizes;
  for (const std::size_t size : seed.sizes) {
    if (size == 0) break;
    sizes.push_back(size);
  }
  return sizes;
}

std::string row_flags(const SeedRow& row) {
  std::string flags;
  if (row.client == strategies::Client::fresh) flags = "--client fresh";
  if (row.connection == strategies::Connection::fresh) {
    flags += fmt::format("{}--connection fresh", flags.empty() ? "" : " ");
  }
  return flags;
}

Result<SeedCases> seed_cases(const Seed& seed, std::span<const strategies::Descriptor> registry) {
  const Suite* suite = find_suite(seed.suite);
  if (suite == nullptr) return fail(fmt::format("seed {}: no suite {}", seed.name, seed.suite));
  const strategies::Payload payload = seed.payload.value_or(suite->payload);
  if (seed.rows.empty()) return fail(fmt::format("seed {}: no rows", seed.name));
  const std::vector<std::size_t> sizes = sizes_of(seed);
  if (sizes.empty()) return fail(fmt::format("seed {}: no sizes", seed.name));
  SeedCases out;
  for (const std::size_t size : sizes) {
    std::vector<std::size_t>& row_case = out.row_case.emplace_back();
    // (strategy, client, connection) of the cases of this size, in the order first named.
    std::vector<std::tuple<std::string_view, strategies::Client, strategies::Connection>> made;
    const std::size_t first_of_size = out.cases.size();
    for (const SeedRow& row : seed.rows) {
      const auto same = std::find(made.begin(), made.end(), std::tuple{row.strategy, row.client, row.connection});
      if (same != made.end()) {
        row_case.push_back(first_of_size + static_cast<std::size_t>(same - made.begin()));
        continue;
      }
      const auto descriptor = std::find_if(registry.begin(), registry.end(), [&](const strategies::Descriptor& d) {
        return d.name == row.strategy && d.method == suite->method;
      });
      if (descriptor == registry.end()) {
        return fail(fmt::format("seed {}: {} names {}, which is no strategy of suite {}", seed.name, row.method,
                                row.strategy, suite->name));
      }
      if (row.client == strategies::Client::fresh && row.connection == strategies::Connection::fresh) {
        return fail(fmt::format("seed {}: {}: a fresh client opens its own connection: not with a fresh connection",
                                seed.name, row.method));
      }
      CaseSpec spec;
      spec.strategy = &*descriptor;
      spec.config.payload = payload;
      spec.config.count = size;
      spec.config.server_mode = strategies::ServerMode::seed;
      spec.config.connection = row.connection;
      spec.config.client = row.client;
      row_case.push_back(out.cases.size());
      made.emplace_back(row.strategy, row.client, row.connection);
      out.cases.push_back(std::move(spec));
    }
  }
  return out;
}

std::string seed_suite_name(const Seed& seed) { return "seed-" + std::string(seed.name); }

const Seed* seed_of(const Report& report) {
  for (const Seed& seed : all_seeds()) {
    if (report.config.suite == seed_suite_name(seed)) return &seed;
  }
  return nullptr;
}

const Seed* find_seed(std::string_view name) {
  for (const Seed& seed : all_seeds()) {
    if (seed.name == name) return &seed;
  }
  return nullptr;
}

}  // namespace ringlab::bench::seeds
