// send_zc: POST /echo with the head by send and the body by IORING_OP_SEND_ZC with
// IORING_SEND_ZC_REPORT_USAGE. The client waits for the notification CQE before the body may be
// reused, and io_counters() count the zero-copy sends and those the kernel copied anyway: over
// loopback it copies every one (the receiving socket is local, so the pages cannot be handed over),
// so expect no gain here, only the notification's cost. post_strategy.hpp has the rest.
#include "factories.hpp"
#include "post_strategy.hpp"

namespace ringlab::strategies::detail {

std::unique_ptr<Strategy> make_send_zc() {
  return std::make_unique<PostStrategy>("send_zc", http::SendMode::zero_copy);
}

}  // namespace ringlab::strategies::detail
