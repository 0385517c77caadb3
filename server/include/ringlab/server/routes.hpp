#pragma once
// Routing: from a request's method and target to what the server will answer, or to the error
// status it must give instead. Pure functions, no I/O, so the whole table is unit-tested.
//
// Routes: route_table() below is their one list (path, method, what each answers); `server --help`
// prints it, and tests hold docs/server.md's route table to it. Every route also takes
// chunked=1|0|true|false and chunk=BYTES (1..16 MiB, default 4096). HEAD is accepted wherever GET is
// (the head of the GET answer, no body).
//
// Parameters: count defaults to 10 when absent; a present count must be a decimal in 0..1,000,000.
// Parameters a route does not use are ignored, even when their value would be invalid elsewhere.
// The server then applies its own, lower bound (count_limit below: --max-count and --max-answer),
// so that one small request cannot ask for gigabytes of work.
//
// Order of checks, so that each bad request gets one well-defined status: target shape (400), path
// (404), method (405 with Allow), parameters (400). Error messages are string literals (they live
// forever) and go into a JSON body {"error": "..."}.
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>

namespace ringlab::server {

enum class Route : uint8_t { weather, repos, echo, plaintext, health, proxy, env, github, stats, profiles };
enum class Format : uint8_t { json, ndjson };
enum class UpstreamConnection : uint8_t { pooled, fresh };
// How /proxy's handler reaches the upstream (server/src/upstream.hpp): by starting the fetch itself
// (manual, the default) or through the worker's typed client (typed), as the typed-vs-manual article's
// two endpoints do. The same fetch and pool either way.
enum class UpstreamClient : uint8_t { manual, typed };

inline constexpr uint64_t kMaxCount = 1'000'000;
inline constexpr uint32_t kDefaultCount = 10;
inline constexpr uint32_t kDefaultChunkBytes = 4096;
inline constexpr uint32_t kMaxChunkBytes = 16u << 20;

struct RoutedRequest {
  Route route = Route::health;
  bool head_only = false;  // HEAD request
  uint32_t count = kDefaultCount;
  Format format = Format::json;
  bool chunked = false;
  uint32_t chunk_bytes = kDefaultChunkBytes;
  // cache=0: /weather, /repos, /github and /profiles serialize the body for this request and drop it
  // afterwards, as the seeds' ASP.NET Core servers do, instead of serving it from the thread's body
  // cache; chunked, it is serialized as it is sent and chunk_bytes does not apply
  // (ServerOptions::serializer_buffer_bytes).
  bool cached = true;
  // pages=1: /weather, /repos, /github and /profiles answer a cached, unchunked body from a page-aligned copy
  // with a zero-copy send (IORING_OP_SEND_ZC), the head in a send of its own, so that the body's TCP
  // segments carry whole pages a receiver can map instead of copying (TCP_ZEROCOPY_RECEIVE); the
  // server's --body-strategy does not apply to that answer.
  bool pages = false;
  UpstreamConnection upstream = UpstreamConnection::pooled;
  UpstreamClient upstream_client = UpstreamClient::manual;  // /proxy?client=manual|typed
  // /proxy?answer=status: the upstream's body is dropped and the answer is its status alone (200, no
  // body), as an endpoint that only checks IsSuccessStatusCode answers.
  bool status_only = false;
};

struct RouteError {
  int status = 400;
  std::string_view message;  // a string literal
  std::string_view allow;    // Allow header value for 405, empty otherwise
};

[[nodiscard]] std::expected<RoutedRequest, RouteError> route_request(std::string_view method,
                                                                     std::string_view target) noexcept;

// One row of the table route_request() reads.
struct RouteEntry {
  std::string_view path;
  Route route;
  bool is_get;  // GET (and HEAD) route; otherwise POST
  bool uses_count;
  bool uses_format;
  std::string_view answer;  // what it answers, as `server --help` says it
};
[[nodiscard]] std::span<const RouteEntry> route_table() noexcept;
[[nodiscard]] constexpr std::string_view route_method(const RouteEntry& entry) noexcept {
  return entry.is_get ? "GET" : "POST";
}

// Bounds of the work one request may ask for. A record of the generated bodies is at most
// kMax*RecordBytes long, separators included (tests/server/routes_test.cpp checks the generator
// against them), so count_limit() records fit in max_answer_bytes.
struct CountLimits {
  uint64_t max_count = kMaxCount;           // --max-count
  uint64_t max_answer_bytes = 64ull << 20;  // --max-answer
};
inline constexpr uint64_t kMaxWeatherRecordBytes = 128;
inline constexpr uint64_t kMaxRepoRecordBytes = 2048;
// About 950 bytes on average, 1,360 at most over the first 200,000: the bound of a description of 99
// words, each at its longest, with the 21 other fields.
inline constexpr uint64_t kMaxGithubRecordBytes = 2048;
// jos's records (json/profiles.hpp): about 900 bytes, at most 1,200 or so (an "about" of seven sentences of
// fifteen words at their longest).
inline constexpr uint64_t kMaxProfileRecordBytes = 2048;
// The largest count `route` answers (weather, repos, github, profiles; proxy fetches weather); kMaxCount for the
// routes that take no count.
[[nodiscard]] uint64_t count_limit(Route route, const CountLimits& limits) noexcept;

[[nodiscard]] std::string_view route_name(Route route) noexcept;

// The routes, their parameters and limits as `server --help` lists them (from the table route_request
// reads and the constants above, so the help cannot drift from the behaviour). `limits`: the count
// limits quoted as the defaults.
[[nodiscard]] std::string routes_help(const CountLimits& limits = {});
[[nodiscard]] std::string_view format_name(Format format) noexcept;

}  // namespace ringlab::server
