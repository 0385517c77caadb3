#include "ringlab/server/routes.hpp"

#include "ringlab/server/body_cache.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

using namespace ringlab::server;

TEST_CASE("route_request maps every route and its parameters") {
  // Each row names what differs from a plain GET's defaults.
  struct Row {
    std::string_view method = "GET";
    std::string_view target = {};
    Route route = Route::weather;
    uint32_t count = kDefaultCount;
    Format format = Format::json;
    bool chunked = false;
    uint32_t chunk = 4096;
    UpstreamConnection upstream = UpstreamConnection::pooled;
    UpstreamClient client = UpstreamClient::manual;
    bool head_only = false;
  };
  constexpr auto N = Format::ndjson;
  constexpr auto F = UpstreamConnection::fresh;
  constexpr auto T = UpstreamClient::typed;
  const Row rows[] = {
      {.target = "/weather?count=10", .route = Route::weather, .count = 10},
      {.target = "/weather", .route = Route::weather},
      {.target = "/weather?count=0", .route = Route::weather, .count = 0},
      {.target = "/weather?count=1000000", .route = Route::weather, .count = 1'000'000},
      {.target = "/weather?count=5&format=ndjson", .route = Route::weather, .count = 5, .format = N},
      {.target = "/weather?count=5&format=json", .route = Route::weather, .count = 5},
      {.target = "/repos?count=3&chunked=1", .route = Route::repos, .count = 3, .chunked = true},
      {.target = "/repos?count=3&chunked=true&chunk=100", .route = Route::repos, .count = 3, .chunked = true, .chunk = 100},
      {.target = "/repos?chunked=0", .route = Route::repos},
      {.target = "/repos?chunked=false&chunk=1", .route = Route::repos, .chunk = 1},
      {.target = "/repos?count=2&format=ndjson&chunked=1&chunk=16777216",
       .route = Route::repos,
       .count = 2,
       .format = N,
       .chunked = true,
       .chunk = 16u << 20},
      {.target = "/github?count=7", .route = Route::github, .count = 7},
      {.target = "/github?count=2&format=ndjson", .route = Route::github, .count = 2, .format = N},
      {.target = "/profiles?count=5", .route = Route::profiles, .count = 5},
      {.target = "/profiles?count=2&format=ndjson&chunked=1", .route = Route::profiles, .count = 2, .format = N, .chunked = true},
      {.method = "POST", .target = "/echo", .route = Route::echo},
      {.method = "POST", .target = "/echo?chunked=1&chunk=7", .route = Route::echo, .chunked = true, .chunk = 7},
      {.target = "/plaintext", .route = Route::plaintext},
      {.target = "/health", .route = Route::health},
      {.method = "HEAD", .target = "/health", .route = Route::health, .head_only = true},
      {.method = "HEAD", .target = "/weather?count=2", .route = Route::weather, .count = 2, .head_only = true},
      {.target = "/proxy?count=4", .route = Route::proxy, .count = 4},
      {.target = "/proxy?count=4&conn=fresh", .route = Route::proxy, .count = 4, .upstream = F},
      {.target = "/proxy?count=4&conn=pooled&chunked=1", .route = Route::proxy, .count = 4, .chunked = true},
      {.target = "/proxy?count=4&conn=fresh&answer=status", .route = Route::proxy, .count = 4, .upstream = F},
      {.target = "/proxy?count=4&answer=body", .route = Route::proxy, .count = 4},
      {.target = "/proxy?count=4&client=typed", .route = Route::proxy, .count = 4, .client = T},
      {.target = "/proxy?count=4&conn=fresh&answer=status&client=typed", .route = Route::proxy, .count = 4,
       .upstream = F, .client = T},
      {.target = "/proxy?client=manual", .route = Route::proxy},
      {.target = "/weather?count=3&client=sometimes", .route = Route::weather, .count = 3},
      // Unknown parameters, and parameters a route does not use, are ignored.
      {.target = "/weather?count=3&foo=bar&conn=nonsense", .route = Route::weather, .count = 3},
      {.target = "/plaintext?count=abc&format=xml", .route = Route::plaintext},
      {.method = "POST", .target = "/echo?count=-5", .route = Route::echo},
      {.target = "/proxy?count=4&format=xml", .route = Route::proxy, .count = 4},
      // The last occurrence wins.
      {.target = "/weather?count=abc&count=4", .route = Route::weather, .count = 4},
      {.target = "http://127.0.0.1:1/weather?count=6", .route = Route::weather, .count = 6},
  };
  for (const Row& row : rows) {
    INFO(row.method, " ", row.target);
    auto routed = route_request(row.method, row.target);
    REQUIRE_MESSAGE(routed.has_value(), "error ", (routed ? 0 : routed.error().status), ": ",
                    routed ? std::string_view() : routed.error().message);
    CHECK(routed->route == row.route);
    CHECK(routed->count == row.count);
    CHECK(routed->format == row.format);
    CHECK(routed->chunked == row.chunked);
    CHECK(routed->chunk_bytes == row.chunk);
    CHECK(routed->upstream == row.upstream);
    CHECK(routed->upstream_client == row.client);
    CHECK(routed->head_only == row.head_only);
    CHECK(routed->status_only == (row.target.find("answer=status") != std::string_view::npos));
    CHECK(routed->cached);  // no row asks for cache=0
  }
}

