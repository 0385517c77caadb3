#include "ringlab/http/response_receiver.hpp"

#include <algorithm>
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
  // What the last complete response on this receiver carried: a body larger than the own buffer is
  // expected again (a client asks one origin for bodies of one size, a benchmark case always).
  if (now_.complete) last_body_bytes_ = now_.body_bytes;
  now_ = Progress{};
}

Result<ReceiveWindow> ResponseReceiver::window() {
  ReceiveWindow window;
  if (now_.head_done) {
    window = sink_->receive_window();
    // The head's views died when its callback returned: the whole own buffer is free again.
    if (window.bytes.empty()) window = ReceiveWindow{std::span<char>(own_.get(), buffer_bytes_), -1};
  } else {
    if (now_.head_fill == buffer_bytes_) {
      // A head longer than the buffer (a buffer smaller than ParserLimits::max_header_bytes): the
      // parser copies what it holds of it, and the buffer starts over.
      if (auto detached = parser_.detach(); !detached) return std::unexpected(detached.error());
      now_.head_fill = 0;
    }
    // An incomplete head is appended to, so the views the parser holds into it stay valid. For a sink that
    // receives in place, after a body larger than the own buffer, small receives: the body after the head
    // then lands in the sink's window instead of filling the buffer and being copied from it. After a
    // smaller body, the whole buffer: a response that fits it arrives in one receive, where a small first
    // one would cost a second receive (a second io_uring_enter for single_enter) to save a short copy.
    std::size_t room = buffer_bytes_ - now_.head_fill;
    if (sink_->receives_in_place() && last_body_bytes_ > buffer_bytes_) room = std::min(room, kHeadReceiveBytes);
    window = ReceiveWindow{std::span<char>(own_.get() + now_.head_fill, room), -1};
  }
  now_.window = window.bytes.data();
  return window;
}

Result<bool> ResponseReceiver::received(std::size_t n) {
  const bool into_head = !now_.head_done;  // then the window was own_ after the head bytes kept
  auto done = feed(std::string_view(now_.window, n));
  if (done && !*done && into_head && !now_.head_done) now_.head_fill += n;
  return done;
}

Result<bool> ResponseReceiver::received_elsewhere(std::string_view bytes, Keep keep) {
  auto done = feed(bytes);
  // The caller reuses that memory on return: an incomplete head the parser points into is copied out,
  // and so is what the sink kept in place unless the caller keeps it.
  if (done && !*done && !now_.head_done) {
    if (auto detached = parser_.detach(); !detached) return std::unexpected(detached.error());
  }
  if (keep == Keep::none) let_go();
  return done;
}

std::size_t ResponseReceiver::kept_in_place() const noexcept {
  return sink_ != nullptr && now_.head_done ? sink_->kept_in_place() : 0;
}

void ResponseReceiver::let_go() {
  if (kept_in_place() > 0) sink_->let_go();
}

void ResponseReceiver::kept_moved(std::ptrdiff_t by) {
  if (kept_in_place() > 0) sink_->kept_moved(by);
}

Result<bool> ResponseReceiver::closed() {
  if (auto finished = parser_.finish(*this); !finished) return std::unexpected(finished.error());
  if (!now_.complete) {
    return fail(Errc::truncated, now_.first_byte ? "peer closed the connection before the response ended"
                                             : "peer closed the connection before responding");
  }
  stamp(&Timeline::body_done);
  if (auto ended = sink_->end(); !ended) return std::unexpected(ended.error());
  return true;
}

Result<bool> ResponseReceiver::feed(std::string_view bytes) {
  if (!now_.first_byte) {
    now_.first_byte = true;
    stamp(&Timeline::first_byte);
  }
  // A 1xx response and the final one may share a receive: feed until the bytes run out or the final
  // response completes.
  while (!bytes.empty() && !now_.complete) {
    auto consumed = parser_.feed(bytes, *this);
    if (!consumed) return std::unexpected(consumed.error());
    if (*consumed == 0) {  // cannot happen by parser.hpp's contract; never spin on it
      return fail(Errc::malformed, "parser consumed nothing of " + std::to_string(bytes.size()) + " bytes");
    }
    bytes.remove_prefix(*consumed);
  }
  if (!now_.complete) return false;
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
    now_.interim = true;
    return {};
  }
  now_.head_done = true;
  now_.status = head.status;
  now_.keep_alive = head.keep_alive;
  now_.close_delimited = !head.content_length && !head.chunked;
  stamp(&Timeline::head_parsed);
  return sink_->begin(head);
}

Status ResponseReceiver::on_body(std::string_view bytes) {
  // Stamped before the sink runs: the time the bytes arrived here, not the sink's work on them.
  stamp(&Timeline::last_body_byte);
  if (now_.body_bytes == 0 && timeline_ != nullptr) timeline_->first_body_byte = timeline_->last_body_byte;
  now_.body_bytes += bytes.size();
  return sink_->on_body(bytes);
}

Status ResponseReceiver::on_complete() {
  if (now_.interim) {
    now_.interim = false;
    return {};
  }
  now_.complete = true;
  return {};
}

}  // namespace ringlab::http
