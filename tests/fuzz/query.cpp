// Fuzz target: the server's target and query parsing (server/src/query.cpp) and routing
// (server/src/routes.cpp), pure functions checked against what they promise: views point into the
// input, parse_decimal agrees with std::from_chars, a routed request's parameters are in range.
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ringlab/server/query.hpp"
#include "ringlab/server/routes.hpp"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "query fuzz: %s\n", what);
    std::abort();
  }
}

bool inside(std::string_view part, std::string_view whole) {
  return part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringlab::server;
  // Its own allocation of exactly the input's size: ASan sees any read past the end.
  std::string owned(reinterpret_cast<const char*>(data), size);
  const std::string_view input(owned);
  if (auto target = split_target(input)) {
    // An absolute-form target without a path gets the literal "/" (query.hpp): not a view.
    require((inside(target->path, input) || target->path == "/") && inside(target->query, input),
            "split_target view outside its input");
    require(!target->path.empty() && target->path.front() == '/', "path does not start with '/'");
    for (std::string_view key : {"count", "format", "chunked", "chunk", "conn", ""}) {
      if (auto value = find_param(target->query, key)) require(inside(*value, target->query), "find_param view outside");
    }
  }
  for (uint64_t max : {uint64_t{0}, uint64_t{1'000'000}, UINT64_MAX}) {
    const auto parsed = parse_decimal(input, max);
    uint64_t expected = 0;
    const bool digits = !input.empty() && input.find_first_not_of("0123456789") == std::string_view::npos;
    const auto [end, ec] = std::from_chars(input.data(), input.data() + input.size(), expected);
    const bool fits = digits && ec == std::errc{} && end == input.data() + input.size() && expected <= max;
    require(parsed.has_value() == fits, "parse_decimal disagrees with from_chars on acceptance");
    if (parsed) require(*parsed == expected, "parse_decimal disagrees with from_chars on the value");
  }
  for (std::string_view method : {"GET", "HEAD", "POST"}) {
    if (auto routed = route_request(method, input)) {
      require(routed->count <= kMaxCount, "count above kMaxCount");
      require(routed->chunk_bytes >= 1 && routed->chunk_bytes <= kMaxChunkBytes, "chunk out of range");
      require(count_limit(routed->route, CountLimits{}) <= kMaxCount, "count_limit above kMaxCount");
    } else {
      require(routed.error().status >= 400 && routed.error().status < 500, "route error is not a 4xx");
    }
  }
  return 0;
}