TEST_CASE("cache=0 asks for a body serialized for this request alone; cache=1 is the default") {
  for (const auto& [target, cached] : {std::pair{"/weather?count=3&cache=0", false},
                                       std::pair{"/repos?cache=false&chunked=1", false},
                                       std::pair{"/weather?cache=1", true}, std::pair{"/weather?cache=true", true},
                                       std::pair{"/weather", true}}) {
    INFO(target);
    auto routed = route_request("GET", target);
    REQUIRE(routed.has_value());
    CHECK(routed->cached == cached);
  }
}

TEST_CASE("pages=1 asks for the body from a page-aligned copy; pages=0 is the default") {
  for (const auto& [target, pages] : {std::pair{"/weather?count=3&pages=1", true}, std::pair{"/profiles?pages=true", true},
                                      std::pair{"/repos?pages=0", false}, std::pair{"/weather", false}}) {
    INFO(target);
    auto routed = route_request("GET", target);
    REQUIRE(routed.has_value());
    CHECK(routed->pages == pages);
  }
  auto refused = route_request("GET", "/weather?pages=yes");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().status == 400);
  CHECK(refused.error().message == "pages must be 1, 0, true or false");
}

TEST_CASE("route_request refuses bad targets, paths, methods and parameter values with their status") {
  struct Row {
    std::string_view method = "GET";
    std::string_view target = {};
    int status = 0;
    std::string_view allow = {};  // 405 only
  };
  const Row rows[] = {
      {.target = "*", .status = 400},
      {.target = "weather", .status = 400},
      {.target = "https://x/weather", .status = 400},
      {.target = "/nothing", .status = 404},
      {.target = "/weather/", .status = 404},
      {.target = "/Weather", .status = 404},
      {.method = "POST", .target = "/nothing", .status = 404},  // the path is checked before the method
      {.method = "POST", .target = "/weather", .status = 405, .allow = "GET, HEAD"},
      {.method = "PUT", .target = "/health", .status = 405, .allow = "GET, HEAD"},
      {.method = "DELETE", .target = "/plaintext", .status = 405, .allow = "GET, HEAD"},
      {.target = "/echo", .status = 405, .allow = "POST"},
      {.method = "HEAD", .target = "/echo", .status = 405, .allow = "POST"},
      // The method is checked before the parameters.
      {.method = "POST", .target = "/weather?count=abc", .status = 405, .allow = "GET, HEAD"},
      {.target = "/weather?count=", .status = 400},
      {.target = "/weather?count", .status = 400},
      {.target = "/weather?count=abc", .status = 400},
      {.target = "/weather?count=-1", .status = 400},
      {.target = "/weather?count=+1", .status = 400},
      {.target = "/weather?count=1e3", .status = 400},
      {.target = "/weather?count=1.5", .status = 400},
      {.target = "/weather?count=1000001", .status = 400},
      {.target = "/weather?count=18446744073709551617", .status = 400},
      {.target = "/repos?count=%31", .status = 400},
      {.target = "/proxy?count=2000000", .status = 400},
      {.target = "/weather?format=xml", .status = 400},
      {.target = "/weather?format=", .status = 400},
      {.target = "/proxy?conn=sometimes", .status = 400},
      {.target = "/proxy?answer=headers", .status = 400},
      {.target = "/proxy?client=factory", .status = 400},
      {.target = "/proxy?client=", .status = 400},
      {.target = "/proxy?client=Typed", .status = 400},
      {.target = "/health?chunked=yes", .status = 400},
      {.target = "/weather?cache=no", .status = 400},
      {.target = "/weather?cache=", .status = 400},
      {.target = "/health?chunked=", .status = 400},
      {.target = "/health?chunk=0", .status = 400},
      {.target = "/health?chunk=16777217", .status = 400},
      {.target = "/health?chunk=abc", .status = 400},
  };
  for (const Row& row : rows) {
    INFO(row.method, " ", row.target);
    auto routed = route_request(row.method, row.target);
    REQUIRE_FALSE(routed.has_value());
    CHECK(routed.error().status == row.status);
    CHECK(routed.error().allow == row.allow);
    CHECK_FALSE(routed.error().message.empty());
  }
}

