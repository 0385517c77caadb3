// The seeds (bench/src/seeds): every seed's table names registered strategies and valid flags, the cases
// share what the rows share, and the page's figures and verdicts are computed from a report whose numbers
// are known: the write-up's order by its printed hundredths and published spreads, one count per pair of
// ringlab cases, and the page's statements about the write-ups as their texts have them.
#include "ringlab/bench/seeds/seeds.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ringlab/link/spec.hpp"
#include "seeds/typed_vs_manual.hpp"
#include "ringlab/strategies/strategy.hpp"
#include "text_checks.hpp"

namespace rb = ringlab::bench;
namespace rs = ringlab::bench::seeds;
using ringlab::bench::testing::check_contains;

namespace {

// A report case: `n` rounds of `ns` each, scaled per round by `wobble` so the paired interval is narrow.
rb::CaseResult measured(std::string strategy, std::size_t size, double ns, double bytes, std::string connection = "pooled") {
  rb::CaseResult c;
  c.strategy = std::move(strategy);
  c.payload = "weather";
  c.size = size;
  c.connection = std::move(connection);
  c.server_mode = "seed";
  for (int round = 0; round < 30; ++round) c.samples_ns.push_back(ns * (1.0 + 0.01 * ((round * 7) % 5)));
  c.stats.median = ns;
  c.memory.bytes_per_op = bytes;
  c.memory.minor_faults_per_op = 0.5;
  return c;
}

constexpr std::array kRows{
    rs::SeedRow{.method = "Baseline", .strategy = "string_copy", .published_ratio = {1.00, 1.00},
                .published_alloc_ratio = {1.00, 1.00}, .same = "the body as a string", .differs = "none"},
    rs::SeedRow{.method = "Faster", .strategy = "presized", .published_ratio = {0.90, 0.70},
                .published_alloc_ratio = {0.50, 0.13}, .same = "read in place", .differs = "none"},
    rs::SeedRow{.method = "Reconnecting", .strategy = "presized", .connection = ringlab::strategies::Connection::fresh,
                .published_ratio = {1.50, 1.20}, .same = "a new connection", .differs = "none"},
    rs::SeedRow{.method = "Reused models", .strategy = "views", .beyond_seed = true, .same = "-", .differs = "-"},
    rs::SeedRow{.method = "New client", .strategy = "presized", .client = ringlab::strategies::Client::fresh,
                .same = "-", .differs = "-"},
};
const rs::Seed kSeed{.name = "test", .title = "A test write-up", .suite = "get", .sizes = {10, 1000},
                     .size_name = "records", .about = "Two sizes.", .rows = kRows};

}  // namespace

TEST_CASE("every seed's rows name registered strategies of its suite and flags a row may set") {
  REQUIRE(!rs::all_seeds().empty());
  for (const rs::Seed& seed : rs::all_seeds()) {
    CAPTURE(seed.name);
    CHECK(rs::find_seed(seed.name) == &seed);
    const auto cases = rs::seed_cases(seed, ringlab::strategies::registry());
    REQUIRE_MESSAGE(cases.has_value(), (cases ? std::string() : cases.error().message));
    CHECK(cases->row_case.size() == rs::sizes_of(seed).size());
    if (!seed.link.empty()) {
      CHECK(ringlab::link::parse_link_spec(seed.link).has_value());
    }
    for (const rb::CaseSpec& spec : cases->cases) {
      CHECK(spec.config.server_mode == ringlab::strategies::ServerMode::seed);
    }
  }
}

