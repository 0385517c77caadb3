// provided_buffers: the client arms a multishot recv on a provided-buffer ring (IORING_REGISTER_PBUF_RING,
// IORING_RECV_MULTISHOT): one SQE receives the whole response, and the kernel picks a ring buffer for
// each completion. The copy that remains: kernel-chosen buffers -> the presized padded buffer, because
// simdjson needs the body contiguous and padded, which scattered ring buffers are not. What goes away
// is the SQE and the io_uring_enter per receive. Parsed into reused owning models, as presized.
#include "client_strategy.hpp"
#include "factories.hpp"

namespace ringlab::strategies::detail {
namespace {

class ProvidedBuffers final : public PresizedOwningStrategy {
 public:
  using PresizedOwningStrategy::PresizedOwningStrategy;

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
    return PresizedOwningStrategy::prepare();
  }
};

}  // namespace

std::unique_ptr<Strategy> make_provided_buffers() { return std::make_unique<ProvidedBuffers>("provided_buffers"); }

}  // namespace ringlab::strategies::detail
