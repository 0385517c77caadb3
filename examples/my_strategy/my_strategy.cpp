// my_strategy: GET /weather?count=N through ringlab's io_uring client (kept-alive connection), the
// body appended to a std::string kept across requests (it keeps its capacity), one copy into a
// simdjson padded string, parsed into owning records kept across requests. Weather only.
//
// What bench asks of every strategy (ringlab/strategies/strategy.hpp): setup() outside the clock,
// run() timed, run(…, Check::verify) with the full checksum compared with the generator's, the
// `deserialized` stamp of the phase timeline, errors as values that name the case.
#include "my_strategy.hpp"

#include <simdjson.h>

#include <memory>
#include <string>
#include <vector>

#include "ringlab/http/client.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/http/url.hpp"
#include "ringlab/json/checksum.hpp"
#include "ringlab/json/consume.hpp"
#include "ringlab/json/deserialize.hpp"
#include "ringlab/net/ring.hpp"

namespace my {
namespace {

namespace rs = ringlab::strategies;
namespace http = ringlab::http;
namespace json = ringlab::json;

std::unexpected<rs::Error> fail(const std::string& label, const std::string& what) {
  return std::unexpected(rs::Error{label + ": " + what});
}

class MyStrategy final : public rs::Strategy {
 public:
  rs::Status setup(const rs::CaseConfig& config) override {
    config_ = config;
    label_ = "my_strategy " + std::to_string(config.count);
    if (config.payload != rs::Payload::weather) return fail(label_, "my_strategy reads weather records only");
    url_text_ = "http://" + config.host + ":" + std::to_string(config.port) + "/weather?count=" +
                std::to_string(config.count);
    auto url = http::Url::parse(url_text_);
    if (!url) return fail(label_, url.error().message());
    url_ = *url;
    auto ring = ringlab::net::Ring::create();
    if (!ring) return fail(label_, "io_uring: " + std::string(ring.error().message()));
    ring_ = std::move(*ring);
    http::ClientOptions options;
    options.connect_timeout = config.timeout;
    options.io_timeout = config.timeout;
    options.ticks = config.ticks;
    client_ = std::make_unique<http::Client>(*ring_, options);
    expected_ = json::checksum_weather(config.count);
    records_.reserve(config.count);
    if (auto first = run(nullptr, rs::Check::verify); !first) return std::unexpected(first.error());
    return {};
  }

  rs::Result<rs::Outcome> run(http::Timeline* timeline, rs::Check check) override {
    body_.clear();
    auto info = client_->get(url_, sink_, timeline);
    if (!info) return fail(label_, info.error().message());
    if (info->status != 200) return fail(label_, "status " + std::to_string(info->status));
    const simdjson::padded_string padded(body_);
    records_.clear();
    if (auto parsed = json::parse_array(parser_, padded, records_); !parsed) {
      return fail(label_, parsed.error().message);
    }
    if (timeline != nullptr && config_.ticks != nullptr) timeline->deserialized = config_.ticks();
    rs::Outcome outcome{json::consume(std::span<const json::WeatherForecast>(records_)), 0};
    if (check == rs::Check::verify) {
      outcome.checksum = json::checksum(std::span<const json::WeatherForecast>(records_));
      if (outcome.checksum != expected_) return fail(label_, "checksum differs from the generator's");
    }
    return outcome;
  }

  [[nodiscard]] rs::IoCounters io_counters() const override {
    rs::IoCounters counters;
    if (client_) counters.connections_opened = client_->stats().connections_opened;
    counters.counts_syscalls = false;
    return counters;
  }

  void drop_connection() override {
    if (client_) client_->close_idle();
  }

  void teardown() override {
    client_.reset();
    ring_.reset();
  }

 private:
  rs::CaseConfig config_;
  std::string label_;
  std::string url_text_;  // url_ points into it
  http::Url url_;
  std::unique_ptr<ringlab::net::Ring> ring_;
  std::unique_ptr<http::Client> client_;
  std::string body_;
  http::StringSink sink_{body_};
  json::Parser parser_;
  std::pmr::vector<json::WeatherForecast> records_;
  uint64_t expected_ = 0;
};

std::unique_ptr<rs::Strategy> make_my_strategy() { return std::make_unique<MyStrategy>(); }

}  // namespace

const rs::Descriptor& my_strategy_descriptor() {
  static const rs::Descriptor descriptor{
      "my_strategy",
      "out-of-tree example: body appended to a kept std::string, one padded copy, parsed into kept owning models",
      "GetAsync + ReadAsStringAsync + Deserialize", rs::Method::get, false, false, &make_my_strategy};
  return descriptor;
}

}  // namespace my
