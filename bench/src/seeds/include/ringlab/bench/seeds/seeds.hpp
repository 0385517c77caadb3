#pragma once
// The seeds: the five .NET write-ups ringlab grew out of, as data (one Seed each, one SeedRow per method
// the write-up measured, with its published figures), the cases that measure them under the seeds'
// conditions, and the page that puts the write-ups' figures beside ringlab's (docs/seeds.md).
//
//   bench seeds                  every seed, one interleaved run each; writes docs/seeds.md
//   bench seeds --filter jos     one seed (the page is then written into the run's folder only)
//   bench report RUN             the page again from a seeds run's folder
//
// Lifetime: the seeds are constant data of the program (string literals, static arrays); a SeedCases
// or a SeedPage refers to them and to the registry's descriptors. Errors are values (Result). Threads:
// none of its own.
#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/core/results.hpp"
#include "ringlab/bench/run/runner.hpp"

namespace ringlab::bench::seeds {

inline constexpr double kNone = std::numeric_limits<double>::quiet_NaN();  // a figure the write-up does not give

// A published figure of a write-up that measured one size (Seed::sizes {n, 0, 0, 0}): the figure at that
// size, kNone at the unused ones.
constexpr std::array<double, 4> at_one_size(double figure) { return {figure, kNone, kNone, kNone}; }

// One method of a seed, measured by one ringlab strategy under the seed's conditions.
struct SeedRow {
  std::string_view method = {};    // as the seed names it: "GetStreamAsync", "Version 9"
  std::string_view strategy = {};  // the ringlab strategy that does what the method does with the bytes
  // More of the case's conditions, as the plan's fields (bench's --client and --connection): the whole
  // client built per request, or a new connection per request. A fresh client opens its own connection,
  // so the two fresh together are refused (seed_cases).
  strategies::Client client = strategies::Client::pooled;
  strategies::Connection connection = strategies::Connection::pooled;
  // The write-up's Ratio (time against its own first row) and Alloc Ratio, per size in Seed::sizes'
  // order; kNone where it gives none.
  std::array<double, 4> published_ratio{kNone, kNone, kNone, kNone};
  // The write-up's spread of that Ratio, per size: its RatioSD (ScaledSD in BenchmarkDotNet 0.10) as
  // printed; where it prints none, its StdDev of the row's time over the baseline row's Mean, computed
  // from the published columns. kNone where it publishes no spread at all.
  std::array<double, 4> published_ratio_sd{kNone, kNone, kNone, kNone};
  std::array<double, 4> published_alloc_ratio{kNone, kNone, kNone, kNone};
  // The row does more than the seed's method did (models reused across requests, a parse in place):
  // marked on the page, and left out of the seed-against-ringlab order.
  bool beyond_seed = false;
  std::string_view same = {};     // what the ringlab row does as the method did
  std::string_view differs = {};  // what it does differently, and why
  // The method (of the same seed) this row is read against besides the seed's first row, where the
  // write-up's point is a comparison with it (jos's Version 10, another library, against Version 9);
  // empty: the first row only.
  std::string_view compared_with = {};
};

// One write-up. Its first row is its baseline: ratios are against it, as the write-up's are.
struct Seed {
  std::string_view name = {};    // "nikouu": bench seeds --filter takes it
  std::string_view title = {};   // "HttpClientBenchmarking (nikouu), .NET 8"
  std::string_view suite = {};   // the bench suite whose method and payload its cases use ("get", "echo")
  std::optional<strategies::Payload> payload = {};  // none: the suite's
  std::array<std::size_t, 4> sizes{};  // records (or cycles, or 1) per op, in the write-up's order; 0: unused
  std::string_view size_name = {};           // "records", "cycles", "object"
  std::string_view about = {};   // what the write-up measured, and how its published figures were derived
  // An emulated link for the seed's run (bench's --link SPEC and --link-leg); empty: loopback. A seed with a
  // link needs what --link needs (root, network namespaces): without it, its run is refused and the page
  // says so.
  std::string_view link = {};
  LinkLeg link_leg = LinkLeg::client;
  // Another seed whose run this one's figures come from (the same rows, another table of the write-up's
  // published figures): no run of its own. Empty: its own run.
  std::string_view shares_run_of = {};
  std::span<const SeedRow> rows = {};
};

// Every seed, in the page's order.
[[nodiscard]] std::span<const Seed> all_seeds();
[[nodiscard]] const Seed* find_seed(std::string_view name);

// The sizes of a seed that are in use (Seed::sizes up to its first 0).
[[nodiscard]] std::vector<std::size_t> sizes_of(const Seed& seed);

// A row's conditions as bench's flags, for the page: "--client fresh", "--connection fresh", or empty.
[[nodiscard]] std::string row_flags(const SeedRow& row);

// The cases of one seed: one per distinct (strategy, client, connection) and size, rows that share all
// three share the case. Every case runs under the seed's conditions: the server serializes each answer
// and sends it as it goes (ServerMode::seed). An unregistered strategy, or a fresh client on a fresh
// connection, is an error.
struct SeedCases {
  std::vector<CaseSpec> cases;
  // cases[row_case[size_index][row_index]] measures rows[row_index] at sizes_of(seed)[size_index].
  std::vector<std::vector<std::size_t>> row_case;
};
[[nodiscard]] Result<SeedCases> seed_cases(const Seed& seed, std::span<const strategies::Descriptor> registry);

// A seed and the report of its run (Report::config.suite is "seed-<name>").
struct SeedRun {
  const Seed* seed = nullptr;
  const Report* report = nullptr;  // null: the seed was not run here (not_run says why)
  std::string not_run;
};
// The suite name a seed's report carries, and the seed a report belongs to (null: not a seed's report).
[[nodiscard]] std::string seed_suite_name(const Seed& seed);
[[nodiscard]] const Seed* seed_of(const Report& report);

// How a write-up itself orders two of its rows at one size, from their published Ratios and spreads
// (SeedRow::published_ratio and published_ratio_sd). Both are compared as the write-up prints them, in
// whole hundredths: the rows are separated only where their Ratios differ by more than 2 hundredths
// (1.00 against 0.98 is a tie) and by more than the sum of their two spreads, where the write-up
// publishes one (a kNone spread adds nothing); otherwise they are a tie.
enum class PublishedOrder { tie, first_faster, second_faster };
[[nodiscard]] PublishedOrder published_order(double ratio_a, double spread_a, double ratio_b, double spread_b);

// docs/seeds.md: the conditions, then per seed the mapping (method -> strategy and flags, what is the
// same, what differs), the table of the write-up's figures (Ratio, its spread, Alloc Ratio) beside
// ringlab's (Ratio with its 95 % interval, paired by round against the seed's baseline row; Alloc
// Ratio), and the generated sentences on whether ringlab orders the methods as the write-up did: per
// pair of ringlab cases, counted once however many of the seed's methods share each case, the
// write-up's order (published_order, which every pair of methods across the two cases must agree on)
// against ringlab's 95 % intervals. `page_command`: how the page was made.
[[nodiscard]] std::string render_seeds_page(std::span<const SeedRun> runs, std::string_view page_command);

}  // namespace ringlab::bench::seeds