TEST_CASE("rows of the same strategy and flags share a case; other flags make another") {
  const auto cases = rs::seed_cases(kSeed, ringlab::strategies::registry());
  REQUIRE(cases.has_value());
  // Per size: string_copy, presized, presized reconnecting, views, presized with a new client.
  REQUIRE(cases->cases.size() == 10);
  CHECK(cases->row_case[0] == std::vector<std::size_t>{0, 1, 2, 3, 4});
  CHECK(cases->row_case[1] == std::vector<std::size_t>{5, 6, 7, 8, 9});
  CHECK(cases->cases[2].config.connection == ringlab::strategies::Connection::fresh);
  CHECK(cases->cases[2].config.client == ringlab::strategies::Client::pooled);
  CHECK(cases->cases[4].config.client == ringlab::strategies::Client::fresh);
  CHECK(cases->cases[6].config.count == 1000);

  constexpr std::array kTwice{
      rs::SeedRow{.method = "A", .strategy = "string_copy"},
      rs::SeedRow{.method = "B", .strategy = "string_copy"},
  };
  const rs::Seed twice{.name = "twice", .suite = "get", .sizes = {10}, .rows = kTwice};
  const auto shared = rs::seed_cases(twice, ringlab::strategies::registry());
  REQUIRE(shared.has_value());
  CHECK(shared->cases.size() == 1);
  CHECK(shared->row_case[0] == std::vector<std::size_t>{0, 0});
}

TEST_CASE("a seed table with an unknown strategy, a strategy of another method or a fresh client on a fresh connection is an error") {
  constexpr std::array kUnknown{rs::SeedRow{.method = "A", .strategy = "no_such_strategy"}};
  constexpr std::array kPost{rs::SeedRow{.method = "A", .strategy = "send_copy"}};
  constexpr std::array kBothFresh{rs::SeedRow{.method = "A", .strategy = "string_copy",
                                              .client = ringlab::strategies::Client::fresh,
                                              .connection = ringlab::strategies::Connection::fresh}};
  for (std::span<const rs::SeedRow> rows : {std::span<const rs::SeedRow>(kUnknown), std::span<const rs::SeedRow>(kPost),
                                            std::span<const rs::SeedRow>(kBothFresh)}) {
    const rs::Seed seed{.name = "bad", .suite = "get", .sizes = {10}, .rows = rows};
    const auto cases = rs::seed_cases(seed, ringlab::strategies::registry());
    CHECK_FALSE(cases.has_value());
  }
  CHECK(rs::row_flags(rs::SeedRow{.client = ringlab::strategies::Client::fresh}) == "--client fresh");
  CHECK(rs::row_flags(rs::SeedRow{.connection = ringlab::strategies::Connection::fresh}) == "--connection fresh");
  CHECK(rs::row_flags(rs::SeedRow{}).empty());
  const rs::Seed unknown_suite{.name = "bad", .suite = "nope", .sizes = {10}, .rows = kRows};
  CHECK_FALSE(rs::seed_cases(unknown_suite, ringlab::strategies::registry()).has_value());
}

TEST_CASE("the page puts the published figures beside ratios paired against the seed's first row") {
  rb::Report report;
  report.config.suite = "seed-test";
  report.config.interleave = true;
  report.environment.git_commit = "0123456789abcdef";
  report.config.arguments = {"seeds"};
  // 10 records: presized faster than string_copy, reconnecting slower: the write-up's order.
  report.cases.push_back(measured("string_copy", 10, 1000, 4000));
  report.cases.push_back(measured("presized", 10, 800, 0));
  report.cases.push_back(measured("presized", 10, 1600, 0, "fresh"));
  report.cases.push_back(measured("views", 10, 700, 0));
  // 1000 records: reconnecting faster than presized, against the write-up (0.70 before 1.20).
  report.cases.push_back(measured("string_copy", 1000, 10000, 400000));
  report.cases.push_back(measured("presized", 1000, 9000, 0));
  report.cases.push_back(measured("presized", 1000, 6000, 0, "fresh"));
  report.cases.push_back(measured("views", 1000, 5000, 0));
  const std::array runs{rs::SeedRun{&kSeed, &report, {}}};
  const std::string page = rs::render_seeds_page(runs, "tools/bench report RUN");

  check_contains(page, {"`0123456789abcdef`", "| Command | `tools/bench seeds` |",
                        "| Faster | 10 | 0.90 | - | 0.80 |", "| Reconnecting | 10 | 1.50 | - | 1.60 |",
                        "| Baseline | 10 | 1.00 | - | 1.00 | - |",
                        "| Faster | 10 | 0.90 | - | 0.80 | 0.80-0.80 | 0.50 | 0.00 | 0 B |",
                        "| Reused models (beyond) | 1000 | - | - | 0.50 |", "`presized` `--connection fresh`",
                        // 10: three pairs the write-up separates, all in its order.
                        "- 10 records: the same order. The write-up's fastest is Faster (0.90), ringlab's Faster (0.80",
                        "ringlab orders 3 the same way, 0 the other way",
                        // 1000: Reconnecting is slowest in the write-up, fastest here (two pairs reversed); views
                        // (beyond) takes no part.
                        "- 1000 records: a different order.", "ringlab orders 1 the same way, 2 the other way",
                        "; Faster before Reconnecting (0.70 against 1.20 in the write-up, 0.90 against 0.60 here)"});
}

