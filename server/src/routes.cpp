#include "ringlab/server/routes.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "ringlab/server/query.hpp"

namespace ringlab::server {
namespace {

struct RouteEntry {
  std::string_view path;
  Route route;
  bool is_get;  // GET (and HEAD) route; otherwise POST
  bool uses_count;
  bool uses_format;
};

constexpr std::array<RouteEntry, 7> kRoutes{{
    {"/weather", Route::weather, true, true, true},
    {"/repos", Route::repos, true, true, true},
    {"/echo", Route::echo, false, false, false},
    {"/plaintext", Route::plaintext, true, false, false},
    {"/health", Route::health, true, false, false},
    {"/proxy", Route::proxy, true, true, false},
    {"/env", Route::env, true, false, false},
}};

constexpr std::string_view kAllowGet = "GET, HEAD";
constexpr std::string_view kAllowPost = "POST";

std::optional<bool> parse_flag(std::string_view value) noexcept {
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  return std::nullopt;
}

}  // namespace

std::expected<RoutedRequest, RouteError> route_request(std::string_view method, std::string_view target) noexcept {
  auto split = split_target(target);
  if (!split) return std::unexpected(RouteError{400, "request target must be a path (\"/...\")", {}});

  const RouteEntry* entry = nullptr;
  for (const auto& candidate : kRoutes) {
    if (candidate.path == split->path) {
      entry = &candidate;
      break;
    }
  }
  if (entry == nullptr) return std::unexpected(RouteError{404, "no such route", {}});

  RoutedRequest routed;
  routed.route = entry->route;
  if (entry->is_get) {
    if (method == "HEAD") {
      routed.head_only = true;
    } else if (method != "GET") {
      return std::unexpected(RouteError{405, "method not allowed on this route", kAllowGet});
    }
  } else if (method != "POST") {
    return std::unexpected(RouteError{405, "method not allowed on this route", kAllowPost});
  }

  const std::string_view query = split->query;
  if (entry->uses_count) {
    if (auto text = find_param(query, "count")) {
      auto count = parse_decimal(*text, kMaxCount);
      if (!count) return std::unexpected(RouteError{400, "count must be an integer from 0 to 1000000", {}});
      routed.count = static_cast<uint32_t>(*count);
    }
  }
  if (entry->uses_format) {
    if (auto text = find_param(query, "format")) {
      if (*text == "json") {
        routed.format = Format::json;
      } else if (*text == "ndjson") {
        routed.format = Format::ndjson;
      } else {
        return std::unexpected(RouteError{400, "format must be json or ndjson", {}});
      }
    }
  }
  if (entry->route == Route::proxy) {
    if (auto text = find_param(query, "conn")) {
      if (*text == "pooled") {
        routed.upstream = UpstreamConnection::pooled;
      } else if (*text == "fresh") {
        routed.upstream = UpstreamConnection::fresh;
      } else {
        return std::unexpected(RouteError{400, "conn must be pooled or fresh", {}});
      }
    }
  }
  if (auto text = find_param(query, "chunked")) {
    auto flag = parse_flag(*text);
    if (!flag) return std::unexpected(RouteError{400, "chunked must be 1, 0, true or false", {}});
    routed.chunked = *flag;
  }
  if (auto text = find_param(query, "chunk")) {
    auto bytes = parse_decimal(*text, kMaxChunkBytes);
    if (!bytes || *bytes == 0) return std::unexpected(RouteError{400, "chunk must be an integer from 1 to 16777216", {}});
    routed.chunk_bytes = static_cast<uint32_t>(*bytes);
  }
  return routed;
}

uint64_t count_limit(Route route, const CountLimits& limits) noexcept {
  uint64_t record = 0;
  switch (route) {
    case Route::weather:
    case Route::proxy: record = kMaxWeatherRecordBytes; break;
    case Route::repos: record = kMaxRepoRecordBytes; break;
    case Route::echo:
    case Route::plaintext:
    case Route::health:
    case Route::env: return kMaxCount;
  }
  return std::min({limits.max_count, kMaxCount, limits.max_answer_bytes / record});
}

std::string_view route_name(Route route) noexcept {
  switch (route) {
    case Route::weather: return "weather";
    case Route::repos: return "repos";
    case Route::echo: return "echo";
    case Route::plaintext: return "plaintext";
    case Route::health: return "health";
    case Route::proxy: return "proxy";
    case Route::env: return "env";
  }
  return "?";
}

std::string_view format_name(Format format) noexcept {
  return format == Format::ndjson ? "ndjson" : "json";
}

}  // namespace ringlab::server
