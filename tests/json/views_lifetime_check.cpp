// Compiled by tests/json/CMakeLists.txt once as is (it must compile: the lawful uses) and once per
// RINGLAB_MISUSE_* macro (each must fail, on a deleted function): parsing views out of a temporary
// buffer would leave them pointing into freed memory, so it must not compile.
#include <memory_resource>
#include <vector>

#include "ringlab/json/deserialize.hpp"

namespace json = ringlab::json;

namespace {

simdjson::padded_string make_string() { return simdjson::padded_string(std::string_view("[]")); }
ringlab::base::PaddedBuffer make_buffer() { return ringlab::base::PaddedBuffer(); }

}  // namespace

// Lawful: the bodies outlive the views.
json::Status lawful(json::Parser& parser, const simdjson::padded_string& text, const ringlab::base::PaddedBuffer& buffer) {
  std::pmr::vector<json::WeatherView> weather;
  std::pmr::vector<json::RepositoryView> repos;
  json::WeatherView one;
  if (auto s = json::parse_array(parser, text, weather); !s) return s;
  if (auto s = json::parse_array(parser, buffer, weather); !s) return s;
  if (auto s = json::parse_array(parser, json::padded_view(buffer), repos); !s) return s;
  if (auto s = json::parse_ndjson(parser, buffer, weather); !s) return s;
  // Owning records copy what they keep: a temporary body is fine for them.
  std::pmr::vector<json::WeatherForecast> owned;
  if (auto s = json::parse_array(parser, make_string(), owned); !s) return s;
  return json::parse_record(parser, buffer, json::RecordSpan{0, 0, 0}, one);
}

json::Status misuse(json::Parser& parser) {
  std::pmr::vector<json::WeatherView> weather;
  std::pmr::vector<json::RepositoryView> repos;
  json::WeatherView one;
  (void)parser;
  (void)weather;
  (void)repos;
  (void)one;
  (void)make_buffer;
#if defined(RINGLAB_MISUSE_temporary_padded_string)
  return json::parse_array(parser, make_string(), weather);
#elif defined(RINGLAB_MISUSE_temporary_padded_buffer)
  return json::parse_array(parser, make_buffer(), weather);
#elif defined(RINGLAB_MISUSE_temporary_padded_buffer_repos)
  return json::parse_array(parser, make_buffer(), repos);
#elif defined(RINGLAB_MISUSE_temporary_padded_buffer_ndjson)
  return json::parse_ndjson(parser, make_buffer(), repos);
#elif defined(RINGLAB_MISUSE_temporary_padded_buffer_record)
  return json::parse_record(parser, make_buffer(), json::RecordSpan{0, 0, 0}, one);
#elif defined(RINGLAB_MISUSE_padded_view_of_temporary)
  return json::parse_array(parser, json::padded_view(make_buffer()), weather);
#else
  return {};
#endif
}