TEST_CASE("a row whose case is missing or failed shows no ringlab figure") {
  rb::Report report;
  report.config.suite = "seed-test";
  report.config.interleave = true;
  report.cases.push_back(measured("string_copy", 10, 1000, 4000));
  rb::CaseResult failed = measured("presized", 10, 800, 0);
  failed.status = rb::CaseStatus::failed;
  report.cases.push_back(failed);
  const std::array runs{rs::SeedRun{&kSeed, &report, {}}};
  const std::string page = rs::render_seeds_page(runs, "x");
  check_contains(page, {"| Faster | 10 | 0.90 | - | failed | - |", "| Reconnecting | 10 | 1.50 | - | - | - |",
                        "- 1000 records: too few rows with both figures to compare."});
  CHECK(rs::seed_of(report) == nullptr);  // kSeed is not one of all_seeds()
}

TEST_CASE("the write-up's own order: Ratios compared in printed hundredths, two hundredths apart a tie") {
  using rs::PublishedOrder;
  // 1.00 - 0.98 is 0.020000000000000018 as doubles: still exactly two hundredths, a tie.
  CHECK(rs::published_order(1.00, rs::kNone, 0.98, rs::kNone) == PublishedOrder::tie);
  CHECK(rs::published_order(0.98, rs::kNone, 1.00, rs::kNone) == PublishedOrder::tie);
  CHECK(rs::published_order(0.30, rs::kNone, 0.28, rs::kNone) == PublishedOrder::tie);
  CHECK(rs::published_order(1.00, rs::kNone, 1.00, rs::kNone) == PublishedOrder::tie);
  // Three hundredths are separated, either way round.
  CHECK(rs::published_order(1.00, rs::kNone, 0.97, rs::kNone) == PublishedOrder::second_faster);
  CHECK(rs::published_order(0.97, rs::kNone, 1.00, rs::kNone) == PublishedOrder::first_faster);
  // A computed ratio (typed over manual, 1.134) is read in the hundredths it would print in.
  CHECK(rs::published_order(1.0, rs::kNone, 3.858 / 3.402, rs::kNone) == PublishedOrder::first_faster);
  CHECK(rs::published_order(rs::kNone, rs::kNone, 0.50, rs::kNone) == PublishedOrder::tie);
}

