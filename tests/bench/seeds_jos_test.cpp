// bench/src/seeds/jos.hpp: jos's tables as data for the seeds page. One row per Version, 0 to 10, named as
// his tables name them; every row names a registered strategy that reads his payload and is in the jos
// suite; his figures as published (spot-checked against his README), the allocation ratios computed from
// them; his spreads as printed; Version 10 read against Version 9, its mapping stating both tables' figures.
#include "seeds/jos.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "ringlab/bench/run/suites.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace rb = ringlab::bench;
namespace rs = ringlab::strategies;
namespace seeds = ringlab::bench::seeds;

TEST_CASE("jos's table: Version 0 to Version 10, each a registered strategy of the jos suite that reads his DTO") {
  const rb::Suite* suite = rb::find_suite("jos");
  REQUIRE(suite != nullptr);
  CHECK(suite->payload == rs::Payload::profiles);
  CHECK(std::equal(suite->sizes.begin(), suite->sizes.end(), seeds::kJosSizes.begin(), seeds::kJosSizes.end()));
  const auto figures_of = [](const auto* table) {
    return table == &seeds::kJosGetAllProjectsQuery ? &seeds::kJosGetAllProjectsQueryFigures
                                                    : &seeds::kJosHttpClientBenchmarkFigures;
  };
  for (const auto* table : {&seeds::kJosGetAllProjectsQuery, &seeds::kJosHttpClientBenchmark}) {
    REQUIRE(table->size() == 11);
    const auto& figures = *figures_of(table);
    for (std::size_t v = 0; v < table->size(); ++v) {
      const seeds::SeedRow& row = (*table)[v];
      INFO(row.method);
      CHECK(row.method == "Version " + std::to_string(v));
      const rs::Descriptor* strategy = rs::find(row.strategy);
      REQUIRE(strategy != nullptr);
      CHECK(strategy->method == rs::Method::get);
      rs::CaseConfig config;
      config.payload = rs::Payload::profiles;
      CHECK_FALSE(strategy->make()->skip_case(config).has_value());
      CHECK(std::find(suite->strategies.begin(), suite->strategies.end(), row.strategy) != suite->strategies.end());
      CHECK(row.connection == ringlab::strategies::Connection::pooled);
      CHECK((row.compared_with.empty() || row.compared_with == "Version 9"));
      CHECK_FALSE(row.same.empty());
      CHECK_FALSE(row.differs.empty());
      CHECK_FALSE(row.beyond_seed);  // every row makes fresh objects, as his Versions do
      for (std::size_t s = 0; s < seeds::kJosSizes.size(); ++s) {
        CHECK_FALSE(std::isnan(row.published_ratio[s]));  // his tables have every figure
        CHECK(row.published_alloc_ratio[s] ==
              doctest::Approx(figures[v].allocated_kb[s] / figures[0].allocated_kb[s]));
      }
    }
    // Versions 0 and 1 build a whole client per request; 2 to 5 keep one, and are one row.
    CHECK((*table)[0].client == ringlab::strategies::Client::fresh);
    CHECK((*table)[1].client == ringlab::strategies::Client::fresh);
    for (std::size_t v = 2; v <= 5; ++v) CHECK((*table)[v].strategy == (*table)[2].strategy);
    CHECK((*table)[8].strategy == "token_loop");
    CHECK((*table)[10].strategy == "rapidjson_fresh");
    CHECK((*table)[10].compared_with == "Version 9");
    CHECK((*table)[0].published_alloc_ratio == std::array<double, 4>{1, 1, 1, 1});
  }
  // Spot checks against his README (2020-08-11).
  const auto& query = seeds::kJosGetAllProjectsQuery;
  CHECK(query[10].published_ratio == std::array<double, 4>{0.96, 0.95, 0.78, 0.69});
  const auto& query_figures = seeds::kJosGetAllProjectsQueryFigures;
  CHECK(query_figures[9].mean_ms[3] == 137.5);
  CHECK(query_figures[9].allocated_kb[3] == doctest::Approx(2.19 * 1024));
  CHECK(query[3].published_ratio[1] == 1.89);
  const auto& client = seeds::kJosHttpClientBenchmark;
  CHECK(client[8].published_ratio == std::array<double, 4>{0.94, 0.85, 0.90, 0.85});
  CHECK(seeds::kJosHttpClientBenchmarkFigures[10].allocated_kb[0] == 5.57);
  // His spreads as printed: RatioSD where his table has the column, StdDev over Version 0's Mean at 10,000.
  CHECK(query[5].published_ratio_sd[1] == 0.31);
  CHECK(client[5].published_ratio_sd[2] == 0.08);
  CHECK(query_figures[3].stddev_ms[1] == 3.1137);
  CHECK(std::isnan(query_figures[3].ratio_sd[3]));
  CHECK(query[3].published_ratio_sd[3] == doctest::Approx(0.91 / 204.4));
  CHECK(client[0].published_ratio_sd == std::array<double, 4>{0.00, 0.00, 0.00, 1.01 / 201.7});
}

TEST_CASE("Version 10's mapping states its time against Version 9 as both of his tables give it") {
  // "lo-hi" of a quotient per size, rounded to two places as the page prints it.
  const auto range = [](const auto& of_size) {
    double lo = 1e9, hi = 0;
    for (std::size_t s = 0; s < seeds::kJosSizes.size(); ++s) {
      lo = std::min(lo, of_size(s));
      hi = std::max(hi, of_size(s));
    }
    return fmt::format("{:.2f}-{:.2f}", lo, hi);
  };
  const auto& client = seeds::kJosHttpClientBenchmarkFigures;
  const auto& query = seeds::kJosGetAllProjectsQueryFigures;
  const std::string client_mean = range([&](std::size_t s) { return client[10].mean_ms[s] / client[9].mean_ms[s]; });
  const std::string query_mean = range([&](std::size_t s) { return query[10].mean_ms[s] / query[9].mean_ms[s]; });
  const std::string client_ratio = range([&](std::size_t s) { return client[10].ratio[s] / client[9].ratio[s]; });
  const std::string query_ratio = range([&](std::size_t s) { return query[10].ratio[s] / query[9].ratio[s]; });
  CHECK(client_mean == "0.90-1.01");
  CHECK(query_mean == "0.93-1.02");
  CHECK(client_ratio == "0.86-1.01");
  CHECK(query_ratio == "0.93-1.03");
  const std::string same(seeds::kJosMapping[10].same);
  INFO(same);
  CHECK(same.find("his Mean is " + client_mean + " of V9's in HttpClientBenchmark and " + query_mean +
                  " in GetAllProjectsQuery") != std::string::npos);
  CHECK(same.find("the quotients of his Ratios, which the page shows, are " + client_ratio + " and " + query_ratio) !=
        std::string::npos);
}
