#pragma once
// joncloud's net-http-perf: POST of {"lorem":"ipsum"} to a reflector that echoes the body back chunked, the
// answer read as a string, through HttpClient and HttpWebRequest. Each client is called from a library
// built for net461 and one built for netstandard2.0 (the Net461_ / NetStandard20_ prefixes); ringlab has
// one build, so each pair maps onto one row. The tables here are the Azure VM's (the write-up's first
// machine): the App.NetCoreApp20 job, its headline, where HttpWebRequest builds a new HttpClient for every
// request, and the App.Net461 job, where HttpWebRequest is .NET Framework's own stack over a pooled
// ServicePoint.
//
// Published: the Scaled and ScaledSD columns (BenchmarkDotNet 0.10's names for Ratio and RatioSD, against
// Net461_HttpClient) are copied as they are; there is no allocation ratio, so published_alloc_ratio is
// computed from the Allocated column against Net461_HttpClient's and rounded to two places.
#include <array>

#include "ringlab/bench/seeds/seeds.hpp"

namespace ringlab::bench::seeds {

inline constexpr std::string_view kEchoKept =
    "one client kept for the program's life, its connection kept alive; the chunked echo read into a fresh "
    "string, nothing deserialized";
inline constexpr std::string_view kEchoNewClient =
    "a new client for every request (.NET Core 2.0's HttpWebRequest builds a new HttpClient: handler, pool, "
    "connection); the chunked echo read into a fresh string";
inline constexpr std::string_view kAllocDerived =
    "Alloc Ratio computed from the seed's Allocated column against Net461_HttpClient (the seed prints none)";

// The first row of both tables: the one their ratios are taken against.
inline constexpr SeedRow kNet461HttpClient{.method = "Net461_HttpClient", .strategy = "echo",
                                           .published_ratio = at_one_size(1.00),
                                           .published_ratio_sd = at_one_size(0.00),
                                           .published_alloc_ratio = at_one_size(1.00),
                                           .same = kEchoKept, .differs = kAllocDerived};

inline constexpr std::array kNetHttpPerfCoreRows{
    kNet461HttpClient,
    SeedRow{.method = "Net461_HttpWebRequest", .strategy = "echo", .client = strategies::Client::fresh,
            .published_ratio = at_one_size(4.98), .published_ratio_sd = at_one_size(0.31),
            .published_alloc_ratio = at_one_size(7.04),
            .same = kEchoNewClient, .differs = kAllocDerived},
    SeedRow{.method = "NetStandard20_HttpClient", .strategy = "echo",
            .published_ratio = at_one_size(1.35), .published_ratio_sd = at_one_size(0.11),
            .published_alloc_ratio = at_one_size(1.00),
            .same = kEchoKept,
            .differs = "the same row as Net461_HttpClient: ringlab has one build, not a net461 and a netstandard2.0 "
                       "library; Alloc Ratio computed from the seed's Allocated column"},
    SeedRow{.method = "NetStandard20_HttpWebRequest", .strategy = "echo", .client = strategies::Client::fresh,
            .published_ratio = at_one_size(4.74), .published_ratio_sd = at_one_size(0.29),
            .published_alloc_ratio = at_one_size(7.04),
            .same = kEchoNewClient,
            .differs = "the same row as Net461_HttpWebRequest: ringlab has one build; Alloc Ratio computed from "
                       "the seed's Allocated column"},
    SeedRow{.method = "Net461_HttpWebRequest", .strategy = "echo_fresh", .beyond_seed = true,
            .same = "a new connection for every request",
            .differs = "only the connection is new, the client is kept: what a new HttpClient costs beyond its "
                       "connection is left out"},
};

inline constexpr std::array kNetHttpPerfFrameworkRows{
    kNet461HttpClient,
    SeedRow{.method = "Net461_HttpWebRequest", .strategy = "echo",
            .published_ratio = at_one_size(0.92), .published_ratio_sd = at_one_size(0.06),
            .published_alloc_ratio = at_one_size(0.89),
            .same = "HttpWebRequest over a pooled ServicePoint: the connection kept alive",
            .differs = "ringlab has one client stack: HttpClient and HttpWebRequest on .NET Framework are the same "
                       "row here; Alloc Ratio computed from the seed's Allocated column"},
    SeedRow{.method = "NetStandard20_HttpClient", .strategy = "echo",
            .published_ratio = at_one_size(1.21), .published_ratio_sd = at_one_size(0.10),
            .published_alloc_ratio = at_one_size(0.99),
            .same = kEchoKept,
            .differs = "ringlab has one build; Alloc Ratio computed from the seed's Allocated column"},
    SeedRow{.method = "NetStandard20_HttpWebRequest", .strategy = "echo",
            .published_ratio = at_one_size(1.28), .published_ratio_sd = at_one_size(0.09),
            .published_alloc_ratio = at_one_size(0.89),
            .same = "HttpWebRequest over a pooled ServicePoint: the connection kept alive",
            .differs = "ringlab has one build and one client stack; Alloc Ratio computed from the seed's "
                       "Allocated column"},
};

}  // namespace ringlab::bench::seeds
