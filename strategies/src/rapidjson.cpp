// rapidjson (SAX; a JSON library swapped in over the same body, as jos's Version 9 and 10 swap
// System.Text.Json for Utf8Json, with a reader-driven deserializer as his Version 8's JsonTextReader): the body
// is received as presized's (in place, into a padded buffer reused across requests), then rapidjson::Reader
// parses it in situ (strings unescaped where they lie in the body) and its SAX events are written straight
// into owning models reused in place. No DOM and no copy of the body: per request nothing is allocated once
// the records have the body's shape (the Reader is kept too: under the strict flags its stack holds each
// number's digits).
// Flags (rapidjson_handler.hpp): rapidjson and rapidjson_fresh run the library's fast configuration
// (kFastFlags: in situ, its SIMD string scan, normal-precision numbers, no UTF-8 validation);
// rapidjson_strict adds UTF-8 validation and full-precision numbers (kStrictFlags), what those cost.
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
using rapidjson_sax::kFastFlags;
using rapidjson_sax::kStrictFlags;

// `reader` is kept across bodies by the strategy (parse_insitu says why).
template <unsigned kFlags, class Record>
json::Status parse_body(rapidjson::Reader& reader, base::PaddedBuffer& body, std::pmr::vector<Record>& out) {
  return rapidjson_sax::parse_insitu<kFlags>(
      reader, body, [&out](rapidjson::InsituStringStream& stream) { return Handler<Record>(out, stream); });
}

template <class Record>
json::Status parse_with_new_reader(base::PaddedBuffer& body, std::pmr::vector<Record>& out, RapidjsonFlags flags) {
  rapidjson::Reader reader;
  return flags == RapidjsonFlags::strict ? parse_body<kStrictFlags>(reader, body, out)
                                         : parse_body<kFastFlags>(reader, body, out);
}

// LibraryStrategy's parser, under the Reader's flags `kFlags`.
template <unsigned kFlags>
struct RapidJsonLibrary {
  template <class Record>
  json::Status parse(base::PaddedBuffer& body, std::pmr::vector<Record>& out) {
    return parse_body<kFlags>(reader, body, out);
  }
  static constexpr bool kInSitu = true;  // LibraryFloor: the body is overwritten where it is parsed
  rapidjson::Reader reader;  // kept across bodies (parse_insitu says why)
};

}  // namespace

json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::WeatherForecast>& out,
                             RapidjsonFlags flags) {
  return parse_with_new_reader(body, out, flags);
}
json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::Repository>& out, RapidjsonFlags flags) {
  return parse_with_new_reader(body, out, flags);
}
json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::GithubRepository>& out,
                             RapidjsonFlags flags) {
  return parse_with_new_reader(body, out, flags);
}
json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::ProfileStars>& out,
                             RapidjsonFlags flags) {
  return parse_with_new_reader(body, out, flags);
}

std::unique_ptr<Strategy> make_rapidjson(const Recipe& recipe) {
  return std::make_unique<LibraryStrategy<RapidJsonLibrary<kFastFlags>>>(recipe);
}
std::unique_ptr<Strategy> make_rapidjson_strict(const Recipe& recipe) {
  return std::make_unique<LibraryStrategy<RapidJsonLibrary<kStrictFlags>>>(recipe);
}
std::unique_ptr<Strategy> make_floor_parse_rapidjson(const Recipe& recipe) {
  return std::make_unique<LibraryFloor<RapidJsonLibrary<kFastFlags>>>(recipe);
}

}  // namespace ringlab::strategies::detail
