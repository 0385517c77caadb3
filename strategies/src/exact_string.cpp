// exact_string (GetStringAsync + Deserialize): what .NET's GetStringAsync does with a Content-Length. Per
// request: a fresh std::string is reserved to exactly Content-Length once the head is parsed (one allocation,
// never regrown: the bytes are appended without a reallocation), then the whole body is copied once into a
// fresh simdjson padded string and parsed into fresh owning models. Without a Content-Length (chunked) the
// string grows by its own policy, as string_copy's. Next to string_copy, it shows what the regrowth of an
// unsized string costs.
#include <simdjson.h>

#include <string>

#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/http/body_sink.hpp"

namespace ringlab::strategies::detail {
namespace {

// Appends every piece to `out`, reserved at begin() to the head's Content-Length when there is one.
class ExactStringSink final : public http::BodySink {
 public:
  explicit ExactStringSink(std::string& out) noexcept : out_(&out) {}
  http::Status begin(const http::ResponseHead& head) override {
    out_->clear();
    if (head.content_length) out_->reserve(static_cast<std::size_t>(*head.content_length));
    return {};
  }
  http::Status on_body(std::string_view bytes) override {
    out_->append(bytes);
    return {};
  }
  http::Status end() override { return {}; }

 private:
  std::string* out_;
};

}  // namespace

std::unique_ptr<Strategy> make_exact_string() {
  return std::make_unique<FreshModelsStrategy<std::string, ExactStringSink, true>>("exact_string");
}

}  // namespace ringlab::strategies::detail
