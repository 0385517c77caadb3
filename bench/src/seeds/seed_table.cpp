// The seeds in the page's order (seeds.hpp).
#include <array>

#include "ringlab/bench/seeds/seeds.hpp"

namespace ringlab::bench::seeds {
namespace {

constexpr std::array kNetHttpPerfRows{
    SeedRow{.method = "HttpClient", .strategy = "echo", .published_ratio = {1.00, kNone, kNone, kNone},
            .published_alloc_ratio = {1.00, kNone, kNone, kNone}, .same = "one client", .differs = "-"},
    SeedRow{.method = "HttpWebRequest", .strategy = "echo_fresh", .published_ratio = {4.74, kNone, kNone, kNone},
            .published_alloc_ratio = {7.04, kNone, kNone, kNone}, .same = "a new connection", .differs = "-"},
};

constexpr std::array kSeeds{
    Seed{.name = "net-http-perf", .title = "net-http-perf (joncloud)", .suite = "echo", .sizes = {1, 0, 0, 0},
         .size_name = "object", .about = "echo", .rows = kNetHttpPerfRows},
};

}  // namespace

std::span<const Seed> all_seeds() { return kSeeds; }

}  // namespace ringlab::bench::seeds
