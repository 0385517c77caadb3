// The proxy rows (bench proxy, the typed-vs-manual-client article): one op is N sequential GETs of
// /proxy (N = the case's size: the article's 10, 50 and 100 cycles) on one kept-alive client
// connection, as its benchmark loops over a shared HttpClient. For each, the server fetches ten weather
// records from its upstream (the built-in one: another worker of the same server, on its own listener)
// on its worker's ring, over
//   proxy_pooled*   one kept-alive upstream connection, as an IHttpClientFactory (typed or manual)
//                   client reuses its pooled handler;
//   proxy_fresh*    a new upstream connection per fetch, closed after it, as a new HttpClient per call
//                   does: the server's side of each is left in TIME_WAIT (the socket exhaustion the
//                   factory exists to avoid);
// and answers with its status alone (answer=status, as the article's endpoints return
// Results.Ok()), or, in the *_body rows, with the upstream's body passed through. proxy_manual and
// proxy_typed are the article's two benchmarks: pooled, status alone, the server's handler starting the
// fetch itself or calling its typed client (client=manual|typed, server/src/upstream.hpp). Each answer
// is read into a fresh std::string (ReadAsStringAsync).
//
// What is consumed is the answers' bytes; the checksum is the number of 200 answers, which must be N.
// A verified op also compares every answer with what it must be (nothing, or the generator's ten
// records as the upstream serializes them). notes() counts the TIME_WAIT sockets of every port at the
// case's start and now: the server's upstream connections have no port of the client's to filter on.
#include <string>

#include "client_strategy.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/json/serialize.hpp"

namespace ringlab::strategies::detail {
namespace {

constexpr std::size_t kProxyRecords = 10;  // records the upstream answers each fetch with

class ProxyCycles final : public ClientStrategy {
 public:
  // `query` (the row's) says how the server reaches its upstream ("&conn=pooled" or "&conn=fresh") and
  // what it answers ("&answer=status" or "&answer=body"): what every answer must be follows from it.
  ProxyCycles(std::string_view name, std::string_view query)
      : ClientStrategy(name), query_(query), answers_body_(query.contains("&answer=body")) {}

  [[nodiscard]] std::string notes() const override {
    if (config().client == Client::fresh) return {};  // not counted: see prepare()
    return "sockets in TIME_WAIT, every port: " + std::to_string(count_time_wait(0)) + " (" +
           std::to_string(time_wait_before_) + " before the case)";
  }

 private:
  [[nodiscard]] std::string target() const override {
    return std::string("/proxy?count=") + std::to_string(kProxyRecords) + std::string(query_);
  }
  // The case's size is the number of requests per op, not a record count.
  [[nodiscard]] unsigned requests_per_run() const override { return static_cast<unsigned>(config().count); }
  [[nodiscard]] uint64_t expected_of(const CaseConfig& config) const override { return config.count; }

  Status prepare() override {
    if (config().count == 0) return fail(label(), "a proxy op needs at least one request");
    expected_answer_.clear();
    if (answers_body_) json::append_weather_json(expected_answer_, kProxyRecords);
    // Reading /proc/net/tcp is no part of an op: not inside a fresh client's (timed) setup().
    if (config().client == Client::pooled) time_wait_before_ = count_time_wait(0);
    return {};
  }
  Status before_request() override {
    std::string().swap(answer_);  // ReadAsStringAsync: a new string per answer
    return {};
  }
  http::BodySink& sink() override { return sink_; }
  Status after_response() override {
    ++answers_;
    bytes_ += answer_.size();
    if (verifying() && answer_ != expected_answer_) [[unlikely]] {
      return fail(label(), "answer " + std::to_string(answers_) + " of " + std::to_string(answer_.size()) +
                               " bytes differs from the " + std::to_string(expected_answer_.size()) +
                               " it must be");
    }
    return {};
  }
  json::Result<uint64_t> deserialize() override {
    const uint64_t consumed = bytes_;
    last_answers_ = answers_;
    answers_ = 0;
    bytes_ = 0;
    return consumed;
  }
  uint64_t checksum() override { return last_answers_; }

  std::string_view query_;  // the row's: a string literal
  bool answers_body_;
  std::string answer_;
  http::StringSink sink_{answer_};
  std::string expected_answer_;  // what every answer must be: empty, or the upstream's ten records
  uint64_t answers_ = 0;         // of the run in progress
  uint64_t bytes_ = 0;
  uint64_t last_answers_ = 0;    // of the last run, for checksum()
  std::size_t time_wait_before_ = 0;
};

}  // namespace

// The proxy rows (registry.cpp) differ in their query alone.
std::unique_ptr<Strategy> make_proxy_cycles(const Recipe& recipe) {
  return std::make_unique<ProxyCycles>(recipe.name, recipe.client.query);
}

}  // namespace ringlab::strategies::detail
