// single_enter: presized (one padded buffer of Content-Length kept across requests, the body received
// into it in place, parsed in place into owning models reused in place), with the client's
// receive_with_send: the request's sendmsg and the response's first recv are queued together and go to
// the kernel in one io_uring_enter, which also waits for that recv. A kept-alive request whose response
// fits one receive then costs one system call, where send-then-wait costs two (as blocking send + recv
// does). A larger body takes one more enter per further receive, as presized does.
#include "client_strategy.hpp"
#include "factories.hpp"

namespace ringlab::strategies::detail {
namespace {

class SingleEnter final : public PresizedOwningStrategy {
 public:
  using PresizedOwningStrategy::PresizedOwningStrategy;

 private:
  [[nodiscard]] http::ClientOptions client_options() const override {
    http::ClientOptions options;
    options.receive_with_send = true;
    return options;
  }
};

}  // namespace

std::unique_ptr<Strategy> make_single_enter() { return std::make_unique<SingleEnter>("single_enter"); }

}  // namespace ringlab::strategies::detail
