// writev: POST /echo with the head and the body as two iovecs of one sendmsg: the body is not copied
// in user space. post_strategy.hpp has the rest (body, echo, checks).
#include "factories.hpp"
#include "post_strategy.hpp"

namespace ringlab::strategies::detail {

std::unique_ptr<Strategy> make_writev() {
  return std::make_unique<PostStrategy>("writev", http::SendMode::writev);
}

}  // namespace ringlab::strategies::detail
