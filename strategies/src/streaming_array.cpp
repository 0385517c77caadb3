// streaming_array: records of the ordinary JSON array body (the same bytes as every other strategy)
// deserialized between receives, as soon as their last byte is in: json::RecordSplitter scans each new
// byte for the end of a record, and each record is parsed on its own (streaming_sink.hpp). Compared
// with streaming (NDJSON), it shows what finding record boundaries in an array costs.
#include "factories.hpp"
#include "streaming_sink.hpp"

namespace ringlab::strategies::detail {

std::unique_ptr<Strategy> make_streaming_array() {
  return std::make_unique<StreamingStrategy<ArrayStreamingSink>>("streaming_array", "");
}

}  // namespace ringlab::strategies::detail
