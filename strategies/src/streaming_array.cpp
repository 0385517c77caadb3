// streaming_array: records of the ordinary JSON array body (the same bytes as every other strategy)
// deserialized between receives, as soon as their last byte is in: json::RecordSplitter scans each new
// byte for the end of a record, and each record is parsed on its own (streaming_sink.hpp). Compared
// with streaming (NDJSON), it shows what finding record boundaries in an array costs. notes() says how
// many records, on the last request, were parsed before the last piece of the body arrived.
#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/net/padded_buffer.hpp"
#include "streaming_sink.hpp"

namespace ringlab::strategies::detail {
namespace {

class StreamingArray final : public ClientStrategy {
 public:
  StreamingArray() : ClientStrategy("streaming_array") {}

  [[nodiscard]] std::string notes() const override {
    return "last request: " + std::to_string(sink_.records_before_end()) + " of " +
           std::to_string(sink_.records()) + " records parsed before the last piece of the body arrived";
  }

 private:
  Status prepare() override {
    sink_.expect(config().payload, config().count);
    return {};
  }
  Status before_request() override {
    sink_.verify(verifying());
    return {};
  }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override { return sink_.consumed(); }
  uint64_t checksum() override { return sink_.checksum(); }

  net::PaddedBuffer body_;
  ArrayStreamingSink sink_{parser(), body_};
};

}  // namespace

std::unique_ptr<Strategy> make_streaming_array() { return std::make_unique<StreamingArray>(); }

}  // namespace ringlab::strategies::detail
