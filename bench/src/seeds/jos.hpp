#pragma once
// jos.httpclient (joseftw, 2020): his two BenchmarkDotNet tables, one row per Version as he names it, mapped
// onto ringlab's strategies and flags: the data the seeds page (docs/seeds.md) is generated from.
//
// His setup: a GitHub dummy API (ASP.NET Core 3.1) that answers N of the records of his
// repositories.N.json, serialized per request and sent chunked; a client that GETs them and deserializes
// every record into GitHubRepositoryDto {Name, Url, Stars}; N = 10, 100, 1,000 and 10,000; Ratio against
// Version 0; .NET Core 3.1, BenchmarkDotNet 0.12.1, InvocationCount 50. ringlab's conditions for every row:
// `bench jos --server-mode seed` (GET /profiles: his records, 21 keys with a tags array and two floats,
// serialized per request and chunked; read into the same 3-field DTO, json::JosRepository, by every
// strategy, so every row's checksum covers the same three fields and the rows' checksums agree), plus
// the row's own flags.
//
// Two tables, as his write-up has: GetAllProjectsQuery (the query his web app runs: the Version's client,
// then each DTO mapped onto a Project) and HttpClientBenchmark (the Version's client alone, which returns
// the DTOs: what ringlab's rows do). The mapping is the same for both; only the published figures differ.
//
// Published figures are copied from his README (2020-08-11) as printed: Ratio, Mean in milliseconds, and
// Allocated in KB; the 10,000-item column, printed in MB, times 1024 (BenchmarkDotNet's units are
// binary); RatioSD and StdDev as printed. BenchmarkDotNet 0.12.1 printed no allocation ratio:
// published_alloc_ratio is Allocated over the table's Version 0 at the same size, computed here. His
// 10,000-item tables print no RatioSD: there published_ratio_sd is the row's StdDev over Version 0's
// Mean, computed here. kNone (NaN) marks a figure the write-up does not have (his only gap: RatioSD at
// 10,000 items).
//
// Constant data with static storage; nothing here allocates.
#include <array>
#include <cstddef>
#include <string_view>

#include "ringlab/bench/seeds/seeds.hpp"

