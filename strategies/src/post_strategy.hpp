#pragma once
// PostStrategy: POST /echo with a body of N serialized records (made once, at setup, by json/'s
// serializer: the same bytes the server's GET route would send), then the echoed body received as
// presized does and parsed into reused owning models; its checksum must equal the generator's. The
// three POST strategies differ only in the client's SendMode.
#include <string>

#include "client_strategy.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/base/padded_buffer.hpp"

namespace ringlab::strategies::detail {

class PostStrategy final : public ClientStrategy {
 public:
  PostStrategy(std::string_view name, http::SendMode mode) : ClientStrategy(name), mode_(mode) {}

  [[nodiscard]] std::optional<std::string> skip_reason(const net::RingFeatures& features) const override;

 private:
  [[nodiscard]] std::string target() const override { return "/echo"; }
  [[nodiscard]] http::Request request() const override;
  Status prepare() override;
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override {
    return models_.parse(config().payload, parser(), json::padded_view(echo_));
  }
  uint64_t checksum() override { return models_.checksum(config().payload); }

  http::SendMode mode_;
  std::string request_body_;  // serialized once at setup; sent unchanged by every run()
  base::PaddedBuffer echo_;
  http::PresizedSink sink_{echo_};
  OwningModels models_;
};

}  // namespace ringlab::strategies::detail
