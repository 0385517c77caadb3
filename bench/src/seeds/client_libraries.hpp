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

// .NET Core 3.1, GET.
inline constexpr std::array kClientLibrariesCoreGetRows{
    SeedRow{.method = "Get_WebRequest", .strategy = "beast", .client = strategies::Client::fresh,
            .published_ratio = {1.00, kNone, kNone, kNone},
            .published_ratio_sd = {9.61 / 537.6, kNone, kNone, kNone},
            .published_alloc_ratio = {1.00, kNone, kNone, kNone},
            .same = "a new client for every request: on .NET Core HttpWebRequest builds a new HttpClient, its "
                    "handler and a new connection",
            .differs = "Boost.Beast over a tcp_stream made anew, not .NET's HttpClient"},
    SeedRow{.method = "Get_HttpClientAsync", .strategy = "cpprest",
            .published_ratio = {0.28, kNone, kNone, kNone},
            .published_ratio_sd = {1.08 / 537.6, kNone, kNone, kNone},
            .published_alloc_ratio = {0.14, kNone, kNone, kNone},
            .same = "one client kept for the program's life, its pooled connection kept alive",
            .differs = "the C++ REST SDK's http_client, which crosses to its thread pool and back for every "
                       "request; ratios computed from the seed's published means against Get_WebRequest"},
    SeedRow{.method = "Get_WebClientAsync", .strategy = "libcurl_multi", .client = strategies::Client::fresh,
            .published_ratio = {1.03, kNone, kNone, kNone},
            .published_ratio_sd = {2.29 / 537.6, kNone, kNone, kNone},
            .published_alloc_ratio = {1.03, kNone, kNone, kNone},
            .same = "a new client for every request (WebClient over HttpWebRequest)",
            .differs = "libcurl's multi interface made anew; ratios computed from the seed's published means "
                       "against Get_WebRequest"},
    SeedRow{.method = "Get_RestSharpAsync", .strategy = "cpp_httplib", .client = strategies::Client::fresh,
            .published_ratio = {1.14, kNone, kNone, kNone},
            .published_ratio_sd = {2.52 / 537.6, kNone, kNone, kNone},
            .published_alloc_ratio = {2.14, kNone, kNone, kNone},
            .same = "a new client for every request (RestSharp 106 over HttpWebRequest), the body deserialized",
            .differs = "httplib::Client made anew; ratios computed from the seed's published means against "
                       "Get_WebRequest"},
    SeedRow{.method = "Get_FlurlAsync", .strategy = "curlpp",
            .published_ratio = {0.31, kNone, kNone, kNone},
            .published_ratio_sd = {0.38 / 537.6, kNone, kNone, kNone},
            .published_alloc_ratio = {0.29, kNone, kNone, kNone},
            .same = "a thin wrapper kept for the program's life over a pooled client (Flurl caches one "
                    "HttpClient per host)",
            .differs = "curlpp over libcurl's easy handle; ratios computed from the seed's published means "
                       "against Get_WebRequest"},
};

// .NET Core 3.1, POST.
inline constexpr std::array kClientLibrariesCorePostRows{
    SeedRow{.method = "Post_WebRequest", .strategy = "beast_post", .client = strategies::Client::fresh,
            .published_ratio = {1.00, kNone, kNone, kNone},
            .published_ratio_sd = {4.92 / 536.5, kNone, kNone, kNone},
            .published_alloc_ratio = {1.00, kNone, kNone, kNone},
            .same = "a new client for every request (HttpWebRequest on .NET Core)",
            .differs = "Boost.Beast over a tcp_stream made anew"},
    SeedRow{.method = "Post_HttpClientAsync", .strategy = "cpprest_post",
            .published_ratio = {0.28, kNone, kNone, kNone},
            .published_ratio_sd = {0.86 / 536.5, kNone, kNone, kNone},
            .published_alloc_ratio = {0.12, kNone, kNone, kNone},
            .same = "one client kept, its connection kept alive",
            .differs = "the C++ REST SDK's thread pool; ratios computed from the seed's published means against "
                       "Post_WebRequest"},
    SeedRow{.method = "Post_WebClientAsync", .strategy = "libcurl_multi_post", .client = strategies::Client::fresh,
            .published_ratio = {1.10, kNone, kNone, kNone},
            .published_ratio_sd = {14.29 / 536.5, kNone, kNone, kNone},
            .published_alloc_ratio = {0.98, kNone, kNone, kNone},
            .same = "a new client for every request (WebClient over HttpWebRequest)",
            .differs = "libcurl's multi interface; ratios computed from the seed's published means against "
                       "Post_WebRequest"},
    SeedRow{.method = "Post_RestSharpAsync", .strategy = "cpp_httplib_post", .client = strategies::Client::fresh,
            .published_ratio = {1.17, kNone, kNone, kNone},
            .published_ratio_sd = {3.92 / 536.5, kNone, kNone, kNone},
            .published_alloc_ratio = {1.81, kNone, kNone, kNone},
            .same = "a new client for every request (RestSharp 106 over HttpWebRequest)",
            .differs = "httplib::Client; ratios computed from the seed's published means against Post_WebRequest"},
    SeedRow{.method = "Post_FlurlAsync", .strategy = "curlpp_post",
            .published_ratio = {0.32, kNone, kNone, kNone},
            .published_ratio_sd = {0.63 / 536.5, kNone, kNone, kNone},
            .published_alloc_ratio = {0.28, kNone, kNone, kNone},
            .same = "a thin wrapper kept over a pooled client",
            .differs = "curlpp over libcurl's easy handle; ratios computed from the seed's published means "
                       "against Post_WebRequest"},
};

