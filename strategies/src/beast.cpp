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
// Beast's tcp_stream applies its deadline (expires_after) to asynchronous operations only, so every
// step (connect, write, read the head, read the body) is an asynchronous operation run to its end on
// the peer's own io_context, on the calling thread: synchronous as the caller sees it, no other thread.
// Each step waits at most the case's deadline; a step that outlives it ends with beast::error::timeout.
//
// The phase timeline has start, connected (when a connection was made), request sent, end of head (as
// first byte too: Beast reads the head whole), end of body and deserialized. Connections are counted
// where they are made. After any error the connection is closed, and the next run() makes a new one.
// Its system calls are asio's, unseen.
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <optional>

#include "library_peer.hpp"
#include "ringlab/http/parser.hpp"

namespace ringlab::strategies::detail {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = boost::asio::ip::tcp;

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
    request_ = {};
    beast::error_code ec;
    tcp::resolver resolver(io_);
    endpoints_ = resolver.resolve(config().host, std::to_string(config().port),
                                  tcp::resolver::numeric_host | tcp::resolver::numeric_service, ec);
    if (ec) return fail(label(), "resolve " + authority(config()) + ": " + ec.message());
    prepare_request();
    request_.method(posts() ? bhttp::verb::post : bhttp::verb::get);
    request_.target(target());
    request_.version(11);
    request_.set(bhttp::field::host, authority(config()));
    request_.set(bhttp::field::user_agent, "ringlab-beast");
    request_.keep_alive(!fresh());  // false: "Connection: close", and the stream is closed after the answer
    if (posts()) {
      request_.set(bhttp::field::content_type, "application/json");
      request_.body() = request_body();
    }
    request_.prepare_payload();
    return {};
  }

  Result<Outcome> run_case(http::Timeline* timeline, Check check) override {
    begin(timeline);
    try {
      return exchange(check);
    } catch (const std::exception& error) {
      close();
      return fail(label(), std::string("beast ") + authority(config()) + ": " + error.what());
    }
  }

  Result<Outcome> exchange(Check check) {
    if (!stream_) {
      stream_.emplace(io_);
      stream_->expires_after(timeout());
      if (auto ec = run_io([&](auto done) { stream_->async_connect(endpoints_, done); }); ec) {
        return error("connect", ec);
      }
      count_connections(1);
      stream_->socket().set_option(tcp::no_delay(true));
      stamp(&http::Timeline::connected);
    }
    stream_->expires_after(timeout());
    if (auto ec = run_io([&](auto done) { bhttp::async_write(*stream_, request_, done); }); ec) {
      return error("write", ec);
    }
    stamp(&http::Timeline::request_sent);

    response_.emplace();
    response_->body_limit(http::ParserLimits{}.max_body_bytes);
    stream_->expires_after(timeout());
    if (auto ec = run_io([&](auto done) { bhttp::async_read_header(*stream_, buffer_, *response_, done); }); ec) {
      return error("read head", ec);
    }
    // Beast reads the head whole: when its first byte came is not seen, so the wait ends with the head.
    stamp(&http::Timeline::first_byte);
    stamp(&http::Timeline::head_parsed);
    stream_->expires_after(timeout());
    if (auto ec = run_io([&](auto done) { bhttp::async_read(*stream_, buffer_, *response_, done); }); ec) {
      return error("read body", ec);
    }
    const auto& message = response_->get();  // lives in response_ until close()
    if (message.result_int() != 200) [[unlikely]] {
      close();
      return fail(label(), "status " + std::to_string(message.result_int()) + " for " +
                               std::string(request_.target()));
    }
    // Beast's parser ends a Content-Length body at its length and reports a short one (partial message);
    // this check only keeps the library peers alike.
    std::optional<std::string_view> length;
    if (const auto field = message.find(bhttp::field::content_length); field != message.end()) {
      length = std::string_view(field->value().data(), field->value().size());
    }
    if (auto sized = check_length(length, message.body().size()); !sized) {
      close();
      return std::unexpected(sized.error());
    }
    auto result = deserialize(message.body(), check);
    // The server said it closes (or --connection fresh): the next run() connects again. Only now, since
    // close() frees the response that `message` is.
    if (!message.keep_alive() || fresh()) close();
    return result;
  }

  // Starts one asynchronous operation (`start` receives its completion handler) and runs the io_context
  // until it is done: the operation's error.
  template <class Start>
  beast::error_code run_io(Start&& start) {
    beast::error_code result = asio::error::would_block;
    bool finished = false;
    start([&result, &finished](beast::error_code ec, auto&&...) {
      result = ec;
      finished = true;
    });
    io_.restart();
    io_.run();
    if (!finished) return asio::error::operation_aborted;
    return result;
  }

  std::unexpected<Error> error(std::string_view step, const beast::error_code& ec) {
    close();
    std::string text = "beast " + std::string(step) + " " + authority(config()) + ": " + ec.message();
    if (ec == bhttp::error::partial_message) text += " (the connection closed before the body was whole)";
    if (ec == bhttp::error::end_of_stream) text += " (the connection closed before a response)";
    return fail(label(), text);
  }

  void close() noexcept {
    if (stream_) {
      beast::error_code ignored;
      stream_->socket().shutdown(tcp::socket::shutdown_both, ignored);
      stream_->socket().close(ignored);
      stream_.reset();
      // Completes what the close cancelled, so the io_context holds nothing of the old connection.
      try {
        io_.restart();
        io_.run();
      } catch (...) {
      }
    }
    buffer_.clear();
    response_.reset();
  }

  asio::io_context io_{1};
  tcp::resolver::results_type endpoints_;
  std::optional<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
  bhttp::request<bhttp::string_body> request_;
  std::optional<bhttp::response_parser<bhttp::string_body>> response_;
};

}  // namespace

// Every row of this library (peer_recipes.hpp): the method is the row's.
std::unique_ptr<Strategy> make_beast(const Recipe& recipe) {
  return std::make_unique<Beast>(recipe.name, recipe.method);
}

}  // namespace ringlab::strategies::detail
