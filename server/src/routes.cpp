#include "ringlab/server/routes.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "ringlab/server/query.hpp"

namespace ringlab::server {
namespace {

constexpr std::array<RouteEntry, 10> kRoutes{{
    {"/weather", Route::weather, true, true, true, "count WeatherForecast records {date, temperatureC, summary, temperatureF}"},
    {"/repos", Route::repos, true, true, true, "count GitHub-repository-like records, about 1-2 KB each"},
    {"/github", Route::github, true, true, true, "count flat 22-field repository records (jos's DTO), about 1 KB each"},
    {"/profiles", Route::profiles, true, true, true, "count records of jos's GitHub dummy API (21 keys, tags, floats), about 0.9 KB each"},
    {"/echo", Route::echo, false, false, false, "the request body, same Content-Type (above --max-body: 413)"},
    {"/plaintext", Route::plaintext, true, false, false, "\"Hello, World!\" as text/plain"},
    {"/health", Route::health, true, false, false, "{\"status\":\"ok\"}"},
    {"/proxy", Route::proxy, true, true, false, "/weather?count=N fetched from --upstream (default: this server)"},
    {"/env", Route::env, true, false, false, "this server's environment as one flat JSON object of strings (kernel, CPU, build, options)"},
    {"/stats", Route::stats, true, false, false, "this server's counters since it started, summed over its threads, as one flat JSON object of numbers (requests, sends, zc_sends, zc_copied, ...)"},
}};

constexpr std::string_view kAllowGet = "GET, HEAD";
constexpr std::string_view kAllowPost = "POST";

std::optional<bool> parse_flag(std::string_view value) noexcept {
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  return std::nullopt;
}

// A parameter that names one of `choices`: `value` becomes the one named, and keeps its default when
// the parameter is absent; false when it names none of them.
template <class T, std::size_t N>
bool parse_choice(std::optional<std::string_view> text, const std::pair<std::string_view, T> (&choices)[N],
                  T& value) noexcept {
  if (!text) return true;
  for (const auto& [name, choice] : choices) {
    if (*text == name) {
      value = choice;
      return true;
    }
  }
  return false;
}

}  // namespace

std::span<const RouteEntry> route_table() noexcept { return kRoutes; }

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
  if (entry->uses_format &&
      !parse_choice(find_param(query, "format"), {{"json", Format::json}, {"ndjson", Format::ndjson}}, routed.format)) {
    return std::unexpected(RouteError{400, "format must be json or ndjson", {}});
  }
  if (entry->route == Route::proxy) {
    if (!parse_choice(find_param(query, "conn"),
                      {{"pooled", UpstreamConnection::pooled}, {"fresh", UpstreamConnection::fresh}}, routed.upstream)) {
      return std::unexpected(RouteError{400, "conn must be pooled or fresh", {}});
    }
    if (!parse_choice(find_param(query, "answer"), {{"body", false}, {"status", true}}, routed.status_only)) {
      return std::unexpected(RouteError{400, "answer must be body or status", {}});
    }
    if (!parse_choice(find_param(query, "client"),
                      {{"manual", UpstreamClient::manual}, {"typed", UpstreamClient::typed}}, routed.upstream_client)) {
      return std::unexpected(RouteError{400, "client must be manual or typed", {}});
    }
  }
  if (auto text = find_param(query, "chunked")) {
    auto flag = parse_flag(*text);
    if (!flag) return std::unexpected(RouteError{400, "chunked must be 1, 0, true or false", {}});
    routed.chunked = *flag;
  }
  if (auto text = find_param(query, "cache")) {
    auto flag = parse_flag(*text);
    if (!flag) return std::unexpected(RouteError{400, "cache must be 1, 0, true or false", {}});
    routed.cached = *flag;
  }
  if (auto text = find_param(query, "pages")) {
    auto flag = parse_flag(*text);
    if (!flag) return std::unexpected(RouteError{400, "pages must be 1, 0, true or false", {}});
    routed.pages = *flag;
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
    case Route::github: record = kMaxGithubRecordBytes; break;
    case Route::profiles: record = kMaxProfileRecordBytes; break;
    case Route::echo:
    case Route::plaintext:
    case Route::health:
    case Route::env:
    case Route::stats: return kMaxCount;
  }
  return std::min({limits.max_count, kMaxCount, limits.max_answer_bytes / record});
}

