#pragma once
// The generator's bodies (json/serialize.hpp) as the strategy tests parse, feed and serve them: `count`
// records of one payload in one string, a JSON array or NDJSON lines, byte for byte what the server
// answers for them; and their checksum (json/checksum.hpp), the ground truth a strategy's must equal (for
// jos, that of the three fields of jos's DTO, which every strategy reads).
//
// Threads: any; nothing here is shared.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ringlab/json/checksum.hpp"
#include "ringlab/json/profiles.hpp"
#include "ringlab/json/serialize.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::testing {

// Records 0..count-1 of `payload`: "[{...},...]", or with `ndjson` one record per line.
inline std::string generated_body(strategies::Payload payload, std::size_t count, bool ndjson = false) {
  std::string body;
  if (payload == strategies::Payload::repos) {
    ndjson ? json::append_repos_ndjson(body, count) : json::append_repos_json(body, count);
  } else if (payload == strategies::Payload::github) {
    ndjson ? json::append_github_ndjson(body, count) : json::append_github_json(body, count);
  } else if (payload == strategies::Payload::profiles) {
    ndjson ? json::append_profiles_ndjson(body, count) : json::append_profiles_json(body, count);
  } else {
    ndjson ? json::append_weather_ndjson(body, count) : json::append_weather_json(body, count);
  }
  return body;
}

// The full checksum of records 0..count-1 of `payload`.
inline uint64_t generated_checksum(strategies::Payload payload, std::size_t count) {
  if (payload == strategies::Payload::repos) return json::checksum_repos(count);
  if (payload == strategies::Payload::github) return json::checksum_github(count);
  if (payload == strategies::Payload::profiles) return json::checksum_profiles(count);
  return json::checksum_weather(count);
}

}  // namespace ringlab::testing
