// The chain of one Boost.Beast request (beast_connection.hpp): each handler starts the next step, or
// ends the chain with the step's error. A handler that finds its connection no longer in flight (closed
// while the operation was pending, and completed aborted as the close's drain runs) does nothing.
#include "beast_connection.hpp"

#include <boost/asio/connect.hpp>

#include <string>

#include "common.hpp"
#include "ringlab/http/parser.hpp"

namespace ringlab::strategies::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = boost::asio::ip::tcp;

beast::error_code resolve_endpoints(asio::io_context& io, const CaseConfig& config, BeastEndpoints& endpoints) {
  beast::error_code ec;
  tcp::resolver resolver(io);
  endpoints = resolver.resolve(config.host, std::to_string(config.port),
                               tcp::resolver::numeric_host | tcp::resolver::numeric_service, ec);
  return ec;
}

void build_request(BeastRequest& request, const CaseConfig& config, bool post, std::string_view target,
                   std::string_view body, bool keep_alive) {
  request = {};
  request.method(post ? bhttp::verb::post : bhttp::verb::get);
  request.target(beast::string_view(target.data(), target.size()));
  request.version(11);
  request.set(bhttp::field::host, authority(config));
  request.set(bhttp::field::user_agent, "ringlab-beast");
  request.keep_alive(keep_alive);
  if (post) {
    request.set(bhttp::field::content_type, "application/json");
    request.body() = body;
  }
  request.prepare_payload();
}

std::optional<std::string_view> content_length(const BeastResponse& response) {
  const auto field = response.find(bhttp::field::content_length);
  if (field == response.end()) return std::nullopt;
  return std::string_view(field->value().data(), field->value().size());
}

void BeastConnection::start(const Exchange& exchange) {
  exchange_ = exchange;
  state_ = State::in_flight;
  opened_ = false;
  error_ = {};
  if (stream_) {
    write();
    return;
  }
  stream_.emplace(*exchange_.io);
  begin_step("connect");
  stream_->async_connect(*exchange_.endpoints,
                         [this](const beast::error_code& ec, const tcp::endpoint&) { on_connect(ec); });
}

bool BeastConnection::ended(const beast::error_code& ec) {
  if (state_ != State::in_flight) return true;
  if (!ec) return false;
  finish(ec);
  return true;
}

void BeastConnection::begin_step(std::string_view step) {
  step_ = step;
  stream_->expires_after(exchange_.deadline);
}

void BeastConnection::on_connect(const beast::error_code& ec) {
  if (ended(ec)) return;
  opened_ = true;
  step_ = "TCP_NODELAY";
  beast::error_code option;
  stream_->socket().set_option(tcp::no_delay(true), option);
  if (ended(option)) return;
  stamp(&http::Timeline::connected);
  write();
}

void BeastConnection::write() {
  begin_step("write");
  bhttp::async_write(*stream_, *exchange_.request,
                     [this](const beast::error_code& ec, std::size_t) { on_write(ec); });
}

void BeastConnection::on_write(const beast::error_code& ec) {
  if (ended(ec)) return;
  stamp(&http::Timeline::request_sent);
  begin_step("read head");
  parser_.emplace();
  parser_->body_limit(http::ParserLimits{}.max_body_bytes);
  bhttp::async_read_header(*stream_, buffer_, *parser_,
                           [this](const beast::error_code& head, std::size_t) { on_head(head); });
}

void BeastConnection::on_head(const beast::error_code& ec) {
  if (ended(ec)) return;
  // Beast reads the head whole: when its first byte came is not seen, so the wait ends with the head.
  stamp(&http::Timeline::first_byte);
  stamp(&http::Timeline::head_parsed);
  begin_step("read body");
  bhttp::async_read(*stream_, buffer_, *parser_, [this](const beast::error_code& body, std::size_t) { on_body(body); });
}

void BeastConnection::on_body(const beast::error_code& ec) {
  if (state_ != State::in_flight) return;
  if (!ec) stamp(&http::Timeline::body_done);
  finish(ec);
}

void BeastConnection::finish(const beast::error_code& ec) {
  error_ = ec;
  state_ = ec ? State::failed : State::done;
  if (ec) exchange_.io->stop();  // the owner sees it now, not when the other chains end
}

std::string BeastConnection::failure_text(std::string_view authority) const {
  std::string text = "beast " + std::string(step_) + " " + std::string(authority) + ": " + error_.message();
  if (error_ == bhttp::error::partial_message) text += " (the connection closed before the body was whole)";
  if (error_ == bhttp::error::end_of_stream) text += " (the connection closed before a response)";
  return text;
}

void close_connections(asio::io_context& io, std::span<BeastConnection> connections) noexcept {
  bool closed = false;
  for (BeastConnection& connection : connections) {
    connection.state_ = BeastConnection::State::idle;  // what completes from now on is the close's
    if (!connection.stream_) continue;
    beast::error_code ignored;
    connection.stream_->socket().shutdown(tcp::socket::shutdown_both, ignored);
    connection.stream_->close();  // the socket and the deadline's timer: what waits on them is cancelled
    closed = true;
  }
  if (closed) {
    // Completes what the closes cancelled, so the io_context holds nothing of the old connections. The
    // streams, buffers and parsers go only after this: the operations completing refer to them.
    try {
      io.restart();
      io.run();
    } catch (...) {
    }
  }
  for (BeastConnection& connection : connections) {
    connection.stream_.reset();
    connection.buffer_.clear();
    connection.parser_.reset();
  }
}

}  // namespace ringlab::strategies::detail
