#pragma once
// The typed-vs-manual-client article (DaanEggen, "Benchmarking HTTP Implementations"): its two methods as
// the proxy suite runs them (seeds.hpp). Private to seed_table.cpp.
//
// The article sends Cycles (10, 50, 100) GETs to an ASP.NET endpoint, /manual or /typed, each of which calls
// an upstream through a ManualClient (an HttpClient whose BaseAddress the class sets by hand) or a
// TypedClient (configured by IHttpClientFactory), both over the factory's pooled handler, and answers the
// status alone. ringlab's rows do the same through the embedded server's /proxy (client=manual|typed,
// server/src/upstream.hpp). The article gives Mean, Error, StdDev and Allocated, no ratio: the ratios are
// typed over manual from the Means and Allocated, per cycle count (slot 3 unused), and each row's spread
// its StdDev over manual's Mean.
#include <array>

#include "ringlab/bench/seeds/seeds.hpp"

namespace ringlab::bench::seeds::typed_vs_manual {

// The article's table: Mean and StdDev in seconds, Allocated in KB, at 10, 50 and 100 cycles.
inline constexpr std::array<double, 3> kManualMean{3.402, 28.730, 17.744};
inline constexpr std::array<double, 3> kTypedMean{3.858, 34.690, 18.283};
inline constexpr std::array<double, 3> kManualStdDev{1.251, 4.221, 2.216};
inline constexpr std::array<double, 3> kTypedStdDev{1.359, 4.828, 2.072};
inline constexpr std::array<double, 3> kManualAllocated{24.55, 112.94, 208.32};
inline constexpr std::array<double, 3> kTypedAllocated{23.28, 112.77, 211.8};
inline constexpr std::array<double, 4> kOnes{1.0, 1.0, 1.0, kNone};
inline constexpr std::array<double, 4> kTypedRatio{kTypedMean[0] / kManualMean[0], kTypedMean[1] / kManualMean[1],
                                                   kTypedMean[2] / kManualMean[2], kNone};  // 1.134, 1.207, 1.030
// Over manual's Mean: 0.37, 0.15, 0.12 (manual) and 0.40, 0.17, 0.12 (typed); at every cycle count their
// sum exceeds the two Means' difference, as the article concludes ("no significant difference").
inline constexpr std::array<double, 4> kManualRatioSd{kManualStdDev[0] / kManualMean[0],
                                                      kManualStdDev[1] / kManualMean[1],
                                                      kManualStdDev[2] / kManualMean[2], kNone};
inline constexpr std::array<double, 4> kTypedRatioSd{kTypedStdDev[0] / kManualMean[0], kTypedStdDev[1] / kManualMean[1],
                                                     kTypedStdDev[2] / kManualMean[2], kNone};
inline constexpr std::array<double, 4> kTypedAllocRatio{kTypedAllocated[0] / kManualAllocated[0],
                                                        kTypedAllocated[1] / kManualAllocated[1],
                                                        kTypedAllocated[2] / kManualAllocated[2], kNone};

inline constexpr std::string_view kSame =
    "Cycles GETs per op on one kept-alive client connection, each answer read into a fresh string "
    "(ReadAsStringAsync); the endpoint calls its upstream over a pooled kept-alive connection and answers the status "
    "alone";

inline constexpr std::array kRows{
    SeedRow{.method = "SingleHttpRequestManual", .strategy = "proxy_manual", .published_ratio = kOnes,
            .published_ratio_sd = kManualRatioSd, .published_alloc_ratio = kOnes, .same = kSame,
            .differs = "the handler starts the fetch itself (client=manual) in a C++ server on io_uring, not an ASP.NET "
                       "endpoint; allocations are the client thread's (the server's are not counted, as BenchmarkDotNet "
                       "did not count ASP.NET's)"},
    SeedRow{.method = "SingleHttpRequestTyped", .strategy = "proxy_typed", .published_ratio = kTypedRatio,
            .published_ratio_sd = kTypedRatioSd, .published_alloc_ratio = kTypedAllocRatio, .same = kSame,
            .differs = "the typed client is a class the worker makes once from the same upstream pool, whose method "
                       "performs the fetch and reports its status (client=typed): no DI container, so in C++ it does "
                       "the manual path's work behind one call"},
};

}  // namespace ringlab::bench::seeds::typed_vs_manual
