// chunked: as presized, but the server answers with Transfer-Encoding: chunked (chunked=1, its default
// 4 KiB chunks), so there is no Content-Length to size the buffer with: the buffer is reused across
// requests (it keeps the capacity the largest body needed) and the body is received into it with the
// chunk framing, which is removed in place (each piece slides down over the framing by memmove).
#include "client_strategy.hpp"
#include "factories.hpp"

namespace ringlab::strategies::detail {
namespace {

class Chunked final : public PresizedOwningStrategy {
  using PresizedOwningStrategy::PresizedOwningStrategy;

  [[nodiscard]] std::string target() const override { return get_target(config(), "&chunked=1"); }
};

}  // namespace

std::unique_ptr<Strategy> make_chunked() { return std::make_unique<Chunked>("chunked"); }

}  // namespace ringlab::strategies::detail