TEST_CASE("the write-up separates two rows only beyond the sum of their published spreads") {
  using rs::PublishedOrder;
  // nikouu at 1,000 records: GetStringAsync 1.11 (RatioSD 0.12) against the baseline 1.00 (0.00) is a tie,
  // against GetStreamAsync 0.78 (0.01) it is separated.
  CHECK(rs::published_order(1.11, 0.12, 1.00, 0.00) == PublishedOrder::tie);
  CHECK(rs::published_order(0.78, 0.01, 1.11, 0.12) == PublishedOrder::first_faster);
  // A gap equal to the spreads' sum is not beyond it; one hundredth more is.
  CHECK(rs::published_order(1.10, 0.05, 1.00, 0.05) == PublishedOrder::tie);
  CHECK(rs::published_order(1.11, 0.05, 1.00, 0.05) == PublishedOrder::second_faster);
  // A spread the write-up does not publish adds nothing.
  CHECK(rs::published_order(1.10, rs::kNone, 1.00, 0.09) == PublishedOrder::second_faster);

  // The seeds' own rows. nikouu: the stream methods against GetStringAsync at 1,000 records.
  const rs::Seed* nikouu = rs::find_seed("nikouu");
  REQUIRE(nikouu != nullptr);
  const auto row_of = [](const rs::Seed& seed, std::string_view method) {
    for (const rs::SeedRow& row : seed.rows) {
      if (row.method == method && !row.beyond_seed) return &row;
    }
    FAIL("no row " << method);
    return static_cast<const rs::SeedRow*>(nullptr);
  };
  const auto order = [](const rs::SeedRow* a, const rs::SeedRow* b, std::size_t s) {
    return rs::published_order(a->published_ratio[s], a->published_ratio_sd[s], b->published_ratio[s],
                               b->published_ratio_sd[s]);
  };
  const rs::SeedRow* get_string = row_of(*nikouu, "GetStringAsync");
  CHECK(get_string->published_ratio_sd == std::array<double, 4>{0.02, 0.01, 0.12, 0.04});
  CHECK(order(&nikouu->rows.front(), get_string, 2) == PublishedOrder::tie);
  CHECK(order(row_of(*nikouu, "GetStreamAsync"), get_string, 2) == PublishedOrder::first_faster);
  // jos's GetAllProjectsQuery at 100 items: Version 3 (1.89, RatioSD 0.13) against Version 5 (1.73, 0.31) is a
  // tie; against Version 0 it is separated.
  const rs::Seed* query = rs::find_seed("jos-query");
  REQUIRE(query != nullptr);
  CHECK(order(row_of(*query, "Version 3"), row_of(*query, "Version 5"), 1) == PublishedOrder::tie);
  CHECK(order(row_of(*query, "Version 3"), row_of(*query, "Version 0"), 1) == PublishedOrder::second_faster);
  // The article's typed and manual clients: its StdDevs over manual's Mean (0.12-0.40) hold every cycle count
  // a tie, as the article concludes.
  const rs::Seed* typed = rs::find_seed("typed");
  REQUIRE(typed != nullptr);
  for (std::size_t s = 0; s < 3; ++s) CHECK(order(&typed->rows[0], &typed->rows[1], s) == PublishedOrder::tie);
  // net-http-perf on .NET Core 2.0: the two HttpWebRequest rows (4.98 and 4.74, ScaledSD 0.31 and 0.29) are a
  // tie; HttpClient from netstandard2.0 (1.35, 0.11) is separated from net461's (1.00).
  const rs::Seed* perf = rs::find_seed("net-http-perf");
  REQUIRE(perf != nullptr);
  CHECK(order(&perf->rows[1], &perf->rows[3], 0) == PublishedOrder::tie);
  CHECK(order(&perf->rows[0], &perf->rows[2], 0) == PublishedOrder::first_faster);
}

