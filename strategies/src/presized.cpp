// presized (ResponseHeadersRead + GetFromJsonAsync): once the head is parsed, one padded buffer of
// Content-Length (kept across requests: it is reallocated only when a body is larger than any before)
// is offered to the client as the receive window, so the body is received straight into it; only the
// few body bytes that came with the head are copied. It is parsed in place into owning models that are
// overwritten in place at every request (their strings keep their capacity): no allocation per
// request in steady state.
#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/net/padded_buffer.hpp"

namespace ringlab::strategies::detail {
namespace {

class Presized final : public ClientStrategy {
 public:
  Presized() : ClientStrategy("presized") {}

 private:
  Status prepare() override {
    models_.reserve(config().payload, config().count);
    return {};
  }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override {
    return models_.parse(config().payload, parser(), json::padded_view(body_));
  }

  net::PaddedBuffer body_;
  http::PresizedSink sink_{body_};
  OwningModels models_;
};

}  // namespace

std::unique_ptr<Strategy> make_presized() { return std::make_unique<Presized>(); }

}  // namespace ringlab::strategies::detail
