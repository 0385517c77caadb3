// floor_parse_minimal: the yardstick of json/'s reader. The body of floor_parse (fetched once at setup
// into a padded buffer that stays warm), parsed by the shortest On-Demand loop that reads the four
// weather fields into plain structs: keys looked up in the order the server writes them, no error
// naming a record or field, no unknown-key or repeated-key handling, no views' escape flags. The gap
// between floor_parse and this row is what json/'s generality (any key order, errors with offsets,
// escape-aware views) costs on the cheapest payload. Weather only: the other payloads are not
// applicable (their minimal loops would be a second deserializer to keep in step with models.hpp).
//
// The records are folded as json::Consumer folds WeatherView (summary and date lengths, temperatureC),
// in a pass after the parse, as floor_parse's consume_all does. Verified runs checksum them through
// json::Checksum as views without escapes: get_string() decoded them, so the bytes hashed are the same.
#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client_strategy.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/json/checksum.hpp"

namespace ringlab::strategies::detail {
namespace {

// Strings point into the parser's string buffer: valid until the parser's next document.
struct PlainWeather {
  std::string_view date;
  int64_t temperature_c = 0;
  std::string_view summary;
  int64_t temperature_f = 0;
};

// The minimal reader: fields in the server's order, find_field (ordered lookup), error codes only.
simdjson::error_code read_minimal(json::Parser& parser, simdjson::padded_string_view body,
                                  std::vector<PlainWeather>& out) {
  out.clear();
  simdjson::ondemand::document doc;
  if (auto e = parser.iterate(body).get(doc)) return e;
  simdjson::ondemand::array array;
  if (auto e = doc.get_array().get(array)) return e;
  for (auto element : array) {
    simdjson::ondemand::object object;
    if (auto e = element.get_object().get(object)) return e;
    PlainWeather& record = out.emplace_back();
    if (auto e = object.find_field("date").get_string().get(record.date)) return e;
    if (auto e = object.find_field("temperatureC").get_int64().get(record.temperature_c)) return e;
    if (auto e = object.find_field("summary").get_string().get(record.summary)) return e;
    if (auto e = object.find_field("temperatureF").get_int64().get(record.temperature_f)) return e;
  }
  return simdjson::SUCCESS;
}

class FloorParseMinimal final : public ClientStrategy {
  using ClientStrategy::ClientStrategy;

  [[nodiscard]] std::optional<std::string> skip_case(const CaseConfig& config) const override {
    if (config.payload != Payload::weather) {
      return std::string("floor_parse_minimal reads weather records only: it is the yardstick of the reader, "
                         "not a second deserializer of every payload");
    }
    return no_fresh_client(config, "floor_parse_minimal fetches its body once at setup and parses it warm");
  }
  Status prepare() override {
    records_.reserve(config().count);
    auto fetched = fetch_once(sink_);
    if (!fetched) return std::unexpected(fetched.error());
    return {};
  }
  [[nodiscard]] unsigned requests_per_run() const override { return 0; }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override {
    if (const auto e = read_minimal(parser(), json::padded_view(body_), records_)) {
      json::Error error;
      error.message = std::string("minimal reader: ") + simdjson::error_message(e);
      return std::unexpected(std::move(error));
    }
    // json::Consumer's fold of a WeatherView, over the plain records.
    uint64_t state = 0;
    for (const PlainWeather& record : records_) {
      state = state * 0x9E3779B97F4A7C15ULL +
              (static_cast<uint64_t>(record.temperature_c) + record.summary.size() + record.date.size());
    }
    return state ^ records_.size();
  }
  uint64_t checksum() override {
    json::Checksum sum;
    for (const PlainWeather& record : records_) {
      sum.add(json::WeatherView{.date = {record.date},
                                .temperature_c = static_cast<int32_t>(record.temperature_c),
                                .summary = {record.summary},
                                .temperature_f = static_cast<int32_t>(record.temperature_f)});
    }
    return sum.value();
  }

  base::PaddedBuffer body_;  // filled once by prepare()
  http::PresizedSink sink_{body_};
  std::vector<PlainWeather> records_;
};

}  // namespace

std::unique_ptr<Strategy> make_floor_parse_minimal(const Recipe& recipe) {
  return std::make_unique<FloorParseMinimal>(recipe.name);
}

}  // namespace ringlab::strategies::detail
