// The echo rows of ringlab's stack (bench echo, joncloud's net-http-perf): POST of one 17-byte JSON
// object (kEchoBody) to /echo?chunked=1, the chunked answer appended to a fresh std::string, as
// ReadAsStringAsync returns one; nothing is deserialized, as in the seed. What is consumed is the
// answer's size; a verified op compares the answer's checksum with the posted object's.
//   echo         one kept-alive connection (an HttpClient kept for the program's life; the baseline)
//   echo_fresh   a new connection per request, closed after the answer: what .NET Core's HttpWebRequest
//                does, building a new HttpClient per request (the seed's 4.98x)
#include <string>

#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/http/sinks.hpp"

namespace ringlab::strategies::detail {
namespace {

enum class EchoConnection { kept_alive, fresh };

class EchoString final : public ClientStrategy {
 public:
  EchoString(std::string_view name, EchoConnection connection) : ClientStrategy(name), connection_(connection) {}

 private:
  [[nodiscard]] http::ClientOptions client_options() const override {
    http::ClientOptions options;
    if (connection_ == EchoConnection::fresh) options.connection = http::ConnectionPolicy::fresh_per_request;
    return options;
  }
  [[nodiscard]] std::string target() const override { return std::string(kEchoTarget); }
  [[nodiscard]] http::Request request() const override {
    return http::Request{.method = "POST", .body = kEchoBody, .content_type = "application/json"};
  }
  [[nodiscard]] uint64_t expected_of(const CaseConfig&) const override { return echo_checksum(kEchoBody); }
  Status before_request() override {
    std::string().swap(answer_);  // a new string per answer, grown as the chunks arrive
    return {};
  }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override { return answer_.size(); }
  uint64_t checksum() override { return echo_checksum(answer_); }

  EchoConnection connection_;
  std::string answer_;
  http::StringSink sink_{answer_};
};

}  // namespace

std::unique_ptr<Strategy> make_echo() { return std::make_unique<EchoString>("echo", EchoConnection::kept_alive); }
std::unique_ptr<Strategy> make_echo_fresh() {
  return std::make_unique<EchoString>("echo_fresh", EchoConnection::fresh);
}

}  // namespace ringlab::strategies::detail
