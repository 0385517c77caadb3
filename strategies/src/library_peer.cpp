#include "library_peer.hpp"

#include <charconv>

#include "ringlab/json/deserialize.hpp"
#include "ringlab/json/serialize.hpp"

namespace ringlab::strategies::detail {

void LibraryPeer::prepare_request() {
  request_body_.clear();
  if (method_ == Method::echo) {
    target_ = kEchoTarget;
    request_body_ = kEchoBody;
    return;
  }
  if (posts()) {
    target_ = "/echo";
    append_payload_json(request_body_, config());
  } else {
    target_ = get_target(config());
  }
  models_.reserve(config().payload, config().count);
}

std::unexpected<Error> LibraryPeer::library_error(std::string_view what,
                                                  std::chrono::steady_clock::time_point started) const {
  const auto elapsed = std::chrono::steady_clock::now() - started;
  std::string text(what);
  if (elapsed >= config().timeout) {
    text += " (timed out after ";
    text += std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count());
    text += " ms, the deadline being ";
    text += std::to_string(timeout().count());
    text += " ms)";
  }
  return fail(label(), text);
}

Status LibraryPeer::check_length(std::optional<std::string_view> content_length, std::size_t body_bytes) const {
  if (auto mismatch = length_mismatch(content_length, body_bytes)) return fail(label(), *mismatch);
  return {};
}

std::optional<std::string> LibraryPeer::length_mismatch(std::optional<std::string_view> content_length,
                                                        std::size_t body_bytes) {
  if (!content_length) return std::nullopt;
  std::string_view text = *content_length;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  uint64_t declared = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), declared);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return "Content-Length \"" + std::string(*content_length) + "\" is not a number";
  }
  if (declared != body_bytes) {
    return "body of " + std::to_string(body_bytes) + " bytes where Content-Length says " + std::to_string(declared);
  }
  return std::nullopt;
}

Result<Outcome> LibraryPeer::deserialize(std::string_view body, Check check) {
  stamp(&http::Timeline::body_done);
  if (method_ == Method::echo) {
    stamp(&http::Timeline::deserialized);
    return conclude(label(), config(), expected(), json::Result<uint64_t>(body.size()), check,
                    [body] { return echo_checksum(body); });
  }
  const auto consumed = parse_copy(body, padded_, models_);
  stamp(&http::Timeline::deserialized);
  return conclude(label(), config(), expected(), consumed, check,
                  [this] { return models_.checksum(config().payload); });
}

json::Result<uint64_t> LibraryPeer::parse_copy(std::string_view body, base::PaddedBuffer& padded,
                                               OwningModels& models) {
  padded.clear();
  padded.append(body);
  return models.parse(config().payload, parser(), json::padded_view(padded));
}

}  // namespace ringlab::strategies::detail
