// presized (ResponseHeadersRead + GetFromJsonAsync): once the head is parsed, one padded buffer of
// Content-Length (kept across requests: it is reallocated only when a body is larger than any before)
// is offered to the client as the receive window, so the body is received straight into it; only the
// few body bytes that came with the head are copied. It is parsed in place into owning models that are
// overwritten in place at every request (their strings keep their capacity): no allocation per
// request in steady state.
#include "client_strategy.hpp"
#include "factories.hpp"

namespace ringlab::strategies::detail {
namespace {

class Presized final : public PresizedOwningStrategy {
 public:
  using PresizedOwningStrategy::PresizedOwningStrategy;
};

}  // namespace

std::unique_ptr<Strategy> make_presized() { return std::make_unique<Presized>("presized"); }

}  // namespace ringlab::strategies::detail
