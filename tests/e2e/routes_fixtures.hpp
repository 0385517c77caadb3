#pragma once
// What the two files of route tests share: the body the server generates for a route, and a GET
// whose answer is a JSON object.
#include <doctest/doctest.h>

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "ringlab/server/body_cache.hpp"
#include "support.hpp"

namespace ringlab::e2e {

inline std::string expected_body(server::Route route, server::Format format, uint32_t count) {
  return server::generate_body(server::BodyKey{route, format, count}).bytes;
}

// GET `target`: a 200 whose body is a JSON object, parsed by `parser` (which owns what it returns).
inline simdjson::dom::object get_json_object(RawClient& client, std::string_view target, simdjson::dom::parser& parser) {
  const Response response = client.get(target);
  CHECK(response.status == 200);
  CHECK(response.header("Content-Type") == "application/json");
  simdjson::dom::object object;
  REQUIRE(parser.parse(response.body).get(object) == simdjson::SUCCESS);
  return object;
}

}  // namespace ringlab::e2e
