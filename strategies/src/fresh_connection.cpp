// fresh_connection (a new HttpClient per request): as presized, but every request opens a new TCP
// connection and closes it after the response (ConnectionPolicy::fresh_per_request): a connect
// round trip more per request, and the side that closes first (the client) keeps the socket in
// TIME_WAIT for 60 s. notes() counts the TIME_WAIT sockets with the server's port at either end, from
// /proc/net/tcp and /proc/net/tcp6, when the case started and now.
#include "client_strategy.hpp"
#include "factories.hpp"

namespace ringlab::strategies::detail {
namespace {

class FreshConnection final : public PresizedOwningStrategy {
 public:
  using PresizedOwningStrategy::PresizedOwningStrategy;

  [[nodiscard]] std::string notes() const override {
    const std::size_t now = count_time_wait(config().port);
    return "sockets in TIME_WAIT on port " + std::to_string(config().port) + ": " + std::to_string(now) +
           " (" + std::to_string(time_wait_before_) + " before the case)";
  }

 private:
  [[nodiscard]] http::ClientOptions client_options() const override {
    http::ClientOptions options;
    options.connection = http::ConnectionPolicy::fresh_per_request;
    return options;
  }
  Status prepare() override {
    time_wait_before_ = count_time_wait(config().port);
    return PresizedOwningStrategy::prepare();
  }

  std::size_t time_wait_before_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_fresh_connection() { return std::make_unique<FreshConnection>("fresh_connection"); }

}  // namespace ringlab::strategies::detail
