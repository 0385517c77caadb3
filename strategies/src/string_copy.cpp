// string_copy, the baseline (ReadAsStringAsync + Deserialize): what code that does not think about
// memory does. Per request: a fresh std::string grows as the body arrives (about log2(size) reallocations,
// each copying what came before), the whole body is copied once more into a fresh simdjson padded
// string, and fresh owning models are built from it (the vector grows; repository strings longer than
// the small-string buffer are allocated one by one).
#include <simdjson.h>

#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/http/sinks.hpp"

namespace ringlab::strategies::detail {
namespace {

class StringCopy final : public FreshModelsStrategy {
  using FreshModelsStrategy::FreshModelsStrategy;

  // The previous body's memory goes: each request starts from a string with no capacity. (Not
  // `body_ = std::string()`: libstdc++'s move assignment from an empty, small-string temporary copies
  // its characters and keeps the old buffer, so the string would never grow again.)
  void free_body() noexcept override { std::string().swap(body_); }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override {
    const simdjson::padded_string padded(body_);
    return parse_fresh(padded);
  }

  std::string body_;
  http::StringSink sink_{body_};
};

}  // namespace

std::unique_ptr<Strategy> make_string_copy() { return std::make_unique<StringCopy>("string_copy"); }

}  // namespace ringlab::strategies::detail
