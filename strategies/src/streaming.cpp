// streaming: records deserialized between receives, as soon as their last byte is in, so that parsing
// overlaps the network wait. The server sends NDJSON (format=ndjson: one record per line, the same
// records): after each piece, everything up to the last newline received is whole records, parsed as one
// batch with simdjson's iterate_many into viewing records (streaming_sink.hpp says why batches and views,
// and what they allocate): its non-streaming twin is `views`. The body is received in place into a
// presized padded buffer; the views point into it. notes() says
// how many records, on the last request, were parsed before the last piece of the body arrived.
#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/net/padded_buffer.hpp"
#include "streaming_sink.hpp"

namespace ringlab::strategies::detail {
namespace {

class Streaming final : public ClientStrategy {
 public:
  Streaming() : ClientStrategy("streaming") {}

  [[nodiscard]] std::string notes() const override {
    return "last request: " + std::to_string(sink_.records_before_end()) + " of " +
           std::to_string(sink_.records()) + " records parsed before the last piece of the body arrived";
  }

 private:
  [[nodiscard]] std::string target() const override { return get_target(config(), "&format=ndjson"); }
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
  NdjsonStreamingSink sink_{parser(), body_};
};

}  // namespace

std::unique_ptr<Strategy> make_streaming() { return std::make_unique<Streaming>(); }

}  // namespace ringlab::strategies::detail
