// The seeds in the page's order (seeds.hpp): each write-up's rows are in a header of its own, with what the
// write-up measured and how its figures were taken or derived.
#include <array>

#include "client_libraries.hpp"
#include "jos.hpp"
#include "net_http_perf.hpp"
#include "nikouu.hpp"
#include "ringlab/bench/seeds/seeds.hpp"
#include "typed_vs_manual.hpp"

namespace ringlab::bench::seeds {
namespace {

constexpr std::string_view kNikouuAbout =
    ".NET 8, BenchmarkDotNet. GET of N weather records (the minimal-API example, about 77 bytes each) at 10, 100, "
    "1,000 and 10,000 from an ASP.NET Core API on the same machine, read in nine of HttpClient's ways and "
    "deserialized by System.Text.Json into a new list, against GetAsync + ReadAsStringAsync. Ratio and Alloc Ratio "
    "as published. Rows that share a ringlab strategy share its case: .NET's difference between them (whether "
    "HttpClient buffers before it returns) has no counterpart in ringlab's client.";
constexpr std::string_view kProfileAbout =
    ".NET Core 3.1, BenchmarkDotNet 0.12.1 (InvocationCount 50). jos's GitHub dummy API (ASP.NET Core) answers N of "
    "his repository records (21 keys, a tags array, two floats), serialized per request and chunked; every Version "
    "deserializes each into a DTO of three fields (Name, Url, Stars) and changes the client's lifetime or how the "
    "body is read. ringlab reads GET /profiles into the same 3-field DTO in every row. Ratio as published; Alloc Ratio "
    "computed from the published Allocated against Version 0. Versions that share a ringlab strategy share its "
    "case.";
constexpr std::string_view kClientLibrariesAbout =
    "GET and POST of a small body through five .NET clients against an ASP.NET Core API in IIS on the same machine "
    "(AMD Ryzen 5 3600, BenchmarkDotNet 0.12). The write-up publishes Mean and Allocated only: the seed's ratios "
    "are computed from them against WebRequest of the same runtime and verb. Each client maps onto the C++ library "
    "that `bench --list` names as its mirror, at 10 weather records (the write-up does not say what its API "
    "returned).";
constexpr std::string_view kNetHttpPerfAbout =
    "POST of {\"lorem\":\"ipsum\"} to a reflector that echoes it back chunked, read as a string, through HttpClient "
    "and HttpWebRequest, each called from a net461 and a netstandard2.0 library (one ringlab row for each pair). "
    "The Azure VM's tables; Ratio is BenchmarkDotNet's Scaled as published, Alloc Ratio computed from the published "
    "Allocated against Net461_HttpClient.";
constexpr std::string_view kTypedAbout =
    "ASP.NET Core with IHttpClientFactory: N sequential GETs (10, 50 and 100 cycles) of an endpoint on "
    "localhost:9256 that calls its upstream through a typed or a manual client and answers with the status. The "
    "article publishes Mean, Error, StdDev and Allocated only: per request its Means are 340, 575 and 177 ms "
    "(manual) and 386, 694 and 183 ms (typed) at 10, 50 and 100 cycles, with a StdDev of 1.25-4.83 s per op; it "
    "does not say where the upstream ran. The seed's ratios are computed from the Means, typed over manual, and "
    "their spreads from the StdDevs over manual's Mean.";

constexpr std::array kSeeds{
    Seed{.name = "nikouu", .title = "HttpClientBenchmarking (nikouu), .NET 8", .suite = "get",
         .sizes = {10, 100, 1000, 10000}, .size_name = "records", .about = kNikouuAbout, .rows = kNikouuRows},
    Seed{.name = "jos", .title = "jos.httpclient (joseftw), HttpClientBenchmark: the client alone", .suite = "jos",
         .sizes = {10, 100, 1000, 10000}, .size_name = "records", .about = kProfileAbout, .rows = kJosHttpClientBenchmark},
    // His second table: the same Versions inside the query his web app runs (each DTO then mapped onto a
    // Project); ringlab's rows are the client alone, so its figures are the run above.
    Seed{.name = "jos-query", .title = "jos.httpclient (joseftw), GetAllProjectsQuery", .suite = "jos",
         .sizes = {10, 100, 1000, 10000}, .size_name = "records", .about = kProfileAbout,
         .shares_run_of = "jos", .rows = kJosGetAllProjectsQuery},
    Seed{.name = "client-libraries-core-get", .title = "dotnet-client-libraries-benchmark, .NET Core 3.1, GET",
         .suite = "get", .sizes = {10, 0, 0, 0}, .size_name = "records", .about = kClientLibrariesAbout,
         .rows = kClientLibrariesCoreGetRows},
    Seed{.name = "client-libraries-core-post", .title = "dotnet-client-libraries-benchmark, .NET Core 3.1, POST",
         .suite = "post", .sizes = {10, 0, 0, 0}, .size_name = "records", .about = kClientLibrariesAbout,
         .rows = kClientLibrariesCorePostRows},
    Seed{.name = "client-libraries-framework-get",
         .title = "dotnet-client-libraries-benchmark, .NET Framework 4.7.2, GET", .suite = "get", .sizes = {10, 0, 0, 0},
         .size_name = "records", .about = kClientLibrariesAbout, .rows = kClientLibrariesFrameworkGetRows},
    Seed{.name = "client-libraries-framework-post",
         .title = "dotnet-client-libraries-benchmark, .NET Framework 4.7.2, POST", .suite = "post",
         .sizes = {10, 0, 0, 0}, .size_name = "records", .about = kClientLibrariesAbout,
         .rows = kClientLibrariesFrameworkPostRows},
    Seed{.name = "net-http-perf", .title = "net-http-perf (joncloud), Azure VM, App.NetCoreApp20", .suite = "echo",
         .sizes = {1, 0, 0, 0}, .size_name = "object", .about = kNetHttpPerfAbout, .rows = kNetHttpPerfCoreRows},
    Seed{.name = "net-http-perf-framework", .title = "net-http-perf (joncloud), Azure VM, App.Net461", .suite = "echo",
         .sizes = {1, 0, 0, 0}, .size_name = "object", .about = kNetHttpPerfAbout, .rows = kNetHttpPerfFrameworkRows},
    Seed{.name = "typed", .title = "Typed versus manual client (the article), over loopback", .suite = "proxy",
         .sizes = {10, 50, 100, 0}, .size_name = "cycles", .about = kTypedAbout, .rows = typed_vs_manual::kRows},
    // The article does not say where its upstream ran; 177-575 ms per request is far beyond a loopback
    // call: the same rows with 20 ms of round trip and 100 Mbit/s between the server and its upstream,
    // client and server on loopback.
    Seed{.name = "typed-wan", .title = "Typed versus manual client (the article), over an emulated WAN upstream",
         .suite = "proxy", .sizes = {10, 50, 100, 0}, .size_name = "cycles", .about = kTypedAbout,
         .link = "rate=100mbit,delay=10ms", .link_leg = LinkLeg::upstream, .rows = typed_vs_manual::kRows},
};

}  // namespace

std::span<const Seed> all_seeds() { return kSeeds; }

}  // namespace ringlab::bench::seeds
