// string_copy, the baseline (ReadAsStringAsync + Deserialize): what code that does not think about
// memory does. Per request: a fresh std::string grows as the body arrives (about log2(size) reallocations,
// each copying what came before), the whole body is copied once more into a fresh simdjson padded
// string, and fresh owning models are built from it (the vector grows; repository strings longer than
// the small-string buffer are allocated one by one).
#include <string>

#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/http/sinks.hpp"

namespace ringlab::strategies::detail {

std::unique_ptr<Strategy> make_string_copy() {
  return std::make_unique<FreshModelsStrategy<std::string, http::StringSink, true>>("string_copy");
}

}  // namespace ringlab::strategies::detail
