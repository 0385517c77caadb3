#include "ringlab/http/response_receiver.hpp"

#include <string>

namespace ringlab::http {

ResponseReceiver::ResponseReceiver(const ParserLimits& limits, std::size_t buffer_bytes)
    : parser_(limits), own_(std::make_unique<char[]>(buffer_bytes)), buffer_bytes_(buffer_bytes) {}

void ResponseReceiver::start(BodySink& sink, Timeline* timeline, TickSource ticks, bool head_request) noexcept {
  // Requests are not pipelined: every response starts on a parser with nothing pending.
  parser_.reset();
  parser_.expect_no_body(head_request);
  sink_ = &sink;
  timeline_ = timeline;
  ticks_ = ticks;
  head_fill_ = 0;
  window_ = nullptr;
  head_done_ = false;
  interim_ = false;
  complete_ = false;
  first_byte_ = false;
  keep_alive_ = true;
  close_delimited_ = false;
  status_ = 0;
  body_bytes_ = 0;
}

Result<ReceiveWindow> ResponseReceiver::window() {
  ReceiveWindow window;
  if (head_done_) {
    window = sink_->receive_window();
    // The head's views died when its callback returned: the whole own buffer is free again.
    if (window.bytes.empty()) window = ReceiveWindow{std::span<char>(own_.get(), buffer_bytes_), -1};
  } else {
    if (head_fill_ == buffer_bytes_) {
      // A head longer than the buffer (a buffer smaller than ParserLimits::max_header_bytes): the
      // parser copies what it holds of it, and the buffer starts over.
      if (auto detached = parser_.detach(); !detached) return std::unexpected(detached.error());
      head_fill_ = 0;
    }
    // An incomplete head is appended to, so the views the parser holds into it stay valid.
    window = ReceiveWindow{std::span<char>(own_.get() + head_fill_, buffer_bytes_ - head_fill_), -1};
  }
  window_ = window.bytes.data();
  return window;
}

Result<bool> ResponseReceiver::received(std::size_t n) {
  const bool into_head = !head_done_;  // then the window was own_ after the head bytes kept
  auto done = feed(std::string_view(window_, n));
  if (done && !*done && into_head && !head_done_) head_fill_ += n;
  return done;
}

Result<bool> ResponseReceiver::received_elsewhere(std::string_view bytes) {
  auto done = feed(bytes);
  // The caller reuses that memory on return: an incomplete head the parser points into is copied out.
  if (done && !*done && !head_done_) {
    if (auto detached = parser_.detach(); !detached) return std::unexpected(detached.error());
  }
  return done;
}

Result<bool> ResponseReceiver::closed() {
  if (auto finished = parser_.finish(*this); !finished) return std::unexpected(finished.error());
  if (!complete_) {
    return fail(Errc::truncated, first_byte_ ? "peer closed the connection before the response ended"
                                             : "peer closed the connection before responding");
  }
  stamp(&Timeline::body_done);
  if (auto ended = sink_->end(); !ended) return std::unexpected(ended.error());
  return true;
}

Result<bool> ResponseReceiver::feed(std::string_view bytes) {
  if (!first_byte_) {
    first_byte_ = true;
    stamp(&Timeline::first_byte);
  }
  // A 1xx response and the final one may share a receive: feed until the bytes run out or the final
  // response completes.
  while (!bytes.empty() && !complete_) {
    auto consumed = parser_.feed(bytes, *this);
    if (!consumed) return std::unexpected(consumed.error());
    if (*consumed == 0) {  // cannot happen by parser.hpp's contract; never spin on it
      return fail(Errc::malformed, "parser consumed nothing of " + std::to_string(bytes.size()) + " bytes");
    }
    bytes.remove_prefix(*consumed);
  }
  if (!complete_) return false;
  if (!bytes.empty()) {
    return fail(Errc::malformed, std::to_string(bytes.size()) + " unsolicited bytes after the response");
  }
  stamp(&Timeline::body_done);
  if (auto ended = sink_->end(); !ended) return std::unexpected(ended.error());
  return true;
}

Status ResponseReceiver::on_head(const ResponseHead& head) {
  // 1xx responses (100 Continue, 103 Early Hints) precede the real one: skip them. 101 Switching
  // Protocols is refused by the parser as an upgrade.
  if (head.status / 100 == 1) {
    interim_ = true;
    return {};
  }
  head_done_ = true;
  status_ = head.status;
  keep_alive_ = head.keep_alive;
  close_delimited_ = !head.content_length && !head.chunked;
  stamp(&Timeline::head_parsed);
  return sink_->begin(head);
}

Status ResponseReceiver::on_body(std::string_view bytes) {
  body_bytes_ += bytes.size();
  return sink_->on_body(bytes);
}

Status ResponseReceiver::on_complete() {
  if (interim_) {
    interim_ = false;
    return {};
  }
  complete_ = true;
  return {};
}

}  // namespace ringlab::http
