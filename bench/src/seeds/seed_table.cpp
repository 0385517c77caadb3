// The seeds in the page's order (seeds.hpp): each write-up's rows are in a header of its own.
#include <array>

#include "ringlab/bench/seeds/seeds.hpp"
#include "typed_vs_manual.hpp"

namespace ringlab::bench::seeds {
namespace {

constexpr std::array kNetHttpPerfRows{
    SeedRow{.method = "HttpClient", .strategy = "echo", .published_ratio = {1.00, kNone, kNone, kNone},
            .published_alloc_ratio = {1.00, kNone, kNone, kNone}, .same = "one client", .differs = "-"},
    SeedRow{.method = "HttpWebRequest", .strategy = "echo_fresh", .published_ratio = {4.74, kNone, kNone, kNone},
            .published_alloc_ratio = {7.04, kNone, kNone, kNone}, .same = "a new connection", .differs = "-"},
};

constexpr std::string_view kTypedAbout =
    "ASP.NET Core with IHttpClientFactory: N sequential GETs (10, 50 and 100 cycles) of an endpoint that calls its "
    "upstream through a typed or a manual client and answers with the status. The article publishes Mean and "
    "Allocated only (about 340 ms per request: its upstream was remote); the seed's ratios are computed from them, "
    "typed over manual.";

constexpr std::array kSeeds{
    Seed{.name = "net-http-perf", .title = "net-http-perf (joncloud)", .suite = "echo", .sizes = {1, 0, 0, 0},
         .size_name = "object", .about = "echo", .rows = kNetHttpPerfRows},
    Seed{.name = "typed", .title = "Typed versus manual client (the article), over loopback", .suite = "proxy",
         .sizes = {10, 50, 100, 0}, .size_name = "cycles", .about = kTypedAbout, .rows = typed_vs_manual::kRows},
    // The article's upstream was remote: the same rows with 20 ms of round trip and 100 Mbit/s between the
    // server and its upstream, client and server on loopback.
    Seed{.name = "typed-wan", .title = "Typed versus manual client (the article), over an emulated WAN upstream",
         .suite = "proxy", .sizes = {10, 50, 100, 0}, .size_name = "cycles", .about = kTypedAbout,
         .link = "rate=100mbit,delay=10ms", .link_leg = "upstream", .rows = typed_vs_manual::kRows},
};

}  // namespace

std::span<const Seed> all_seeds() { return kSeeds; }

}  // namespace ringlab::bench::seeds
