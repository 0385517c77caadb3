#pragma once
// BeastConnection: one kept-alive Boost.Beast connection (a beast::tcp_stream and the flat_buffer that
// lives as long as it) and the exchange of the one request in flight on it, as every beast row runs it:
// connect when not connected, write the request, read the head, then the body, into an
// http::response_parser<string_body> made per request (its body limit raised to ringlab's). The
// flat_buffer is used as Beast's client examples use it, with no size given: the parser takes every byte
// out of it, so it stays at 512 bytes and the body arrives in 512-byte receives, one asio operation each.
// Bytes past a response stay in it for the next one on the same connection.
//
// Each step is an asio asynchronous operation whose completion handler starts the next one: start() only
// starts the chain, and whoever owns the io_context runs it (beast.cpp: one connection, run until its
// chain ends; beast_inflight.cpp: N connections on one io_context, run until all N chains end). Beast's
// tcp_stream applies its deadline (expires_after) to asynchronous operations only; it is set anew before
// every step, so each step waits at most the deadline given and one that outlives it ends with
// beast::error::timeout. A chain that fails stops the io_context (io_context::stop), so that its owner
// sees the error without waiting for the other connections' chains; the owner then closes the
// connections with close_connections(), which runs what the close cancelled to its end.
//
// Threads and lifetime: a connection is used by the thread that runs its io_context, and is never moved
// (the handlers in flight point into it). The response lives until the next start() or
// release_response() or the close. What start() is given (the io_context, the endpoints, the request, the
// stamps) must outlive the chain, and the io_context must outlive the connection's close.
//
// Errors: the step that failed and asio's error code, said by failure_text() as the rows report them
// ("beast read head 127.0.0.1:8080: The socket was closed due to a timeout").
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ringlab/http/timeline.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies::detail {

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;
using BeastResponse = boost::beast::http::response<boost::beast::http::string_body>;
using BeastEndpoints = boost::asio::ip::tcp::resolver::results_type;

// The case's server as asio's endpoints (numeric host and port only: nothing is looked up); asio's error.
[[nodiscard]] boost::beast::error_code resolve_endpoints(boost::asio::io_context& io, const CaseConfig& config,
                                                         BeastEndpoints& endpoints);

// The request of a beast row, built once per case and written as is: GET `target`, or POST `target` of
// `body` (application/json, with its Content-Length); keep_alive false sends "Connection: close".
void build_request(BeastRequest& request, const CaseConfig& config, bool post, std::string_view target,
                   std::string_view body, bool keep_alive);

// The response's Content-Length as written (nullopt: none), for LibraryPeer's length check.
[[nodiscard]] std::optional<std::string_view> content_length(const BeastResponse& response);

class BeastConnection {
 public:
  // What the chain of one request works with; all of it outlives the chain.
  struct Exchange {
    boost::asio::io_context* io = nullptr;
    const BeastEndpoints* endpoints = nullptr;
    const BeastRequest* request = nullptr;
    std::chrono::milliseconds deadline{};  // of each step
    http::Timeline* stamps = nullptr;      // the phases of this request (null: none)
    http::TickSource ticks = nullptr;
  };

  BeastConnection() = default;
  BeastConnection(const BeastConnection&) = delete;
  BeastConnection& operator=(const BeastConnection&) = delete;

  // Starts the request's chain (a connect first when the connection is closed); the owner runs the
  // io_context. Stamps connected (when it connects), request_sent, first_byte and head_parsed (both when
  // the head is read: Beast reads it whole, so when its first byte came is not seen) and body_done.
  void start(const Exchange& exchange);

  // After the io_context ran: the chain reached its end, or failed, or neither (stopped for another).
  [[nodiscard]] bool finished() const noexcept { return state_ == State::done; }
  [[nodiscard]] bool failed() const noexcept { return state_ == State::failed; }
  // This chain connected (what the rows count as a connection opened), whether or not it then failed.
  [[nodiscard]] bool opened() const noexcept { return opened_; }
  // "beast <step> <authority>: <asio's message>", with what Beast's partial_message and end_of_stream
  // mean; for a chain that failed().
  [[nodiscard]] std::string failure_text(std::string_view authority) const;
  // The response of a chain that finished(); lives until the next start(), release_response() or close.
  [[nodiscard]] const BeastResponse& response() const { return parser_->get(); }
  // Frees the response (its body string): an idle connection then keeps its stream and flat_buffer only.
  void release_response() noexcept { parser_.reset(); }
  [[nodiscard]] bool connected() const noexcept { return stream_.has_value(); }
  // The flat_buffer's capacity (HeldMemory::receive_bytes).
  [[nodiscard]] std::size_t buffer_bytes() const noexcept { return buffer_.capacity(); }

 private:
  friend void close_connections(boost::asio::io_context& io, std::span<BeastConnection> connections) noexcept;
  enum class State { idle, in_flight, done, failed };

  // Whether a step's handler goes no further: the connection is no longer in flight (closed while the
  // step was pending), or the step failed (the chain is then finished with its error).
  bool ended(const boost::beast::error_code& ec);
  // The next step: named for failure_text(), its deadline set anew.
  void begin_step(std::string_view step);
  void on_connect(const boost::beast::error_code& ec);
  void write();
  void on_write(const boost::beast::error_code& ec);
  void on_head(const boost::beast::error_code& ec);
  void on_body(const boost::beast::error_code& ec);
  void finish(const boost::beast::error_code& ec);
  void stamp(uint64_t http::Timeline::*phase) const noexcept {
    if (exchange_.stamps != nullptr && exchange_.ticks != nullptr) exchange_.stamps->*phase = exchange_.ticks();
  }

  Exchange exchange_;
  State state_ = State::idle;
  bool opened_ = false;
  std::string_view step_;  // the step in flight, or the one that failed
  boost::beast::error_code error_;
  std::optional<boost::beast::tcp_stream> stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::response_parser<boost::beast::http::string_body>> parser_;
};

// Closes `connections` (every socket first, so that nothing of them is still in flight), runs `io` until
// what the closes cancelled has completed (so that it holds nothing of them), then frees their buffers'
// bytes and responses. The next start() of each connects again.
void close_connections(boost::asio::io_context& io, std::span<BeastConnection> connections) noexcept;

}  // namespace ringlab::strategies::detail
