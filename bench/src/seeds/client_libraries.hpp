#pragma once
// dotnet-client-libraries-benchmark: GET and POST of a small body through five .NET clients (WebRequest,
// HttpClient, WebClient, RestSharp, Flurl) on .NET Framework 4.7.2 and on .NET Core 3.1, against an
// ASP.NET Core API in IIS (answers serialized per request, sent chunked: the server's seed mode). ringlab
// has no .NET clients: each maps onto the C++ library peer that `bench --list` names as its mirror, at 10
// weather records (the seed does not say what its API returned).
//
// The seed publishes means and Allocated, no ratio column: the ratios here are computed from its published
// means and allocations against the first row of the same runtime and verb (X_WebRequest), rounded to two
// places as BenchmarkDotNet rounds; the spread of each ratio is the row's published StdDev over that first
// row's published Mean (both in µs, written out below as the write-up prints them). Its tables are four
// Seeds here, one per runtime and verb, since a Seed runs one suite and one runtime's rows are not
// comparable with the other's.
//
// On .NET Core 3.1, HttpWebRequest builds a new HttpClient (handler, connection pool, connection) for every
// request, and WebClient and RestSharp (106, over HttpWebRequest) with it: those rows run with the whole
// client built per request (--client fresh). On .NET Framework, HttpWebRequest is its own stack over a
// pooled ServicePoint, and every client keeps its connection.
#include <array>

#include "ringlab/bench/seeds/seeds.hpp"

