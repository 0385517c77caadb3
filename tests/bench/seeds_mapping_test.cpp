// bench/src/seeds: the mapping of the seeds' methods (nikouu's nine, the client-libraries seed's tables,
// net-http-perf's) onto ringlab's strategies is data the seeds page runs. What it must hold: every row
// names a registered strategy of the suite's method, the server mode and suite exist, each seed method
// has one faithful row (beyond_seed rows aside), the published figures sit where the seed has a size and
// nowhere else, and the baseline's own figures are 1.00.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "ringlab/bench/run/suites.hpp"
#include "ringlab/bench/seeds/seeds.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::bench::seeds {
namespace {

std::vector<const Seed*> every_seed() {
  std::vector<const Seed*> out;
  for (const Seed& seed : all_seeds()) out.push_back(&seed);
  return out;
}

std::size_t size_count(const Seed& seed) { return seeds::sizes_of(seed).size(); }

TEST_CASE("every seed row names a registered strategy of its suite's method, and the seed's conditions exist") {
  for (const Seed* seed : every_seed()) {
    INFO(seed->name);
    const Suite* suite = find_suite(seed->suite);
    REQUIRE(suite != nullptr);
    REQUIRE_FALSE(seed->rows.empty());
    for (const SeedRow& row : seed->rows) {
      INFO(row.method << " -> " << row.strategy);
      const strategies::Descriptor* descriptor = strategies::find(row.strategy);
      REQUIRE_MESSAGE(descriptor != nullptr, "not a registered strategy");
      CHECK(descriptor->method == suite->method);
      CHECK_FALSE(row.method.empty());
      CHECK_FALSE(row.same.empty());
      CHECK_FALSE(row.differs.empty());
      CHECK(row.connection == ringlab::strategies::Connection::pooled);
    }
  }
}

TEST_CASE("one faithful row per seed method; the baseline is one of them and its figures are 1.00") {
  for (const Seed* seed : every_seed()) {
    INFO(seed->name);
    std::set<std::string_view> methods;
    bool baseline_found = false;
    for (const SeedRow& row : seed->rows) {
      if (row.beyond_seed) continue;
      INFO(row.method);
      CHECK(methods.insert(row.method).second);
      if (&row != &seed->rows.front()) continue;
      baseline_found = true;
      for (std::size_t i = 0; i < size_count(*seed); ++i) {
        CHECK(row.published_ratio[i] == 1.00);
        CHECK(row.published_alloc_ratio[i] == 1.00);
      }
    }
    CHECK(baseline_found);
    // Beyond-seed rows extend a method the seed has.
    for (const SeedRow& row : seed->rows) {
      if (row.beyond_seed) CHECK(methods.contains(row.method));
    }
  }
  std::size_t nikouu_methods = 0;
  REQUIRE(find_seed("nikouu") != nullptr);
  for (const SeedRow& row : find_seed("nikouu")->rows) nikouu_methods += row.beyond_seed ? 0 : 1;
  CHECK(nikouu_methods == 9);
}

TEST_CASE("published figures where the seed has a size, and only there; none on the rows beyond the seed") {
  for (const Seed* seed : every_seed()) {
    INFO(seed->name);
    const std::size_t sizes = size_count(*seed);
    REQUIRE(sizes > 0);
    for (std::size_t i = sizes; i < seed->sizes.size(); ++i) CHECK(seed->sizes[i] == 0);
    const Suite* suite = find_suite(seed->suite);
    REQUIRE(suite != nullptr);
    if (suite->fixed_size) CHECK(seed->sizes[0] == suite->sizes.front());
    for (const SeedRow& row : seed->rows) {
      INFO(row.method << " -> " << row.strategy);
      for (std::size_t i = 0; i < seed->sizes.size(); ++i) {
        INFO("size slot " << i);
        const bool published = !row.beyond_seed && i < sizes;
        CHECK(std::isnan(row.published_ratio[i]) != published);
        CHECK(std::isnan(row.published_alloc_ratio[i]) != published);
        // Every write-up publishes a spread beside each Ratio (RatioSD, ScaledSD or StdDev).
        CHECK(std::isnan(row.published_ratio_sd[i]) != published);
        if (published) {
          CHECK(row.published_ratio[i] > 0);
          CHECK(row.published_alloc_ratio[i] > 0);
          CHECK(row.published_ratio_sd[i] >= 0);
        }
      }
    }
  }
}

TEST_CASE("the methods that built a new client per request run with --client fresh") {
  // .NET Core's HttpWebRequest (and WebClient, RestSharp 106 over it); never .NET Framework's.
  for (const Seed* seed : every_seed()) {
    INFO(seed->name);
    // The seeds whose clients are .NET's client classes (jos names his Versions, the article its clients).
    if (!seed->name.starts_with("client-libraries") && !seed->name.starts_with("net-http-perf")) continue;
    const bool framework = std::string_view(seed->title).find("Framework") != std::string_view::npos ||
                           std::string_view(seed->title).ends_with("App.Net461");
    for (const SeedRow& row : seed->rows) {
      if (row.beyond_seed) continue;
      INFO(row.method);
      const bool over_web_request = row.method.find("WebRequest") != std::string_view::npos ||
                                    row.method.find("WebClient") != std::string_view::npos ||
                                    row.method.find("RestSharp") != std::string_view::npos;
      CHECK((row.client == ringlab::strategies::Client::fresh) == (over_web_request && !framework));
    }
  }
}

}  // namespace
}  // namespace ringlab::bench::seeds
