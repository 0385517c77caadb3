// send_copy, the POST baseline: the client copies the request head and the body into one buffer and
// sends it with one send. post_strategy.hpp has the rest (body, echo, checks).
#include "factories.hpp"
#include "post_strategy.hpp"

namespace ringlab::strategies::detail {

std::unique_ptr<Strategy> make_send_copy() {
  return std::make_unique<PostStrategy>("send_copy", http::SendMode::copy);
}

}  // namespace ringlab::strategies::detail
