#include "response_reader.hpp"

#include <string>

namespace ringlab::strategies::detail {

ResponseReader::ResponseReader(const http::ParserLimits& limits)
    : parser_(limits), own_(std::make_unique<char[]>(kReaderBufferBytes)) {}

void ResponseReader::new_connection() noexcept { parser_.reset(); }

void ResponseReader::start(http::BodySink& sink, http::Timeline* timeline, http::TickSource ticks) noexcept {
  sink_ = &sink;
  timeline_ = timeline;
  ticks_ = ticks;
  fill_ = 0;
  window_ = nullptr;
  head_done_ = false;
  interim_ = false;
  complete_ = false;
  first_byte_ = false;
  status_ = 0;
  keep_alive_ = true;
  body_bytes_ = 0;
}

std::span<char> ResponseReader::window() noexcept {
  std::span<char> into;
  if (!head_done_) {
    // The head so far stays where it is (the parser holds views into it): append after it.
    into = std::span<char>(own_.get() + fill_, kReaderBufferBytes - fill_);
  } else {
    into = sink_->receive_window().bytes;
    if (into.empty()) into = std::span<char>(own_.get(), kReaderBufferBytes);
  }
  window_ = into.data();
  return into;
}

http::Result<bool> ResponseReader::received(std::size_t n) {
  if (!first_byte_) {
    first_byte_ = true;
    stamp(&http::Timeline::first_byte);
  }
  const bool into_head = !head_done_;
  std::string_view rest(window_, n);
  while (true) {
    auto consumed = parser_.feed(rest, *this);
    if (!consumed) return std::unexpected(consumed.error());
    rest.remove_prefix(*consumed);
    if (complete_) {
      if (!rest.empty()) {
        return http::fail(http::Errc::malformed,
                          std::to_string(rest.size()) + " bytes after the end of the response");
      }
      return true;
    }
    if (rest.empty()) break;
    // Only an interim (1xx) response ends inside a receive without ending ours: feed on.
  }
  if (into_head && !head_done_) {
    fill_ += n;
    // The parser's limit (ParserLimits::max_header_bytes) is below the buffer's size and fires first;
    // this only guards the buffer.
    if (fill_ == kReaderBufferBytes) return http::fail(http::Errc::header_too_large, "head fills the receive buffer");
  }
  return false;
}

http::Result<bool> ResponseReader::closed() {
  if (auto finished = parser_.finish(*this); !finished) return std::unexpected(finished.error());
  if (complete_) return true;
  return http::fail(http::Errc::truncated, "peer closed before the response");
}

http::Status ResponseReader::on_head(const http::ResponseHead& head) {
  if (head.status / 100 == 1) {
    interim_ = true;
    return {};
  }
  head_done_ = true;
  status_ = head.status;
  keep_alive_ = head.keep_alive;
  stamp(&http::Timeline::head_parsed);
  return sink_->begin(head);
}

http::Status ResponseReader::on_body(std::string_view bytes) {
  body_bytes_ += bytes.size();
  return sink_->on_body(bytes);
}

http::Status ResponseReader::on_complete() {
  if (interim_) {
    interim_ = false;
    return {};
  }
  complete_ = true;
  stamp(&http::Timeline::body_done);
  return sink_->end();
}

}  // namespace ringlab::strategies::detail
