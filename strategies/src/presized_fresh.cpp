// presized_fresh (ResponseHeadersRead + stream, fresh objects, as .NET): the body is received as presized
// receives it (one padded buffer of Content-Length kept across requests, the kernel writes the body straight
// into it), but the models are fresh at every request, as a .NET deserializer builds new objects each time:
// the vector grows from empty and repository strings longer than the small-string buffer are allocated one
// by one. Next to presized, it shows what reusing the models saves; next to buffered_stream, what presizing
// the body buffer saves.
#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/http/sinks.hpp"

namespace ringlab::strategies::detail {

// The body buffer is what this strategy keeps (kFreshBody false): only the models go at each request.
std::unique_ptr<Strategy> make_presized_fresh() {
  return std::make_unique<FreshModelsStrategy<base::PaddedBuffer, http::PresizedSink, false>>("presized_fresh");
}

}  // namespace ringlab::strategies::detail