// .NET Framework 4.7.2: every client keeps its connection.
inline constexpr std::array kClientLibrariesFrameworkGetRows{
    SeedRow{.method = "Get_WebRequest", .strategy = "beast",
            .published_ratio = {1.00, kNone, kNone, kNone},
            .published_ratio_sd = {0.96 / 154.9, kNone, kNone, kNone},
            .published_alloc_ratio = {1.00, kNone, kNone, kNone},
            .same = "HttpWebRequest over a pooled ServicePoint: the connection kept alive",
            .differs = "Boost.Beast over a kept-alive tcp_stream"},
    SeedRow{.method = "Get_HttpClientAsync", .strategy = "cpprest",
            .published_ratio = {1.33, kNone, kNone, kNone},
            .published_ratio_sd = {3.96 / 154.9, kNone, kNone, kNone},
            .published_alloc_ratio = {1.93, kNone, kNone, kNone},
            .same = "one client kept (on .NET Framework a layer over HttpWebRequest)",
            .differs = "the C++ REST SDK's thread pool; ratios computed from the seed's published means against "
                       "Get_WebRequest"},
    SeedRow{.method = "Get_WebClientAsync", .strategy = "libcurl_multi",
            .published_ratio = {1.17, kNone, kNone, kNone},
            .published_ratio_sd = {0.60 / 154.9, kNone, kNone, kNone},
            .published_alloc_ratio = {1.30, kNone, kNone, kNone},
            .same = "WebClient over HttpWebRequest, the connection kept alive",
            .differs = "libcurl's multi interface; ratios computed from the seed's published means against "
                       "Get_WebRequest"},
    SeedRow{.method = "Get_RestSharpAsync", .strategy = "cpp_httplib",
            .published_ratio = {1.41, kNone, kNone, kNone},
            .published_ratio_sd = {0.47 / 154.9, kNone, kNone, kNone},
            .published_alloc_ratio = {4.39, kNone, kNone, kNone},
            .same = "RestSharp over HttpWebRequest, the connection kept alive",
            .differs = "httplib::Client; ratios computed from the seed's published means against Get_WebRequest"},
    SeedRow{.method = "Get_FlurlAsync", .strategy = "curlpp",
            .published_ratio = {1.41, kNone, kNone, kNone},
            .published_ratio_sd = {5.09 / 154.9, kNone, kNone, kNone},
            .published_alloc_ratio = {2.42, kNone, kNone, kNone},
            .same = "a thin wrapper over a pooled client",
            .differs = "curlpp; ratios computed from the seed's published means against Get_WebRequest"},
};

inline constexpr std::array kClientLibrariesFrameworkPostRows{
    SeedRow{.method = "Post_WebRequest", .strategy = "beast_post",
            .published_ratio = {1.00, kNone, kNone, kNone},
            .published_ratio_sd = {1.24 / 157.7, kNone, kNone, kNone},
            .published_alloc_ratio = {1.00, kNone, kNone, kNone},
            .same = "HttpWebRequest over a pooled ServicePoint: the connection kept alive",
            .differs = "Boost.Beast over a kept-alive tcp_stream"},
    SeedRow{.method = "Post_HttpClientAsync", .strategy = "cpprest_post",
            .published_ratio = {1.29, kNone, kNone, kNone},
            .published_ratio_sd = {0.31 / 157.7, kNone, kNone, kNone},
            .published_alloc_ratio = {1.23, kNone, kNone, kNone},
            .same = "one client kept",
            .differs = "the C++ REST SDK's thread pool; ratios computed from the seed's published means against "
                       "Post_WebRequest"},
    SeedRow{.method = "Post_WebClientAsync", .strategy = "libcurl_multi_post",
            .published_ratio = {1.33, kNone, kNone, kNone},
            .published_ratio_sd = {3.68 / 157.7, kNone, kNone, kNone},
            .published_alloc_ratio = {0.97, kNone, kNone, kNone},
            .same = "WebClient over HttpWebRequest, the connection kept alive",
            .differs = "libcurl's multi interface; ratios computed from the seed's published means against "
                       "Post_WebRequest"},
    SeedRow{.method = "Post_RestSharpAsync", .strategy = "cpp_httplib_post",
            .published_ratio = {1.40, kNone, kNone, kNone},
            .published_ratio_sd = {0.31 / 157.7, kNone, kNone, kNone},
            .published_alloc_ratio = {2.78, kNone, kNone, kNone},
            .same = "RestSharp over HttpWebRequest, the connection kept alive",
            .differs = "httplib::Client; ratios computed from the seed's published means against Post_WebRequest"},
    SeedRow{.method = "Post_FlurlAsync", .strategy = "curlpp_post",
            .published_ratio = {1.42, kNone, kNone, kNone},
            .published_ratio_sd = {0.51 / 157.7, kNone, kNone, kNone},
            .published_alloc_ratio = {1.69, kNone, kNone, kNone},
            .same = "a thin wrapper over a pooled client",
            .differs = "curlpp; ratios computed from the seed's published means against Post_WebRequest"},
};

}  // namespace ringlab::bench::seeds
