#include "recipe_strategy.hpp"

namespace ringlab::strategies::detail {

std::optional<std::string> missing_feature(const Recipe& recipe, const net::RingFeatures& features) {
  if (http::receives_from_ring(recipe.client.receive)) {
    if (!features.provided_buffer_ring) return "kernel lacks provided-buffer rings (IORING_REGISTER_PBUF_RING)";
    if (!features.recv_multishot) return "kernel lacks multishot recv (IORING_RECV_MULTISHOT)";
  }
  if (recipe.client.receive == http::ReceiveMode::provided_bundles && !features.recv_bundle) {
    return "kernel lacks bundle receives (IORING_RECVSEND_BUNDLE, Linux 6.10)";
  }
  if (recipe.client.receive == http::ReceiveMode::provided_incremental &&
      !features.provided_buffer_ring_incremental) {
    return "kernel lacks incremental buffer rings (IOU_PBUF_RING_INC, Linux 6.12)";
  }
  if (recipe.method == Method::post && recipe.client.send == http::SendMode::zero_copy) {
    if (!features.send_zc) return "kernel lacks IORING_OP_SEND_ZC";
    if (!features.send_zc_report_usage) {
      return "kernel lacks IORING_SEND_ZC_REPORT_USAGE (copied sends could not be counted)";
    }
  }
  if (recipe.sink == Sink::fixed_buffers && !features.fixed_buffers) {
    return "kernel lacks registered buffers (IORING_REGISTER_BUFFERS)";
  }
  return std::nullopt;
}

}  // namespace ringlab::strategies::detail
