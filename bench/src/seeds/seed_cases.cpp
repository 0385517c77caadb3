// The seeds' cases: the rows of a seed as CaseSpecs under the seeds' conditions (seeds.hpp).
#include <algorithm>
#include <string>

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

Result<RowConditions> parse_row_flags(std::string_view flags) {
  RowConditions conditions;
  std::vector<std::string_view> words;
  std::size_t pos = 0;
  while (pos < flags.size()) {
    const std::size_t start = flags.find_first_not_of(' ', pos);
    if (start == std::string_view::npos) break;
    std::size_t end = flags.find(' ', start);
    if (end == std::string_view::npos) end = flags.size();
    words.push_back(flags.substr(start, end - start));
    pos = end;
  }
  for (std::size_t i = 0; i < words.size(); i += 2) {
    if (i + 1 >= words.size()) return fail(fmt::format("row flags '{}': {} needs a value", flags, words[i]));
    const std::string_view flag = words[i];
    const std::string_view value = words[i + 1];
    if (flag == "--connection") {
      const auto connection = strategies::parse_connection(value);
      if (!connection) return fail(fmt::format("row flags '{}': --connection {} is neither pooled nor fresh", flags, value));
      conditions.connection = *connection;
      if (conditions.fresh_client && conditions.connection == strategies::Connection::fresh) {
        return fail(fmt::format("row flags '{}': a fresh client opens its own connection: not with --connection fresh",
                                flags));
      }
    } else if (flag == "--client") {
      if (value != "pooled" && value != "fresh") {
        return fail(fmt::format("row flags '{}': --client {} is neither pooled nor fresh", flags, value));
      }
      conditions.fresh_client = value == "fresh";
      if (conditions.fresh_client && conditions.connection == strategies::Connection::fresh) {
        return fail(fmt::format("row flags '{}': a fresh client opens its own connection: not with --connection fresh",
                                flags));
      }
    } else {
      return fail(fmt::format("row flags '{}': {} is not a condition a seed row may set", flags, flag));
    }
  }
  return conditions;
}

Result<SeedCases> seed_cases(const Seed& seed, std::span<const strategies::Descriptor> registry) {
  const Suite* suite = find_suite(seed.suite);
  if (suite == nullptr) return fail(fmt::format("seed {}: no suite {}", seed.name, seed.suite));
  strategies::Payload payload = suite->payload;
  if (!seed.payload.empty()) {
    const auto parsed = strategies::parse_payload(seed.payload);
    if (!parsed) return fail(fmt::format("seed {}: no payload {}", seed.name, seed.payload));
    payload = *parsed;
  }
  if (seed.rows.empty()) return fail(fmt::format("seed {}: no rows", seed.name));
  const std::vector<std::size_t> sizes = sizes_of(seed);
  if (sizes.empty()) return fail(fmt::format("seed {}: no sizes", seed.name));
  SeedCases out;
  for (const std::size_t size : sizes) {
    std::vector<std::size_t>& row_case = out.row_case.emplace_back();
    // (strategy, flags) of the cases of this size, in the order first named.
    std::vector<std::pair<std::string_view, std::string_view>> made;
    const std::size_t first_of_size = out.cases.size();
    for (const SeedRow& row : seed.rows) {
      const auto same = std::find(made.begin(), made.end(), std::pair{row.strategy, row.flags});
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
      auto conditions = parse_row_flags(row.flags);
      if (!conditions) return fail(fmt::format("seed {}: {}: {}", seed.name, row.method, conditions.error().message));
      CaseSpec spec;
      spec.strategy = &*descriptor;
      spec.config.payload = payload;
      spec.config.count = size;
      spec.config.server_mode = strategies::ServerMode::seed;
      spec.config.connection = conditions->connection;
      if (conditions->fresh_client) spec.config.client = strategies::Client::fresh;
      row_case.push_back(out.cases.size());
      made.emplace_back(row.strategy, row.flags);
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
