#include "post_strategy.hpp"

#include "ringlab/json/serialize.hpp"

namespace ringlab::strategies::detail {

std::optional<std::string> PostStrategy::skip_reason(const net::RingFeatures& features) const {
  if (mode_ == http::SendMode::zero_copy && !features.send_zc) return "kernel lacks IORING_OP_SEND_ZC";
  if (mode_ == http::SendMode::zero_copy && !features.send_zc_report_usage) {
    return "kernel lacks IORING_SEND_ZC_REPORT_USAGE (copied sends could not be counted)";
  }
  return std::nullopt;
}

http::Request PostStrategy::request() const {
  return http::Request{.method = "POST", .body = request_body_, .content_type = "application/json", .send = mode_};
}

Status PostStrategy::prepare() {
  if (auto reason = skip_reason(ring().features())) return fail(label(), *reason);
  request_body_.clear();
  append_payload_json(request_body_, config());
  models_.reserve(config().payload, config().count);
  return {};
}

}  // namespace ringlab::strategies::detail