std::string routes_help(const CountLimits& limits) {
  std::string out = "Routes (a GET route answers HEAD too; another method: 405 with Allow):\n";
  for (const RouteEntry& r : kRoutes) {
    std::string target(r.path);
    if (r.uses_count) target += "?count=N";
    if (r.uses_format) target += "[&format=ndjson]";
    if (r.route == Route::proxy) target += "[&conn=pooled|fresh][&answer=body|status][&client=manual|typed]";
    std::string method(route_method(r));
    method.resize(4, ' ');  // the paths line up under GET and POST
    std::string line = "  " + method + " " + target;
    line.append(line.size() < 48 ? 48 - line.size() : 1, ' ');
    out += line + std::string(r.answer) + "\n";
  }
  const auto number = [](uint64_t n) {
    std::string digits = std::to_string(n);
    for (std::size_t i = digits.size(); i > 3; i -= 3) digits.insert(i - 3, ",");
    return digits;
  };
  // fmt::format's named arguments: the limits as the server runs with them.
  out += fmt::format(
      R"(Parameters (every route ignores those it does not use; a bad value is a 400 with {{"error": "..."}}):
  count=N                  records; default {default_count}; an integer from 0 to {max_count}, and at most
                           the route's limit: --max-count, and as many records as fit in --max-answer
                           (by default /weather and /proxy {weather}, /repos {repos}, /github {github}, /profiles {profiles})
  format=json|ndjson       /weather, /repos, /github, /profiles: a JSON array (default) or one record per line
                           (application/x-ndjson)
  conn=pooled|fresh        /proxy: one kept-alive upstream connection (default) or a new one per request
  answer=body|status       /proxy: the upstream's body (default), or its status alone (200, no body)
  client=manual|typed      /proxy: the handler starts the upstream fetch itself (default), or calls the
                           worker's typed client for it (the same fetch, pool and answer)
  chunked=1|0|true|false   any route: answer with chunked transfer coding (default 0)
  cache=1|0|true|false     /weather, /repos, /github, /profiles: 0 serializes the body for this request alone, bypassing
                           the body cache (default 1); with chunked=1 it is serialized as it is sent, a
                           chunk per --serializer-buffer
  pages=1|0|true|false     /weather, /repos, /github, /profiles, cached and unchunked: the body sent from a
                           page-aligned copy with a zero-copy send, the head in a send of its own (whole-page
                           segments a receiver can map with TCP_ZEROCOPY_RECEIVE; default 0)
  chunk=BYTES              the size of each chunk, 1 to {max_chunk} (default {default_chunk}); not for a body serialized as it is sent
)",
      fmt::arg("default_count", number(kDefaultCount)), fmt::arg("max_count", number(kMaxCount)),
      fmt::arg("weather", number(count_limit(Route::weather, limits))),
      fmt::arg("repos", number(count_limit(Route::repos, limits))),
      fmt::arg("github", number(count_limit(Route::github, limits))),
      fmt::arg("profiles", number(count_limit(Route::profiles, limits))),
      fmt::arg("max_chunk", number(kMaxChunkBytes)), fmt::arg("default_chunk", number(kDefaultChunkBytes)));
  return out;
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
    case Route::github: return "github";
    case Route::stats: return "stats";
    case Route::profiles: return "profiles";
  }
  return "?";
}

std::string_view format_name(Format format) noexcept {
  return format == Format::ndjson ? "ndjson" : "json";
}

}  // namespace ringlab::server