TEST_CASE("methods that share one ringlab case count once per pair of cases") {
  // Two methods on string_copy, three on presized: six pairs of methods across the cases, one pair of cases.
  constexpr std::array kShared{
      rs::SeedRow{.method = "Baseline", .strategy = "string_copy", .published_ratio = {1.00, 1.00},
                  .published_ratio_sd = {0.00, 0.00}, .same = "-", .differs = "-"},
      rs::SeedRow{.method = "Buffered", .strategy = "string_copy", .published_ratio = {0.98, 0.98},
                  .published_ratio_sd = {0.02, 0.02}, .same = "-", .differs = "-"},
      rs::SeedRow{.method = "StreamA", .strategy = "presized", .published_ratio = {0.70, 1.10},
                  .published_ratio_sd = {0.03, 0.01}, .same = "-", .differs = "-"},
      rs::SeedRow{.method = "StreamB", .strategy = "presized", .published_ratio = {0.71, 0.90},
                  .published_ratio_sd = {0.03, 0.01}, .same = "-", .differs = "-"},
      rs::SeedRow{.method = "StreamC", .strategy = "presized", .published_ratio = {0.70, 0.70},
                  .published_ratio_sd = {0.03, 0.01}, .same = "-", .differs = "-"},
  };
  const rs::Seed shared{.name = "shared", .title = "Shared cases", .suite = "get", .sizes = {10, 1000},
                        .size_name = "records", .about = "-", .rows = kShared};
  rb::Report report;
  report.config.suite = "seed-shared";
  report.config.interleave = true;
  report.cases.push_back(measured("string_copy", 10, 1000, 4000));
  report.cases.push_back(measured("presized", 10, 1400, 0));
  report.cases.push_back(measured("string_copy", 1000, 1000, 4000));
  report.cases.push_back(measured("presized", 1000, 1400, 0));
  const std::array runs{rs::SeedRun{&shared, &report, {}}};
  const std::string page = rs::render_seeds_page(runs, "x");
  INFO(page);
  // 10: every method on presized is faster than every one on string_copy in the write-up, slower here: one
  // reversal, not six; the pairs within a case (one on string_copy, three on presized) are not ordered.
  check_contains(page, {"| StreamB | 10 | 0.71 | 0.03 | 1.40 |", "- 10 records: a different order.",
                        "Of the 1 pair(s) of ringlab cases the write-up separates, ringlab orders 0 the same way, 1 the "
                        "other way and 0 within its 95 % intervals; the write-up does not separate 0 pair(s) of cases; 4 "
                        "pair(s) of its methods share one ringlab case.",
                        "Reversed: StreamA and 2 more before Baseline and 1 more (0.70-0.71 against 0.98-1.00 in the "
                        "write-up, 1.40 against 1.00 here).",
                        // 1000: presized's methods fall on both sides of string_copy's in the write-up: it cannot
                        // separate the cases.
                        "- 1000 records: nothing to order: the write-up separates no two of ringlab's cases.",
                        "the write-up does not separate 1 pair(s) of cases; 4 pair(s)"});
}

TEST_CASE("the page's statements about the write-ups say what their texts say") {
  std::vector<rs::SeedRun> runs;
  for (const rs::Seed& seed : rs::all_seeds()) runs.push_back({&seed, nullptr, "not run in this test"});
  const std::string page = rs::render_seeds_page(runs, "x");
  // Every write-up ran its client and its server on one machine.
  CHECK(page.find("crossed a real network stack") == std::string::npos);
  check_contains(page, {"The write-ups ran client and\n  server on one machine too",
                        "net-http-perf's run script starts its reflector on 127.0.0.1",
                        "(where that endpoint's upstream ran, the article\n  does not say)"});
  // The article's time per request at each cycle count, from its Means.
  namespace tvm = rs::typed_vs_manual;
  const std::array<double, 3> cycles{10, 50, 100};
  const auto per_request_ms = [&](const std::array<double, 3>& mean) {
    return fmt::format("{:.0f}, {:.0f} and {:.0f} ms", mean[0] / cycles[0] * 1e3, mean[1] / cycles[1] * 1e3,
                       mean[2] / cycles[2] * 1e3);
  };
  CHECK(per_request_ms(tvm::kManualMean) == "340, 575 and 177 ms");
  CHECK(page.find("per request its Means are " + per_request_ms(tvm::kManualMean) + " (manual) and " +
                  per_request_ms(tvm::kTypedMean) + " (typed)") != std::string::npos);
  CHECK(page.find("about 340 ms") == std::string::npos);
  // How orders are counted is stated once, for every seed.
  CHECK(page.find("differ by more than 2 (1.00 against 0.98 is a tie) and by more than the sum of the\n  two rows' "
                  "published spreads") != std::string::npos);
}