namespace ringlab::bench::seeds {

// The published Mean (µs) of each table's first row, X_WebRequest: each row's spread is its StdDev over it.
inline constexpr double kCoreGetMeanUs = 537.6;
inline constexpr double kCorePostMeanUs = 536.5;
inline constexpr double kFrameworkGetMeanUs = 154.9;
inline constexpr double kFrameworkPostMeanUs = 157.7;

// .NET Core 3.1, GET.
inline constexpr std::array kClientLibrariesCoreGetRows{
    SeedRow{.method = "Get_WebRequest", .strategy = "beast", .client = strategies::Client::fresh,
            .published_ratio = at_one_size(1.00), .published_ratio_sd = at_one_size(9.61 / kCoreGetMeanUs),
            .published_alloc_ratio = at_one_size(1.00),
            .same = "a new client for every request: on .NET Core HttpWebRequest builds a new HttpClient, its "
                    "handler and a new connection",
            .differs = "Boost.Beast over a tcp_stream made anew, not .NET's HttpClient"},
    SeedRow{.method = "Get_HttpClientAsync", .strategy = "cpprest",
            .published_ratio = at_one_size(0.28), .published_ratio_sd = at_one_size(1.08 / kCoreGetMeanUs),
            .published_alloc_ratio = at_one_size(0.14),
            .same = "one client kept for the program's life, its pooled connection kept alive",
            .differs = "the C++ REST SDK's http_client, which crosses to its thread pool and back for every "
                       "request; ratios computed from the seed's published means against Get_WebRequest"},
    SeedRow{.method = "Get_WebClientAsync", .strategy = "libcurl_multi", .client = strategies::Client::fresh,
            .published_ratio = at_one_size(1.03), .published_ratio_sd = at_one_size(2.29 / kCoreGetMeanUs),
            .published_alloc_ratio = at_one_size(1.03),
            .same = "a new client for every request (WebClient over HttpWebRequest)",
            .differs = "libcurl's multi interface made anew; ratios computed from the seed's published means "
                       "against Get_WebRequest"},
    SeedRow{.method = "Get_RestSharpAsync", .strategy = "cpp_httplib", .client = strategies::Client::fresh,
            .published_ratio = at_one_size(1.14), .published_ratio_sd = at_one_size(2.52 / kCoreGetMeanUs),
            .published_alloc_ratio = at_one_size(2.14),
            .same = "a new client for every request (RestSharp 106 over HttpWebRequest), the body deserialized",
            .differs = "httplib::Client made anew; ratios computed from the seed's published means against "
                       "Get_WebRequest"},
    SeedRow{.method = "Get_FlurlAsync", .strategy = "curlpp",
            .published_ratio = at_one_size(0.31), .published_ratio_sd = at_one_size(0.38 / kCoreGetMeanUs),
            .published_alloc_ratio = at_one_size(0.29),
            .same = "a thin wrapper kept for the program's life over a pooled client (Flurl caches one "
                    "HttpClient per host)",
            .differs = "curlpp over libcurl's easy handle; ratios computed from the seed's published means "
                       "against Get_WebRequest"},
};

// .NET Core 3.1, POST.
inline constexpr std::array kClientLibrariesCorePostRows{
    SeedRow{.method = "Post_WebRequest", .strategy = "beast_post", .client = strategies::Client::fresh,
            .published_ratio = at_one_size(1.00), .published_ratio_sd = at_one_size(4.92 / kCorePostMeanUs),
            .published_alloc_ratio = at_one_size(1.00),
            .same = "a new client for every request (HttpWebRequest on .NET Core)",
            .differs = "Boost.Beast over a tcp_stream made anew"},
    SeedRow{.method = "Post_HttpClientAsync", .strategy = "cpprest_post",
            .published_ratio = at_one_size(0.28), .published_ratio_sd = at_one_size(0.86 / kCorePostMeanUs),
            .published_alloc_ratio = at_one_size(0.12),
            .same = "one client kept, its connection kept alive",
            .differs = "the C++ REST SDK's thread pool; ratios computed from the seed's published means against "
                       "Post_WebRequest"},
    SeedRow{.method = "Post_WebClientAsync", .strategy = "libcurl_multi_post", .client = strategies::Client::fresh,
            .published_ratio = at_one_size(1.10), .published_ratio_sd = at_one_size(14.29 / kCorePostMeanUs),
            .published_alloc_ratio = at_one_size(0.98),
            .same = "a new client for every request (WebClient over HttpWebRequest)",
            .differs = "libcurl's multi interface; ratios computed from the seed's published means against "
                       "Post_WebRequest"},
    SeedRow{.method = "Post_RestSharpAsync", .strategy = "cpp_httplib_post", .client = strategies::Client::fresh,
            .published_ratio = at_one_size(1.17), .published_ratio_sd = at_one_size(3.92 / kCorePostMeanUs),
            .published_alloc_ratio = at_one_size(1.81),
            .same = "a new client for every request (RestSharp 106 over HttpWebRequest)",
            .differs = "httplib::Client; ratios computed from the seed's published means against Post_WebRequest"},
    SeedRow{.method = "Post_FlurlAsync", .strategy = "curlpp_post",
            .published_ratio = at_one_size(0.32), .published_ratio_sd = at_one_size(0.63 / kCorePostMeanUs),
            .published_alloc_ratio = at_one_size(0.28),
            .same = "a thin wrapper kept over a pooled client",
            .differs = "curlpp over libcurl's easy handle; ratios computed from the seed's published means "
                       "against Post_WebRequest"},
};

// .NET Framework 4.7.2: every client keeps its connection.
inline constexpr std::array kClientLibrariesFrameworkGetRows{
    SeedRow{.method = "Get_WebRequest", .strategy = "beast",
            .published_ratio = at_one_size(1.00), .published_ratio_sd = at_one_size(0.96 / kFrameworkGetMeanUs),
            .published_alloc_ratio = at_one_size(1.00),
            .same = "HttpWebRequest over a pooled ServicePoint: the connection kept alive",
            .differs = "Boost.Beast over a kept-alive tcp_stream"},
    SeedRow{.method = "Get_HttpClientAsync", .strategy = "cpprest",
            .published_ratio = at_one_size(1.33), .published_ratio_sd = at_one_size(3.96 / kFrameworkGetMeanUs),
            .published_alloc_ratio = at_one_size(1.93),
            .same = "one client kept (on .NET Framework a layer over HttpWebRequest)",
            .differs = "the C++ REST SDK's thread pool; ratios computed from the seed's published means against "
                       "Get_WebRequest"},
    SeedRow{.method = "Get_WebClientAsync", .strategy = "libcurl_multi",
            .published_ratio = at_one_size(1.17), .published_ratio_sd = at_one_size(0.60 / kFrameworkGetMeanUs),
            .published_alloc_ratio = at_one_size(1.30),
            .same = "WebClient over HttpWebRequest, the connection kept alive",
            .differs = "libcurl's multi interface; ratios computed from the seed's published means against "
                       "Get_WebRequest"},
    SeedRow{.method = "Get_RestSharpAsync", .strategy = "cpp_httplib",
            .published_ratio = at_one_size(1.41), .published_ratio_sd = at_one_size(0.47 / kFrameworkGetMeanUs),
            .published_alloc_ratio = at_one_size(4.39),
            .same = "RestSharp over HttpWebRequest, the connection kept alive",
            .differs = "httplib::Client; ratios computed from the seed's published means against Get_WebRequest"},
    SeedRow{.method = "Get_FlurlAsync", .strategy = "curlpp",
            .published_ratio = at_one_size(1.41), .published_ratio_sd = at_one_size(5.09 / kFrameworkGetMeanUs),
            .published_alloc_ratio = at_one_size(2.42),
            .same = "a thin wrapper over a pooled client",
            .differs = "curlpp; ratios computed from the seed's published means against Get_WebRequest"},
};

inline constexpr std::array kClientLibrariesFrameworkPostRows{
    SeedRow{.method = "Post_WebRequest", .strategy = "beast_post",
            .published_ratio = at_one_size(1.00), .published_ratio_sd = at_one_size(1.24 / kFrameworkPostMeanUs),
            .published_alloc_ratio = at_one_size(1.00),
            .same = "HttpWebRequest over a pooled ServicePoint: the connection kept alive",
            .differs = "Boost.Beast over a kept-alive tcp_stream"},
    SeedRow{.method = "Post_HttpClientAsync", .strategy = "cpprest_post",
            .published_ratio = at_one_size(1.29), .published_ratio_sd = at_one_size(0.31 / kFrameworkPostMeanUs),
            .published_alloc_ratio = at_one_size(1.23),
            .same = "one client kept",
            .differs = "the C++ REST SDK's thread pool; ratios computed from the seed's published means against "
                       "Post_WebRequest"},
    SeedRow{.method = "Post_WebClientAsync", .strategy = "libcurl_multi_post",
            .published_ratio = at_one_size(1.33), .published_ratio_sd = at_one_size(3.68 / kFrameworkPostMeanUs),
            .published_alloc_ratio = at_one_size(0.97),
            .same = "WebClient over HttpWebRequest, the connection kept alive",
            .differs = "libcurl's multi interface; ratios computed from the seed's published means against "
                       "Post_WebRequest"},
    SeedRow{.method = "Post_RestSharpAsync", .strategy = "cpp_httplib_post",
            .published_ratio = at_one_size(1.40), .published_ratio_sd = at_one_size(0.31 / kFrameworkPostMeanUs),
            .published_alloc_ratio = at_one_size(2.78),
            .same = "RestSharp over HttpWebRequest, the connection kept alive",
            .differs = "httplib::Client; ratios computed from the seed's published means against Post_WebRequest"},
    SeedRow{.method = "Post_FlurlAsync", .strategy = "curlpp_post",
            .published_ratio = at_one_size(1.42), .published_ratio_sd = at_one_size(0.51 / kFrameworkPostMeanUs),
            .published_alloc_ratio = at_one_size(1.69),
            .same = "a thin wrapper over a pooled client",
            .differs = "curlpp; ratios computed from the seed's published means against Post_WebRequest"},
};

}  // namespace ringlab::bench::seeds
