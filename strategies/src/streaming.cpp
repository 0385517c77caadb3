// streaming: records deserialized between receives, as soon as their last byte is in, so that parsing
// overlaps the network wait. The server sends NDJSON (format=ndjson: one record per line, the same
// records): after each piece, everything up to the last newline received is whole records, parsed as one
// batch with simdjson's iterate_many into viewing records (streaming_sink.hpp says why batches and views,
// and what they allocate): its non-streaming twin is `views`. The body is received in place into a
// presized padded buffer; the views point into it.
#include "factories.hpp"
#include "streaming_sink.hpp"

namespace ringlab::strategies::detail {

std::unique_ptr<Strategy> make_streaming() {
  return std::make_unique<StreamingStrategy<NdjsonStreamingSink>>("streaming", "&format=ndjson");
}

}  // namespace ringlab::strategies::detail
