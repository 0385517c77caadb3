// buffered_stream (ReadAsStreamAsync, content buffered): the body is appended to a padded buffer
// that starts empty at every request and doubles (copying what it holds) whenever it is full,
// ignoring Content-Length, as a MemoryStream does. Being padded, it is parsed in place (no second copy
// as in string_copy), into fresh owning models.
#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/http/sinks.hpp"

namespace ringlab::strategies::detail {

std::unique_ptr<Strategy> make_buffered_stream() {
  return std::make_unique<FreshModelsStrategy<base::PaddedBuffer, http::GrowingSink, true>>("buffered_stream");
}

}  // namespace ringlab::strategies::detail
