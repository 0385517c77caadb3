// three_fields (jos's Version 8: a DTO of the three fields read): the body is received as presized's (in
// place, into one padded buffer of Content-Length reused across requests), then parsed by simdjson
// On-Demand into json::GithubStars {stars, name, url}, records reused in place: of each github record the
// keys stargazers_count, name and url are read, the other 19 skipped unconverted (json/deserialize.hpp).
// What it measures against views or presized is the price of the fields a caller does not want.
//
// Its verified checksum covers those three fields only (json::checksum_github_three_fields), not every
// field as every other row's does: notes() says so under the table. On /repos, whose records carry the
// same three keys at their top level, it reads the same three (owner, topics and license skipped whole;
// json::checksum_repos_three_fields). Weather records have none of them: skip_case() says so.
#include <memory_resource>
#include <span>
#include <vector>

#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/json/checksum.hpp"

namespace ringlab::strategies::detail {
namespace {

constexpr std::string_view kWeatherSkip =
    "three_fields reads jos's github records only (and repos, which share the three keys): weather records have "
    "no stars, name or url";

class ThreeFields final : public ClientStrategy {
 public:
  using ClientStrategy::ClientStrategy;

  [[nodiscard]] std::optional<std::string> skip_case(const CaseConfig& config) const override {
    if (config.payload == Payload::weather) return std::string(kWeatherSkip);
    return std::nullopt;
  }
  [[nodiscard]] std::string notes() const override {
    return "three_fields: checksum covers stargazers_count, name and url only (jos V8 reads 3 of 22 fields)";
  }

 private:
  [[nodiscard]] uint64_t expected_of(const CaseConfig& config) const override {
    return config.payload == Payload::repos ? json::checksum_repos_three_fields(config.count)
                                            : json::checksum_github_three_fields(config.count);
  }
  Status prepare() override {
    if (config().payload == Payload::weather) return fail(label(), kWeatherSkip);  // setup() without skip_case()
    records_.reserve(config().count);
    return {};
  }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override {
    if (auto status = json::parse_github_three_fields(parser(), json::padded_view(body_), records_); !status) {
      return std::unexpected(std::move(status.error()));
    }
    return consume_all(records_);
  }
  uint64_t checksum() override { return json::checksum(std::span<const json::GithubStars>(records_)); }

  base::PaddedBuffer body_;
  http::PresizedSink sink_{body_};
  std::pmr::vector<json::GithubStars> records_;  // strings keep their capacity across requests
};

}  // namespace

std::unique_ptr<Strategy> make_three_fields() { return std::make_unique<ThreeFields>("three_fields"); }

}  // namespace ringlab::strategies::detail