TEST_CASE("route and format names are stable") {
  CHECK(route_name(Route::weather) == "weather");
  CHECK(route_name(Route::repos) == "repos");
  CHECK(route_name(Route::github) == "github");
  CHECK(route_name(Route::profiles) == "profiles");
  CHECK(route_name(Route::echo) == "echo");
  CHECK(route_name(Route::plaintext) == "plaintext");
  CHECK(route_name(Route::health) == "health");
  CHECK(route_name(Route::proxy) == "proxy");
  CHECK(format_name(Format::json) == "json");
  CHECK(format_name(Format::ndjson) == "ndjson");
}

TEST_CASE("count_limit keeps one generated answer within --max-answer and --max-count") {
  const CountLimits defaults;
  CHECK(count_limit(Route::repos, defaults) == (64ull << 20) / kMaxRepoRecordBytes);
  CHECK(count_limit(Route::github, defaults) == (64ull << 20) / kMaxGithubRecordBytes);
  CHECK(count_limit(Route::weather, defaults) == (64ull << 20) / kMaxWeatherRecordBytes);
  CHECK(count_limit(Route::proxy, defaults) == count_limit(Route::weather, defaults));
  CHECK(count_limit(Route::health, defaults) == kMaxCount);
  CHECK(count_limit(Route::repos, CountLimits{.max_count = 10}) == 10);
  CHECK(count_limit(Route::weather, CountLimits{.max_count = kMaxCount, .max_answer_bytes = 1280}) == 10);
}

TEST_CASE("the per-record bounds of count_limit hold for the generated bodies") {
  for (Route route : {Route::weather, Route::repos, Route::github, Route::profiles}) {
    const uint64_t bound = route == Route::weather ? kMaxWeatherRecordBytes
                           : route == Route::repos ? kMaxRepoRecordBytes
                           : route == Route::profiles   ? kMaxProfileRecordBytes
                                                   : kMaxGithubRecordBytes;
    constexpr uint32_t kCount = 3000;
    for (Format format : {Format::json, Format::ndjson}) {
      INFO(route_name(route), " ", format_name(format));
      const Body body = generate_body(BodyKey{route, format, kCount});
      CHECK(body.bytes.size() <= kCount * bound);
      if (format == Format::ndjson) {
        std::size_t longest = 0;
        std::string_view rest = body.bytes;
        while (!rest.empty()) {
          const std::size_t end = std::min(rest.find('\n'), rest.size());
          longest = std::max(longest, end + 1);  // the record, its newline (or a comma in JSON)
          rest.remove_prefix(std::min(end + 1, rest.size()));
        }
        CHECK(longest <= bound);
      }
    }
  }
}

