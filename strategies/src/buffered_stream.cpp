// buffered_stream (ReadAsStreamAsync, content buffered): the body is appended to a padded buffer
// that starts empty at every request and doubles (copying what it holds) whenever it is full,
// ignoring Content-Length, as a MemoryStream does. Being padded, it is parsed in place (no second copy
// as in string_copy), into fresh owning models.
#include <optional>

#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/base/padded_buffer.hpp"

namespace ringlab::strategies::detail {
namespace {

class BufferedStream final : public ClientStrategy {
 public:
  BufferedStream() : ClientStrategy("buffered_stream") {}

 private:
  Status before_request() override {
    body_ = base::PaddedBuffer();  // frees the previous body: every request grows its buffer anew
    models_.reset();              // and the previous request's models
    return {};
  }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override {
    return models_.emplace().parse(config().payload, parser(), json::padded_view(body_));
  }
  uint64_t checksum() override { return models_->checksum(config().payload); }

  base::PaddedBuffer body_;
  http::GrowingSink sink_{body_};
  std::optional<OwningModels> models_;  // fresh at every request; kept until the next one starts
};

}  // namespace

std::unique_ptr<Strategy> make_buffered_stream() { return std::make_unique<BufferedStream>(); }

}  // namespace ringlab::strategies::detail
