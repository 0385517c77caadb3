// beast, beast_post (peers): Boost.Beast's HTTP/1.1 over a beast::tcp_stream kept alive for the case.
// The request (an http::request<string_body>: no body for GET, the N serialized records for POST /echo,
// with its Content-Length) is built once at setup and written as is, the body sent from the request's
// own string. Each response is read the way Beast's client examples read one: the head, then the body,
// into an http::response_parser<string_body> made per request (its body limit raised to ringlab's), out
// of a beast::flat_buffer that lives as long as the connection (bytes past a response stay in it for the
// next one). The flat_buffer is used as the examples use it, with no size given: the parser takes every
// byte out of it, so it never grows past 512 bytes, and the body arrives in receives of 512 bytes (one
// asio operation each, with its allocations): what Beast does unless told otherwise. Each piece is copied
// from the flat_buffer into the parser's std::string (a fresh one per request, reserved to the
// Content-Length), which is then copied into a padded buffer and parsed into reused owning models.
//
// Every step (connect, write, read the head, read the body) is an asynchronous operation of the
// connection's chain (beast_connection.hpp, the code the row with N in flight runs on each of its
// connections), run to its end on the peer's own io_context, on the calling thread: synchronous as the
// caller sees it, no other thread. Each step waits at most the case's deadline (tcp_stream's
// expires_after); a step that outlives it ends with beast::error::timeout.
//
// The phase timeline has start, connected (when a connection was made), request sent, end of head (as
// first byte too: Beast reads the head whole), end of body and deserialized. Connections are counted
// where they are made. After any error the connection is closed, and the next run() makes a new one.
// Its system calls are asio's, unseen.
#include <span>
#include <string>
#include <string_view>

#include "beast_connection.hpp"
#include "library_peer.hpp"

namespace ringlab::strategies::detail {
namespace {

class Beast final : public LibraryPeer {
 public:
  using LibraryPeer::LibraryPeer;
  ~Beast() override { teardown(); }

  [[nodiscard]] std::string notes() const override {
    return "phase wait includes reading the head (Beast reads it whole; head shows 0); the flat_buffer, as "
           "in Beast's examples, stays at 512 bytes, so the body arrives in 512-byte receives, each an asio "
           "operation; syscalls n/a: asio makes its own, unseen";
  }

  void drop_connection() override { close(); }

 private:
  void close_case() override { close(); }
  Status open_case() override {
    close();
    endpoints_ = {};
    if (auto ec = resolve_endpoints(io_, config(), endpoints_); ec) {
      return fail(label(), "resolve " + authority(config()) + ": " + ec.message());
    }
    prepare_request();
    // keep_alive false: "Connection: close", and the stream is closed after the answer.
    build_request(request_, config(), posts(), target(), request_body(), !fresh());
    return {};
  }

  Result<Outcome> run_case(http::Timeline* timeline, Check check) override {
    begin(timeline);
    try {
      return exchange(timeline, check);
    } catch (const std::exception& error) {
      close();
      return fail(label(), std::string("beast ") + authority(config()) + ": " + error.what());
    }
  }

  Result<Outcome> exchange(http::Timeline* timeline, Check check) {
    connection_.start({.io = &io_,
                       .endpoints = &endpoints_,
                       .request = &request_,
                       .deadline = timeout(),
                       .stamps = timeline,
                       .ticks = config().ticks});
    io_.restart();
    io_.run();
    if (connection_.opened()) count_connections(1);
    if (!connection_.finished()) [[unlikely]] {
      std::string text = connection_.failed() ? connection_.failure_text(authority(config()))
                                              : "beast " + authority(config()) + ": the exchange did not end";
      close();
      return fail(label(), text);
    }
    const BeastResponse& message = connection_.response();  // lives in the connection until close()
    if (message.result_int() != 200) [[unlikely]] {
      close();
      return fail(label(), "status " + std::to_string(message.result_int()) + " for " +
                               std::string(request_.target()));
    }
    // Beast's parser ends a Content-Length body at its length and reports a short one (partial message);
    // this check only keeps the library peers alike.
    if (auto sized = check_length(content_length(message), message.body().size()); !sized) {
      close();
      return std::unexpected(sized.error());
    }
    auto result = deserialize(message.body(), check);
    // The server said it closes (or --connection fresh): the next run() connects again. Only now, since
    // close() frees the response that `message` is.
    if (!message.keep_alive() || fresh()) close();
    return result;
  }

  void close() noexcept { close_connections(io_, std::span(&connection_, 1)); }

  boost::asio::io_context io_{1};
  BeastEndpoints endpoints_;
  BeastRequest request_;
  BeastConnection connection_;  // after io_: closed while the io_context is still there
};

}  // namespace

// Every row of this library (peer_recipes.hpp): the method is the row's.
std::unique_ptr<Strategy> make_beast(const Recipe& recipe) {
  return std::make_unique<Beast>(recipe.name, recipe.method);
}

}  // namespace ringlab::strategies::detail