namespace ringlab::bench::seeds {

// His figures as printed, per Version: jos_rows() turns them into the seed's rows.

// The sizes of his tables: records per response, the columns of every array below.
inline constexpr std::array<std::size_t, 4> kJosSizes{10, 100, 1000, 10000};

// How a Version maps onto ringlab, whatever table its figures come from.
struct JosMapping {
  std::string_view method;    // as his table names it, spaced: "Version 0"
  std::string_view strategy;  // ringlab's strategy (bench --list), run in the jos suite
  // The client policy beyond the seed conditions every row has (the jos payload, the seed server mode):
  // a whole client built per request (fresh) or one client kept (pooled).
  strategies::Client client;
  // The Version whose time this row's conclusion is read against: "Version 0", his baseline, except
  // where the pattern is the same as another Version's with one thing changed (Version 10 against 9).
  std::string_view compared_with;
  // The row goes beyond what the Version does (models reused, say): none of his rows does.
  bool beyond_seed;
  std::string_view same;     // what the row shares with the Version
  std::string_view differs;  // what it does not
};

// One Version's published figures: Ratio, Mean and Allocated, then his spreads, RatioSD and StdDev.
struct JosFigures {
  std::array<double, 4> ratio;
  std::array<double, 4> mean_ms;
  std::array<double, 4> allocated_kb;
  std::array<double, 4> ratio_sd;   // kNone at 10,000 items: those tables print no RatioSD
  std::array<double, 4> stddev_ms;
};

inline constexpr std::size_t kJosVersions = 11;  // Version 0 to Version 10
inline constexpr strategies::Client kFreshClient = strategies::Client::fresh;
inline constexpr strategies::Client kPooledClient = strategies::Client::pooled;

inline constexpr std::array<JosMapping, kJosVersions> kJosMapping{{
    {"Version 0", "string_copy", kFreshClient, "Version 0", false,
     "a new client per request (using new HttpClient: handler, pool and connection built and disposed; here the "
     "ring, buffers and connection, the JSON parser kept per process as .NET keeps its serializer), "
     "GetStringAsync: the body as a string, then deserialized into a list of fresh 3-field DTOs",
     "his call blocks on .Result (sync over async), V1 awaits: ringlab's loop has no async, so Versions 0 and 1 "
     "are the same row; simdjson On-Demand instead of Newtonsoft's JsonConvert, after one more copy of the "
     "string into a padded one"},
    {"Version 1", "string_copy", kFreshClient, "Version 0", false,
     "as Version 0, awaited: a new client per request, the body as a string, fresh DTOs",
     "the same row as Version 0 (no async in ringlab); the library as there"},
    {"Version 2", "string_copy", kPooledClient, "Version 0", false,
     "one HttpClient kept for the program's life (a singleton), GetStringAsync, fresh DTOs",
     "simdjson instead of Newtonsoft; the one kept-alive connection is ringlab's client's own"},
    {"Version 3", "string_copy", kPooledClient, "Version 0", false,
     "IHttpClientFactory's named client: an HttpClient per call over the factory's pooled handler, so one "
     "kept-alive connection; GetStringAsync, fresh DTOs",
     "ringlab's client is its pool: there is no handler to pool apart from it, so Versions 2 to 5 are one row "
     "(his spread between them at 100 items, 1.21-1.89 with a large StdDev, has no counterpart)"},
    {"Version 4", "string_copy", kPooledClient, "Version 0", false,
     "a typed client (AddHttpClient<GitHubClient>) over the factory's pooled handler; GetStringAsync, fresh DTOs",
     "the same row as Versions 2, 3 and 5: in C++ the typed and named clients are the same pooled client"},
    {"Version 5", "string_copy", kPooledClient, "Version 0", false,
     "a typed client made by his GitHubClientFactory over the factory's pooled handler; GetStringAsync, fresh DTOs",
     "the same row as Versions 2 to 4"},
    {"Version 6", "buffered_stream", kPooledClient, "Version 0", false,
     "SendAsync with ResponseContentRead: the content buffered whole (a stream that grows as it fills), then "
     "deserialized from it into fresh DTOs",
     "parsed in place in the buffered body by simdjson, where his JsonSerializer reads it through a "
     "StreamReader and a JsonTextReader"},
    {"Version 7", "presized_fresh", kPooledClient, "Version 0", false,
     "ResponseHeadersRead: the body read from the connection after the head, deserialized into fresh DTOs",
     "his JsonTextReader reads the stream as it arrives; presized_fresh receives the whole body into one "
     "buffer kept across requests (grown once to the largest chunked answer), then parses it; the same row "
     "as Version 9, since ringlab's Versions 7 and 9 use one library"},
    {"Version 8", "token_loop", kPooledClient, "Version 0", false,
     "ResponseHeadersRead, and a hand-written loop over the reader's tokens (the last property name kept, a "
     "switch on it) filling fresh DTOs, as his ProjectDeserializer does",
     "the tokens are rapidjson's SAX events over the whole received body, not Newtonsoft's JsonTextReader: "
     "against Version 7's row this also swaps simdjson for rapidjson; against rapidjson_fresh (the same "
     "tokens, rapidjson's generic deserializer) it isolates the hand-written loop, as his V8 against V7 does"},
    {"Version 9", "presized_fresh", kPooledClient, "Version 0", false,
     "ResponseHeadersRead + System.Text.Json's DeserializeAsync from the stream into fresh DTOs",
     "DeserializeAsync parses as the bytes arrive, presized_fresh once the last one is in (streaming_array "
     "parses records as they arrive, into records reused in place); his V9 also swapped Newtonsoft for "
     "System.Text.Json, ringlab's library stays simdjson"},
    {"Version 10", "rapidjson_fresh", kPooledClient, "Version 9", false,
     "Version 9's receive with another JSON library (Utf8Json) into the same fresh DTOs: read against Version 9, "
     "the same pattern with the library swapped, not against Version 0 (his Mean is 0.90-1.01 of V9's in "
     "HttpClientBenchmark and 0.93-1.02 in GetAllProjectsQuery; the quotients of his Ratios, which the page "
     "shows, are 0.86-1.01 and 0.93-1.03)",
     "rapidjson parses in situ (strings unescaped where they lie in the body) by SAX, after the whole body; "
     "his Utf8Json reads the stream"},
}};

// GetAllProjectsQuery, 2020-08-11.
inline constexpr std::array<JosFigures, kJosVersions> kJosGetAllProjectsQueryFigures{{
    {{1.00, 1.00, 1.00, 1.00}, {4.458, 10.167, 27.67, 204.4}, {74.57, 499.21, 4673.37, 53.98 * 1024},
     {0.00, 0.00, 0.00, kNone}, {0.0705, 0.0705, 0.516, 0.63}},
    {{1.01, 1.00, 1.00, 1.01}, {4.515, 10.192, 27.65, 205.9}, {74.95, 499.59, 4673.68, 53.98 * 1024},
     {0.02, 0.01, 0.01, kNone}, {0.0683, 0.1309, 0.197, 1.06}},
    {{0.97, 1.21, 0.96, 1.01}, {4.308, 16.158, 26.48, 206.6}, {58.11, 482.75, 4656.98, 53.96 * 1024},
     {0.02, 0.10, 0.02, kNone}, {0.0588, 3.0826, 0.268, 0.48}},
    {{0.96, 1.89, 1.01, 1.00}, {4.303, 17.477, 28.08, 205.1}, {59.27, 483.88, 4657.76, 53.96 * 1024},
     {0.02, 0.13, 0.04, kNone}, {0.0608, 3.1137, 0.783, 0.91}},
    {{0.97, 1.49, 1.02, 1.01}, {4.315, 14.450, 28.16, 205.7}, {59.34, 483.98, 4657.89, 53.96 * 1024},
     {0.02, 0.30, 0.02, kNone}, {0.0591, 1.9526, 0.480, 1.17}},
    {{0.99, 1.73, 1.03, 1.01}, {4.394, 13.882, 28.61, 206.2}, {59.32, 483.96, 4657.74, 53.96 * 1024},
     {0.02, 0.31, 0.02, kNone}, {0.0563, 3.3221, 0.345, 0.70}},
    {{0.97, 1.08, 1.02, 0.98}, {4.310, 10.927, 28.10, 200.4}, {53.23, 396.51, 3757.36, 36.36 * 1024},
     {0.01, 0.02, 0.02, kNone}, {0.0698, 0.2323, 0.638, 1.04}},
    {{0.97, 1.04, 1.00, 0.94}, {4.309, 10.588, 27.70, 191.8}, {44.28, 306.19, 2852.3, 27.55 * 1024},
     {0.02, 0.04, 0.02, kNone}, {0.0700, 0.5718, 0.540, 0.81}},
    {{0.96, 0.96, 0.92, 0.85}, {4.291, 9.765, 25.45, 173.0}, {44.54, 309.26, 2883.25, 27.85 * 1024},
     {0.02, 0.02, 0.03, kNone}, {0.0539, 0.1305, 0.474, 0.96}},
    {{0.98, 1.00, 0.84, 0.67}, {4.349, 10.244, 23.19, 137.5}, {27.51, 46.72, 237.55, 2.19 * 1024},
     {0.02, 0.02, 0.03, kNone}, {0.0524, 0.1725, 0.600, 0.74}},
    {{0.96, 0.95, 0.78, 0.69}, {4.286, 9.632, 21.52, 140.8}, {6.27, 143.91, 2029.17, 32.99 * 1024},
     {0.02, 0.02, 0.02, kNone}, {0.0684, 0.1572, 0.460, 0.51}},
}};

// HttpClientBenchmark, 2020-08-11.
inline constexpr std::array<JosFigures, kJosVersions> kJosHttpClientBenchmarkFigures{{
    {{1.00, 1.00, 1.00, 1.00}, {4.548, 10.379, 27.98, 201.7}, {74.01, 494.44, 4626.33, 53.52 * 1024},
     {0.00, 0.00, 0.00, kNone}, {0.0799, 0.1256, 0.265, 1.01}},
    {{0.99, 0.99, 1.00, 1.02}, {4.511, 10.238, 27.83, 206.2}, {74.25, 494.67, 4626.47, 53.52 * 1024},
     {0.02, 0.02, 0.02, kNone}, {0.0788, 0.0766, 0.369, 1.05}},
    {{0.95, 0.88, 0.95, 1.02}, {4.342, 9.185, 26.58, 204.8}, {57.41, 477.84, 4609.57, 53.51 * 1024},
     {0.02, 0.02, 0.01, kNone}, {0.0811, 0.1539, 0.181, 0.91}},
    {{0.94, 0.88, 0.96, 1.01}, {4.270, 9.212, 26.71, 204.1}, {58.54, 478.96, 4610.61, 53.51 * 1024},
     {0.02, 0.02, 0.02, kNone}, {0.0853, 0.1642, 0.438, 0.57}},
    {{0.94, 0.89, 0.96, 1.02}, {4.300, 9.221, 26.85, 206.2}, {58.63, 479.05, 4610.89, 53.51 * 1024},
     {0.02, 0.03, 0.01, kNone}, {0.0554, 0.2122, 0.262, 1.09}},
    {{0.96, 0.89, 0.99, 1.02}, {4.346, 9.190, 29.20, 205.0}, {58.63, 479.05, 4611.32, 53.51 * 1024},
     {0.02, 0.01, 0.08, kNone}, {0.0461, 0.1226, 1.431, 0.79}},
    {{0.95, 0.87, 1.03, 0.98}, {4.314, 9.070, 28.76, 198.7}, {52.54, 391.59, 3710.51, 35.9 * 1024},
     {0.03, 0.01, 0.03, kNone}, {0.0938, 0.0949, 0.744, 1.29}},
    {{0.95, 0.88, 1.03, 0.96}, {4.298, 9.134, 28.69, 192.7}, {43.59, 301.31, 2805.2, 27.09 * 1024},
     {0.02, 0.01, 0.03, kNone}, {0.0828, 0.1274, 0.886, 1.03}},
    {{0.94, 0.85, 0.90, 0.85}, {4.271, 8.923, 25.28, 171.9}, {43.84, 304.77, 2836.12, 27.39 * 1024},
     {0.03, 0.02, 0.01, kNone}, {0.0793, 0.1824, 0.317, 0.80}},
    {{0.96, 0.91, 0.83, 0.68}, {4.363, 9.456, 21.34, 137.3}, {26.84, 41.8, 190.46, 1.73 * 1024},
     {0.03, 0.03, 0.03, kNone}, {0.0869, 0.1986, 1.188, 1.30}},
    {{0.95, 0.82, 0.71, 0.69}, {4.334, 8.497, 19.99, 138.4}, {5.57, 139.03, 1982.46, 32.53 * 1024},
     {0.02, 0.01, 0.01, kNone}, {0.0602, 0.1305, 0.242, 1.07}},
}};

// The rows of one table: the mapping with that table's figures, and the allocation ratios computed.
constexpr std::array<SeedRow, kJosVersions> jos_rows(const std::array<JosFigures, kJosVersions>& figures) {
  std::array<SeedRow, kJosVersions> rows{};
  for (std::size_t v = 0; v < kJosVersions; ++v) {
    const JosMapping& m = kJosMapping[v];
    std::array<double, 4> alloc_ratio{};
    std::array<double, 4> ratio_sd{};
    for (std::size_t s = 0; s < kJosSizes.size(); ++s) {
      alloc_ratio[s] = figures[v].allocated_kb[s] / figures[0].allocated_kb[s];  // NaN in, NaN out
      const double printed_sd = figures[v].ratio_sd[s];  // kNone (NaN) is the one value unequal to itself
      ratio_sd[s] = printed_sd == printed_sd ? printed_sd : figures[v].stddev_ms[s] / figures[0].mean_ms[s];
    }
    rows[v] = SeedRow{.method = m.method,
                      .strategy = m.strategy,
                      .client = m.client,
                      .published_ratio = figures[v].ratio,
                      .published_ratio_sd = ratio_sd,
                      .published_alloc_ratio = alloc_ratio,
                      .beyond_seed = m.beyond_seed,
                      .same = m.same,
                      .differs = m.differs,
                      // Version 0 is the table's first row: the page reads every row against it anyway.
                      .compared_with = m.compared_with == m.method || m.compared_with == "Version 0"
                                           ? std::string_view{}
                                           : m.compared_with};
  }
  return rows;
}

inline constexpr auto kJosGetAllProjectsQuery = jos_rows(kJosGetAllProjectsQueryFigures);
inline constexpr auto kJosHttpClientBenchmark = jos_rows(kJosHttpClientBenchmarkFigures);

}  // namespace ringlab::bench::seeds
