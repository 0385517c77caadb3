// rapidjson (SAX; a JSON library swapped in over the same body, as jos's Version 9 and 10 swap
// System.Text.Json for Utf8Json, with a reader-driven deserializer as his Version 8's JsonTextReader): the body
// is received as presized's (in place, into a padded buffer reused across requests), then rapidjson::Reader
// parses it in situ (strings unescaped where they lie in the body) and its SAX events are written straight
// into owning models reused in place. No DOM and no copy of the body: per request nothing is allocated once
// the records have the body's shape (the Reader, whose stack holds each number's digits, is kept too).
// Flags: full-precision numbers (score must equal what simdjson reads) and UTF-8 validation (simdjson
// validates too), so both reject and read the same bodies.
//
// The Reader's events go to rapidjson_handler.hpp's Handler, the values into the fields by
// rapidjson_values.hpp.
#include "rapidjson_handler.hpp"  // first: it sets rapidjson's SIMD scans before any rapidjson header

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <string>

#include "json_libraries.hpp"

namespace ringlab::strategies::detail {
namespace {

using rapidjson_sax::Handler;

// `reader` is kept across bodies by the strategy: full-precision number parsing copies each number's digits
// onto the Reader's own stack, which keeps its capacity while the Reader lives.
template <class Record>
json::Status parse_body(rapidjson::Reader& reader, base::PaddedBuffer& body, std::pmr::vector<Record>& out) {
  return rapidjson_sax::parse_insitu(reader, body,
                                     [&out](rapidjson::InsituStringStream& stream) { return Handler<Record>(out, stream); });
}

// LibraryStrategy's parser.
struct RapidJsonLibrary {
  template <class Record>
  json::Status parse(base::PaddedBuffer& body, std::pmr::vector<Record>& out) {
    return parse_body(reader, body, out);
  }
  static constexpr bool kInSitu = true;  // LibraryFloor: the body is overwritten where it is parsed
  rapidjson::Reader reader;  // kept across bodies (parse_body says why)
};

}  // namespace

json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::WeatherForecast>& out) {
  rapidjson::Reader reader;
  return parse_body(reader, body, out);
}
json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::Repository>& out) {
  rapidjson::Reader reader;
  return parse_body(reader, body, out);
}
json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::GithubRepository>& out) {
  rapidjson::Reader reader;
  return parse_body(reader, body, out);
}
json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::JosRepository>& out) {
  rapidjson::Reader reader;
  return parse_body(reader, body, out);
}

std::unique_ptr<Strategy> make_rapidjson(const Recipe& recipe) {
  return std::make_unique<LibraryStrategy<RapidJsonLibrary>>(recipe);
}
std::unique_ptr<Strategy> make_floor_parse_rapidjson(const Recipe& recipe) {
  return std::make_unique<LibraryFloor<RapidJsonLibrary>>(recipe);
}

}  // namespace ringlab::strategies::detail
