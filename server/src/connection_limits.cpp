// Connection (worker.hpp): its limits. Deadlines checked at each tick of the worker (header, body,
// idle, drain and shutdown), the stop of the worker, and the answer to a request the parser refused.
#include <string>
#include <string_view>

#include "worker.hpp"

namespace ringlab::server {
namespace {

int status_for(http::Errc code) noexcept {
  switch (code) {
    case http::Errc::header_too_large: return 431;
    case http::Errc::body_too_large: return 413;
    case http::Errc::unsupported: return 501;
    default: return 400;
  }
}

}  // namespace

void Connection::on_parse_error(const http::Error& error) {
  ++worker_.counters().bad_requests;
  const int status = out_of_memory_ ? 503 : status_for(error.code);
  std::string message;
  switch (status) {
    case 503: message = "request not served: "; break;
    case 431: message = "request head too large: "; break;
    case 413: message = "request body too large: "; break;
    case 501: message = "not implemented: "; break;
    default: message = "malformed request: "; break;
  }
  message.append(error.detail);
  // Whatever was queued before stays in order; the connection ends after this answer.
  respond_error(status, message, {}, false, true);
}

void Connection::on_tick(Clock::time_point now) {
  switch (state_) {
    case State::open: {
      if (worker_.shutdown_expired()) {
        ++worker_.counters().idle_closed;
        start_close();
        break;
      }
      // A request is being read (not paused with bytes held, not ended by an answer already).
      const bool reading = parser_.in_message() && !paused_ && !close_after_send_;
      if (reading && !head_seen_ && now - head_since_ > worker_.header_limit()) {
        time_out("request head not complete within the header timeout");
      } else if (reading && head_seen_ && now - last_active_ > worker_.body_limit()) {
        time_out("no request body bytes within the body timeout");
      } else if (!reading && fetch_ == nullptr && now - last_active_ > worker_.idle_limit()) {
        // (A /proxy fetch in flight is bounded by --upstream-timeout per step instead.)
        ++worker_.counters().idle_closed;
        start_close();
      }
      break;
    }
    case State::draining:
      if (now - drain_since_ > worker_.linger_limit() || worker_.shutdown_expired()) start_close();
      break;
    case State::free:
    case State::closing:
      break;
  }
}

void Connection::time_out(std::string_view message) {
  ++worker_.counters().idle_closed;
  // nginx answers 408 too; the connection then drains and closes like after any closing answer.
  try {
    respond_error(408, message, {}, false, true);
  } catch (const std::bad_alloc&) {
    start_close();
    return;
  }
  flush();
}

void Connection::on_stop() {
  if (state_ == State::draining) {
    start_close();
    return;
  }
  if (state_ != State::open) return;
  if (!parser_.in_message() && !send_in_flight_ && !batch_sent_ && pending().empty() && fetch_ == nullptr) {
    start_close();
    return;
  }
  // A request in progress is answered with "Connection: close" (respond() sees stopping()); answers
  // already queued go out, then the connection ends.
  if (!parser_.in_message()) close_after_send_ = true;
}

}  // namespace ringlab::server
