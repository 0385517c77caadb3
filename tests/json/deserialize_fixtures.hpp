#pragma once
// What the deserializer's tests share (deserialize_test.cpp: records read back, views, key order;
// deserialize_errors_test.cpp: bad and cut bodies, error positions, spans): bodies of each payload as an
// array and as NDJSON, their generator's checksum, and parses of every kind into one Parsed.
#include <algorithm>
#include <memory_resource>
#include <string>
#include <vector>

#include "ringlab/json/checksum.hpp"
#include "ringlab/json/generate.hpp"
#include "ringlab/json/serialize.hpp"
#include "ringlab/json/unescape.hpp"
#include "../support/json_counting_resource.hpp"

namespace ringlab::json::testing {

namespace json = ringlab::json;

enum class Payload { weather, repos, github };
inline std::string_view name_of(Payload p) {
  return p == Payload::weather ? "weather" : p == Payload::repos ? "repos" : "github";
}

// The generator's body of `n` records of payload `p`: a JSON array, or NDJSON.
inline std::string generated_body(Payload p, std::size_t n, bool ndjson) {
  using Append = void (*)(std::string&, std::size_t);
  // Indexed by Payload.
  static constexpr Append kArray[] = {&json::append_weather_json, &json::append_repos_json, &json::append_github_json};
  static constexpr Append kLines[] = {&json::append_weather_ndjson, &json::append_repos_ndjson,
                                      &json::append_github_ndjson};
  std::string out;
  (ndjson ? kLines : kArray)[static_cast<std::size_t>(p)](out, n);
  return out;
}
inline std::string array_body(Payload p, std::size_t n) { return generated_body(p, n, false); }
inline std::string ndjson_body(Payload p, std::size_t n) { return generated_body(p, n, true); }
inline uint64_t truth(Payload p, std::size_t n) {
  if (p == Payload::github) return json::checksum_github(n);
  return p == Payload::weather ? json::checksum_weather(n) : json::checksum_repos(n);
}

inline std::string describe(const json::Status& status) { return status ? std::string("ok") : status.error().message; }

// Every way of parsing a body, each returning the checksum of what it read (or the error).
struct Parsed {
  json::Status status;
  uint64_t checksum = 0;
};

// Parses into a fresh vector of the payload's record type (WeatherRecord, RepoRecord or GithubRecord):
// `parse(out)` is one of json's parse templates, its record type taken from `out`.
template <class WeatherRecord, class RepoRecord, class GithubRecord>
Parsed parsed_into(Payload p, auto parse) {
  const auto into = [&]<class Record>(std::pmr::vector<Record> out) -> Parsed {
    auto s = parse(out);
    return {s, json::checksum(out)};
  };
  if (p == Payload::weather) return into(std::pmr::vector<WeatherRecord>{});
  if (p == Payload::github) return into(std::pmr::vector<GithubRecord>{});
  return into(std::pmr::vector<RepoRecord>{});
}

inline Parsed owning_array(json::Parser& parser, Payload p, const simdjson::padded_string& body) {
  return parsed_into<json::WeatherForecast, json::Repository, json::GithubRepository>(
      p, [&](auto& out) { return json::parse_array(parser, body, out); });
}

inline Parsed views_array(json::Parser& parser, Payload p, const simdjson::padded_string& body) {
  return parsed_into<json::WeatherView, json::RepositoryView, json::GithubRepositoryView>(
      p, [&](auto& out) { return json::parse_array(parser, body, out); });
}

inline Parsed owning_ndjson(json::Parser& parser, Payload p, const simdjson::padded_string& body,
                            std::size_t window = json::kNdjsonWindowBytes) {
  return parsed_into<json::WeatherForecast, json::Repository, json::GithubRepository>(
      p, [&](auto& out) { return json::parse_ndjson(parser, body, out, window); });
}

inline Parsed views_ndjson(json::Parser& parser, Payload p, const simdjson::padded_string& body,
                           std::size_t window = json::kNdjsonWindowBytes) {
  return parsed_into<json::WeatherView, json::RepositoryView, json::GithubRepositoryView>(
      p, [&](auto& out) { return json::parse_ndjson(parser, body, out, window); });
}

// The streaming way: the splitter finds records, each is parsed on its own (owning or view).
inline Parsed by_record(json::Parser& parser, Payload p, const simdjson::padded_string& body, bool views) {
  // One record object, reused for every record of the body.
  const auto each = [&]<class Record>(Record record) -> Parsed {
    json::RecordSplitter splitter;
    json::Checksum sum;
    while (true) {
      auto span = splitter.next(body);
      if (!span) return {std::unexpected(span.error())};
      if (!*span) break;
      if (json::Status s = json::parse_record(parser, body, **span, record); !s) return {s};
      sum.add(record);
    }
    return {splitter.finish(body), sum.value()};
  };
  if (p == Payload::weather) return views ? each(json::WeatherView{}) : each(json::WeatherForecast{});
  if (p == Payload::github) return views ? each(json::GithubRepositoryView{}) : each(json::GithubRepository{});
  return views ? each(json::RepositoryView{}) : each(json::Repository{});
}

// Rewrites a JSON value with every object's keys in another order and unknown keys of every kind
// added; arrays keep their order. Strings are written back by simdjson's own writer, which leaves
// non-ASCII as raw UTF-8: the parsers then meet both spellings of the same text.
inline std::string shuffled(simdjson::dom::element value, json::SplitMix64& rng) {
  if (value.type() == simdjson::dom::element_type::ARRAY) {
    std::string out = "[";
    bool first = true;
    for (simdjson::dom::element item : value.get_array()) {
      if (!first) out += ",";
      first = false;
      out += shuffled(item, rng);
    }
    return out + "]";
  }
  if (value.type() != simdjson::dom::element_type::OBJECT) return simdjson::minify(value);
  std::vector<std::string> members;
  for (simdjson::dom::key_value_pair member : value.get_object()) {
    std::string text;
    json::append_json_string(text, member.key);
    members.push_back(text + ":" + shuffled(member.value, rng));
  }
  static const char* const kUnknown[] = {
      R"("unknown_number":-12.5e3)",  R"("unknown_string":"a \"quoted\" \u00e9 }")",
      R"("unknown_object":{"date":"not this one","x":[1,{"y":null}]})",
      R"("unknown_array":[{"temperatureC":"no"},[],"]"])", R"("unknown_null":null)", R"("unknown_bool":true)",
      R"("d\u0061te":"an escaped key is another key")"};
  for (const char* unknown : kUnknown) {
    if (rng.chance(1, 2)) members.emplace_back(unknown);
  }
  for (std::size_t i = members.size(); i > 1; --i) std::swap(members[i - 1], members[rng.below(i)]);
  std::string out = "{";
  for (std::size_t i = 0; i < members.size(); ++i) out += (i ? ", " : " ") + members[i];
  return out + " }";
}

inline std::string shuffled_body(Payload p, std::size_t n, uint64_t seed) {
  simdjson::dom::parser dom;
  const simdjson::padded_string canonical(array_body(p, n));
  json::SplitMix64 rng(seed);
  return shuffled(dom.parse(canonical).value(), rng);
}

inline const std::size_t kSizes[] = {0, 1, 10, 1000};
inline const Payload kPayloads[] = {Payload::weather, Payload::repos, Payload::github};


}  // namespace ringlab::json::testing
