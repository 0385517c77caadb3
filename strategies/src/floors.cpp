// The floors: two reference rows that show the physical limits next to the strategies, at every size.
//
// floor_transfer   what the network alone costs: a kept-alive GET through the same ring and client as
//                  every strategy, the body received in place into a presized padded buffer (as
//                  presized and views do), and nothing parsed. What it "consumes" is the body's length.
// floor_parse      what parsing alone costs: the body fetched once at setup into a padded buffer that
//                  stays warm in cache; every run() parses it into viewing models (the cheapest
//                  deserialization there is, the one `views` does) and consumes them. No request.
//
// A strategy that receives and parses one after the other costs about floor_transfer + floor_parse;
// one that overlaps the two perfectly would cost max(floor_transfer, floor_parse).
//
// Verified runs prove the body all the same: floor_transfer parses it then, with the clock stopped,
// into views whose checksum must equal the generator's; floor_parse checksums the views it made.
#include "client_strategy.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/base/padded_buffer.hpp"

namespace ringlab::strategies::detail {
namespace {

class FloorTransfer final : public ClientStrategy {
  using ClientStrategy::ClientStrategy;

  Status prepare() override {
    verification_.reserve(config().payload, config().count);
    return {};
  }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override { return body_.size(); }
  uint64_t checksum() override {
    // Clock stopped: a body that does not parse gives a checksum of 0, which differs from the generator's.
    if (!verification_.parse(config().payload, parser(), body_)) return 0;
    return verification_.checksum(config().payload);
  }

  base::PaddedBuffer body_;
  http::PresizedSink sink_{body_};
  ViewModels verification_;  // used by verified runs only
};

class FloorParse final : public ClientStrategy {
  using ClientStrategy::ClientStrategy;

  [[nodiscard]] std::optional<std::string> skip_case(const CaseConfig& config) const override {
    return no_fresh_client(config, "floor_parse fetches its body once at setup and parses it warm");
  }

  Status prepare() override {
    models_.reserve(config().payload, config().count);
    auto fetched = fetch_once(sink_);
    if (!fetched) return std::unexpected(fetched.error());
    return {};
  }
  [[nodiscard]] unsigned requests_per_run() const override { return 0; }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override { return models_.parse(config().payload, parser(), body_); }
  uint64_t checksum() override { return models_.checksum(config().payload); }

  base::PaddedBuffer body_;  // filled once by prepare(); the views point into it
  http::PresizedSink sink_{body_};
  ViewModels models_;
};

}  // namespace

std::unique_ptr<Strategy> make_floor_transfer(const Recipe& recipe) {
  return std::make_unique<FloorTransfer>(recipe.name);
}
std::unique_ptr<Strategy> make_floor_parse(const Recipe& recipe) { return std::make_unique<FloorParse>(recipe.name); }

}  // namespace ringlab::strategies::detail
