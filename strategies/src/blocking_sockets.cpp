// blocking_sockets (peer): the way most HTTP clients have always worked. One kept-alive TCP socket in
// blocking mode; connect, send and recv block the thread; SO_SNDTIMEO / SO_RCVTIMEO bound every call
// (and the connect) by the case's deadline. Per request, in steady state: one send and as many recv
// as the body needs (each into the presized buffer, in place), parsed with ringlab's ResponseParser.
// socket_peer.hpp has the rest, and the blocking socket's operations, which the mapped row shares.
#include <utility>

#include "socket_peer.hpp"

namespace ringlab::strategies::detail {
namespace {

class BlockingSockets final : public SocketPeer {
  using SocketPeer::SocketPeer;

  net::Status open_connection() override {
    auto fd = open_blocking(peer(), peer_text(), timeout_ms(), 0, syscall_count());
    if (!fd) return std::unexpected(std::move(fd.error()));
    socket_ = std::move(*fd);
    return {};
  }

  net::Status send_all(std::string_view bytes) override {
    return send_blocking(socket_.get(), bytes, peer_text(), syscall_count());
  }

  net::Result<std::size_t> receive(std::span<char> into) override {
    return receive_blocking(socket_.get(), into, 0, peer_text(), syscall_count());
  }
};

}  // namespace

std::unique_ptr<Strategy> make_blocking_sockets(const Recipe& recipe) {
  return std::make_unique<BlockingSockets>(recipe.name);
}

}  // namespace ringlab::strategies::detail
