// buffered_stream (ReadAsStreamAsync, content buffered): the body is appended to a padded buffer
// that starts empty at every request and doubles (copying what it holds) whenever it is full,
// ignoring Content-Length, as a MemoryStream does. Being padded, it is parsed in place (no second copy
// as in string_copy), into fresh owning models.
#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/base/padded_buffer.hpp"

namespace ringlab::strategies::detail {
namespace {

class BufferedStream final : public FreshModelsStrategy {
  using FreshModelsStrategy::FreshModelsStrategy;

  // Every request grows its buffer anew, from empty.
  void free_body() noexcept override { body_ = base::PaddedBuffer(); }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override { return parse_fresh(json::padded_view(body_)); }

  base::PaddedBuffer body_;
  http::GrowingSink sink_{body_};
};

}  // namespace

std::unique_ptr<Strategy> make_buffered_stream() { return std::make_unique<BufferedStream>("buffered_stream"); }

}  // namespace ringlab::strategies::detail
