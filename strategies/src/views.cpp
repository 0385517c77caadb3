// views: as presized, but the records are views (json::WeatherView, RepositoryView): their strings are
// string_views into the body buffer, escapes left as they are (a verified op's checksum decodes them on
// the fly).
// No allocation per record, whatever N: the view vectors keep their capacity across requests.
#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/base/padded_buffer.hpp"

namespace ringlab::strategies::detail {
namespace {

class Views final : public ClientStrategy {
  using ClientStrategy::ClientStrategy;

  Status prepare() override {
    models_.reserve(config().payload, config().count);
    return {};
  }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override { return models_.parse(config().payload, parser(), body_); }
  uint64_t checksum() override { return models_.checksum(config().payload); }

  base::PaddedBuffer body_;
  http::PresizedSink sink_{body_};
  ViewModels models_;  // point into body_: valid until the next request
};

}  // namespace

std::unique_ptr<Strategy> make_views() { return std::make_unique<Views>("views"); }

}  // namespace ringlab::strategies::detail
