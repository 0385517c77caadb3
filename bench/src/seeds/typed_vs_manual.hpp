#pragma once
// The typed-vs-manual-client article (DaanEggen, "Benchmarking HTTP Implementations"): its two
// BenchmarkDotNet methods, each as ringlab's proxy suite runs it, over loopback and with the link on
// the upstream leg. Constant data for the seeds page (seed_row.hpp).
//
// The article's benchmark sends Cycles (10, 50, 100) GETs to an ASP.NET endpoint, /manual or /typed,
// each of which calls an upstream through a ManualClient (an HttpClient whose BaseAddress the class
// sets by hand) or a TypedClient (one configured by IHttpClientFactory), both over the factory's pooled
// handler, and answers the status alone. Ringlab's proxy rows do the same through the embedded
// server's /proxy (strategies/src/proxy.cpp; server/src/upstream.hpp for client=manual|typed).
//
// published_ratio and published_alloc_ratio: slots 0, 1, 2 are the article's 10, 50 and 100 cycles
// (kCycles), slot 3 is NaN (no fourth size). Each is SingleHttpRequestTyped's published Mean (or
// Allocated) over SingleHttpRequestManual's at the same cycle count, so the manual rows are 1.
#include <array>
#include <cstddef>
#include <limits>

#include "seed_row.hpp"

namespace ringlab::bench::seeds {

namespace typed_vs_manual_detail {
inline constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
// The article's table: Mean in seconds, Allocated in KB, at 10, 50 and 100 cycles.
inline constexpr std::array<double, 3> kManualMean{3.402, 28.730, 17.744};
inline constexpr std::array<double, 3> kTypedMean{3.858, 34.690, 18.283};
inline constexpr std::array<double, 3> kManualAllocated{24.55, 112.94, 208.32};
inline constexpr std::array<double, 3> kTypedAllocated{23.28, 112.77, 211.8};
inline constexpr std::array<double, 4> kOnes{1.0, 1.0, 1.0, kNone};
inline constexpr std::array<double, 4> kTypedRatio{kTypedMean[0] / kManualMean[0], kTypedMean[1] / kManualMean[1],
                                                   kTypedMean[2] / kManualMean[2], kNone};  // 1.134, 1.207, 1.030
inline constexpr std::array<double, 4> kTypedAllocRatio{kTypedAllocated[0] / kManualAllocated[0],
                                                        kTypedAllocated[1] / kManualAllocated[1],
                                                        kTypedAllocated[2] / kManualAllocated[2],
                                                        kNone};  // 0.948, 0.998, 1.017

// proxy_pooled runs beside them: it is the proxy suite's baseline (the same work as proxy_manual), so the
// table's ratios are against it and proxy_manual's own ratio is an A/A check of the run's noise.
inline constexpr std::string_view kLoopback =
    "bench proxy --filter proxy_pooled,proxy_manual,proxy_typed (10, 50, 100 requests per op)";
// 20 ms RTT, 100 Mbit/s, no loss: one upstream round trip per cycle costs 20 ms, as the article's
// upstream (a remote endpoint, 180-570 ms per cycle by its means) cost far more than loopback.
inline constexpr std::string_view kUpstreamWan =
    "bench proxy --filter proxy_pooled,proxy_manual,proxy_typed --link-leg upstream --link rate=100mbit,delay=10ms "
    "(needs root: "
    "20 ms RTT, 100 Mbit/s on the server <-> upstream leg; bench <-> server over loopback)";
inline constexpr std::string_view kSame =
    "Cycles GETs per op on one kept-alive client connection, each answer read into a fresh string "
    "(ReadAsStringAsync); the endpoint calls its upstream over a pooled kept-alive connection and answers the status "
    "alone (Results.Ok())";
inline constexpr std::string_view kDiffersManual =
    "the ratios beside it are computed from the article's published means and allocations (typed over manual per cycle "
    "count), not published as ratios; the handler starts the fetch itself (client=manual) in a C++ server on io_uring, "
    "not an ASP.NET endpoint; allocations are bench's client thread only (the server's are not counted, as "
    "BenchmarkDotNet did not count ASP.NET's)";
inline constexpr std::string_view kDiffersTyped =
    "the ratios are computed from the article's published means and allocations (typed over manual per cycle count); "
    "the typed client is a class the worker makes once from the same upstream pool, whose method performs the fetch "
    "and reports its status (client=typed): no DI container, so in C++ it does the manual path's work behind one "
    "call; allocations are bench's client thread only; ringlab's ratio is against proxy_pooled (the suite's "
    "baseline, proxy_manual's work), not against proxy_manual itself";
}  // namespace typed_vs_manual_detail

// The article's cycle counts, one per slot of the ratios.
inline constexpr std::array<std::size_t, 3> kTypedVsManualCycles{10, 50, 100};

inline constexpr std::array<SeedRow, 4> kTypedVsManual{{
    {"SingleHttpRequestManual", "proxy_manual", typed_vs_manual_detail::kLoopback, typed_vs_manual_detail::kOnes,
     typed_vs_manual_detail::kOnes, false, typed_vs_manual_detail::kSame, typed_vs_manual_detail::kDiffersManual},
    {"SingleHttpRequestTyped", "proxy_typed", typed_vs_manual_detail::kLoopback, typed_vs_manual_detail::kTypedRatio,
     typed_vs_manual_detail::kTypedAllocRatio, false, typed_vs_manual_detail::kSame,
     typed_vs_manual_detail::kDiffersTyped},
    {"SingleHttpRequestManual", "proxy_manual", typed_vs_manual_detail::kUpstreamWan, typed_vs_manual_detail::kOnes,
     typed_vs_manual_detail::kOnes, false, typed_vs_manual_detail::kSame,
     "the ratios beside it are computed from the article's published means and allocations (typed over manual per "
     "cycle count); the handler starts the fetch itself (client=manual) in a C++ server; allocations are bench's "
     "client thread only; the upstream leg is an emulated link (20 ms RTT, 100 Mbit/s, no loss), not the article's "
     "remote endpoint (whose time per cycle, 180-570 ms, it does not attempt)"},
    {"SingleHttpRequestTyped", "proxy_typed", typed_vs_manual_detail::kUpstreamWan, typed_vs_manual_detail::kTypedRatio,
     typed_vs_manual_detail::kTypedAllocRatio, false, typed_vs_manual_detail::kSame,
     "the ratios are computed from the article's published means and allocations (typed over manual per cycle count); "
     "the typed client is made once by the worker from the same upstream pool and does the manual path's work behind "
     "one call (client=typed); allocations are bench's client thread only; ringlab's ratio is against proxy_pooled "
     "(proxy_manual's work); the upstream leg is an emulated link "
     "(20 ms RTT, 100 Mbit/s, no loss), not the article's remote endpoint (whose time per cycle, 180-570 ms, it does "
     "not attempt)"},
}};

}  // namespace ringlab::bench::seeds
