// provided_buffers: the client arms a multishot recv on a provided-buffer ring (IORING_REGISTER_PBUF_RING,
// IORING_RECV_MULTISHOT): one SQE receives the whole response, and the kernel picks a ring buffer for
// each completion. The copy that remains: kernel-chosen buffers -> the presized padded buffer, because
// simdjson needs the body contiguous and padded, which scattered ring buffers are not. What goes away
// is the SQE and the io_uring_enter per receive. Parsed into reused owning models, as presized.
#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/net/padded_buffer.hpp"

namespace ringlab::strategies::detail {
namespace {

class ProvidedBuffers final : public ClientStrategy {
 public:
  ProvidedBuffers() : ClientStrategy("provided_buffers") {}

  [[nodiscard]] std::optional<std::string> skip_reason(const net::RingFeatures& features) const override {
    return missing(features);
  }

 private:
  static std::optional<std::string> missing(const net::RingFeatures& features) {
    if (!features.provided_buffer_ring) return "kernel lacks provided-buffer rings (IORING_REGISTER_PBUF_RING)";
    if (!features.recv_multishot) return "kernel lacks multishot recv (IORING_RECV_MULTISHOT)";
    return std::nullopt;
  }

  [[nodiscard]] http::ClientOptions client_options() const override {
    http::ClientOptions options;
    options.receive = http::ReceiveMode::provided_buffers;
    return options;
  }
  Status prepare() override {
    if (auto reason = missing(ring().features())) return fail(label(), *reason);
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

std::unique_ptr<Strategy> make_provided_buffers() { return std::make_unique<ProvidedBuffers>(); }

}  // namespace ringlab::strategies::detail