TEST_CASE("the routes help lists every route as route_request accepts it, with the limits it applies") {
  const std::string help = routes_help();
  INFO(help);
  struct Row {
    std::string_view listed;  // as the help writes it: the method, then the path and its parameters
    std::string_view target;  // a request the listed form describes
  };
  const Row rows[] = {
      {"GET  /weather?count=N[&format=ndjson]", "/weather?count=3&format=ndjson"},
      {"GET  /repos?count=N[&format=ndjson]", "/repos?count=3&format=ndjson"},
      {"GET  /github?count=N[&format=ndjson]", "/github?count=3&format=ndjson"},
      {"POST /echo", "/echo"},
      {"GET  /plaintext", "/plaintext"},
      {"GET  /health", "/health"},
      {"GET  /proxy?count=N[&conn=pooled|fresh][&answer=body|status][&client=manual|typed]",
       "/proxy?count=3&conn=fresh&answer=status&client=typed"},
  };
  for (const Row& row : rows) {
    INFO(row.listed);
    CHECK(help.find(row.listed) != std::string::npos);
    CHECK(route_request(row.listed.substr(0, row.listed.find(' ')), row.target).has_value());
  }
  // Every route of the table, with its method, its path and what it answers; and each is routed.
  for (const RouteEntry& entry : route_table()) {
    INFO(entry.path);
    CHECK(help.find(std::string(route_method(entry)) + (entry.is_get ? "  " : " ") + std::string(entry.path)) !=
          std::string::npos);
    CHECK(help.find(entry.answer) != std::string::npos);
    const auto routed = route_request(route_method(entry), entry.path);
    REQUIRE(routed.has_value());
    CHECK(routed->route == entry.route);
  }
  // The numbers it quotes are the ones route_request and count_limit apply.
  CHECK(help.find("from 0 to 1,000,000") != std::string::npos);
  CHECK_FALSE(route_request("GET", "/weather?count=1000001").has_value());
  CHECK(help.find("/weather and /proxy 524,288, /repos 32,768, /github 32,768") != std::string::npos);
  CHECK(count_limit(Route::weather, CountLimits{}) == 524'288);
  CHECK(count_limit(Route::repos, CountLimits{}) == 32'768);
  CHECK(help.find("1 to 16,777,216 (default 4,096)") != std::string::npos);
  CHECK_FALSE(route_request("GET", "/health?chunk=16777217").has_value());
  CHECK(route_request("GET", "/health?chunked=true&chunk=16777216").has_value());
  // Other limits change the quoted defaults.
  CHECK(routes_help(CountLimits{1000, 64ull << 20}).find("/weather and /proxy 1,000, /repos 1,000") !=
        std::string::npos);
}

namespace {

// The "METHOD /path" of each row of the first table under docs/server.md's "## Routes" heading; the
// query a row shows (`GET /weather?count=N`) is left out.
std::vector<std::string> documented_routes() {
  std::ifstream file(RINGLAB_SOURCE_DIR "/docs/server.md");
  REQUIRE(file.is_open());
  std::vector<std::string> routes;
  bool in_section = false;
  bool in_table = false;
  for (std::string line; std::getline(file, line);) {
    if (line.starts_with("## ")) {
      in_section = line == "## Routes";
      continue;
    }
    if (!in_section) continue;
    if (!line.starts_with("|")) {
      if (in_table) break;  // the route table ended
      continue;
    }
    in_table = true;
    if (!line.starts_with("| `")) continue;  // its header and rule
    const std::size_t end = line.find('`', 3);
    REQUIRE(end != std::string::npos);
    const std::string cell = line.substr(3, end - 3);
    routes.push_back(cell.substr(0, cell.find('?')));
  }
  return routes;
}

}  // namespace

TEST_CASE("docs/server.md's route table lists exactly the routes of the table route_request reads") {
  std::vector<std::string> served;
  for (const RouteEntry& entry : route_table()) {
    served.push_back(std::string(route_method(entry)) + " " + std::string(entry.path));
  }
  std::vector<std::string> documented = documented_routes();
  std::ranges::sort(served);
  std::ranges::sort(documented);
  const auto listed = [](const std::vector<std::string>& routes) {
    std::string text;
    for (const std::string& route : routes) text += (text.empty() ? "" : ", ") + route;
    return text;
  };
  INFO("docs/server.md: " << listed(documented));
  INFO("route table: " << listed(served));
  CHECK(documented == served);
  // Each route once in the table.
  CHECK(std::ranges::adjacent_find(served) == served.end());
}
