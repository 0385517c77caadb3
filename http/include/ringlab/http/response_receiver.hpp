#pragma once
// ResponseReceiver: one HTTP/1.1 response exchange without I/O. It says where the next bytes should
// land, takes the count of bytes received there (or bytes that landed elsewhere, or the end of the
// stream), and drives the ResponseParser and the BodySink. http::Client drives it over net::Stream;
// the socket peers (blocking sockets, epoll) drive it with their own system calls; tests drive it
// with byte tables cut at every point. Every framing rule lives here once.
//
// Use, per response:
//   receiver.start(sink, timeline, ticks, head_request);
//   while (true) {
//     auto window = receiver.window();                  // error: only a head that cannot be kept
//     n = receive(window->bytes);                       // the caller's own I/O
//     done = n == 0 ? receiver.closed() : receiver.received(n);
//     if (!done) -> error, close the connection; if (*done) break;
//   }
// Bytes that landed in memory the receiver did not offer (a kernel-provided buffer) go to
// received_elsewhere(); the caller may reuse that memory when it returns, unless it said it keeps what the
// sink keeps in place (Keep::in_place, body_sink.hpp): then kept_in_place() bytes at the end of those
// bytes stay the sink's until the next received_elsewhere() or let_go().
//
// Where bytes land: the first receive of a response goes into the receiver's own buffer (at most
// kHeadReceiveBytes of it when the sink receives in place, body_sink.hpp, and the last response's body
// was larger than the buffer), and an incomplete head is appended to, so the parser's views into it stay valid (a head that fills the
// buffer is copied into the parser, which then holds it, and the buffer starts over). After the head
// the sink is asked for a window: bytes then land in the sink's memory (its fixed-buffer index says
// when that is a registered buffer) and are fed to the parser where they landed, so on_body sees the
// sink's own cursor and does not copy; a sink without a window gets them from the whole own buffer.
//
// Stamps (timeline.hpp), when start() is given a Timeline and a TickSource: first_byte as the first
// bytes are fed, head_parsed, first_body_byte and last_body_byte as body bytes go to the sink, and
// body_done.
//
// Completion: received()/closed() return true once the response is complete, after the sink's end()
// and the body_done stamp. 1xx interim responses are skipped. Requests are never pipelined, so bytes
// after the end of the response in the same receive are Errc::malformed.
//
// Errors (http::Error; the peer is left empty for the caller to fill): the parser's (malformed,
// truncated, header_too_large, body_too_large), the sink's, malformed for bytes after the response,
// truncated for a close before the response ended. After an error the connection's state is unknown:
// the caller closes it; start() makes the receiver ready for a response on a new one.
//
// Memory and threads: the parser and the own buffer are allocated once, with the receiver; nothing
// per response. The sink and the timeline belong to the caller and must outlive the response. Used
// by one thread at a time.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "ringlab/http/body_sink.hpp"
#include "ringlab/http/error.hpp"
#include "ringlab/http/parser.hpp"
#include "ringlab/http/timeline.hpp"

namespace ringlab::http {

class ResponseReceiver final : private ResponseHandler {
 public:
  ResponseReceiver(const ParserLimits& limits, std::size_t buffer_bytes);

  // A new response: `head_request` says it answers a HEAD (no body, whatever the head says).
  // Stamps nothing: the caller owns the timeline's start.
  void start(BodySink& sink, Timeline* timeline, TickSource ticks, bool head_request = false) noexcept;

  // Where the next receive should land; never empty while the response is incomplete.
  [[nodiscard]] Result<ReceiveWindow> window();
  // `n` > 0 bytes were received at the start of the last window(). True when the response is complete.
  Result<bool> received(std::size_t n);
  // Bytes received into memory the receiver did not offer; the caller may reuse it on return, all of it
  // with Keep::none, all but the kept_in_place() bytes at its end with Keep::in_place.
  enum class Keep { none, in_place };
  Result<bool> received_elsewhere(std::string_view bytes, Keep keep = Keep::none);
  // The sink's bytes kept in place (BodySink::kept_in_place; 0 before the body), and the call that copies
  // them into the sink's memory.
  [[nodiscard]] std::size_t kept_in_place() const noexcept;
  void let_go();
  void kept_moved(std::ptrdiff_t by);
  // The peer closed the stream: true when that ended a close-delimited body; otherwise Errc::truncated.
  Result<bool> closed();

  [[nodiscard]] bool complete() const noexcept { return now_.complete; }
  [[nodiscard]] int status() const noexcept { return now_.status; }
  [[nodiscard]] bool keep_alive() const noexcept { return now_.keep_alive; }
  [[nodiscard]] bool close_delimited() const noexcept { return now_.close_delimited; }
  [[nodiscard]] uint64_t body_bytes() const noexcept { return now_.body_bytes; }
  // Any byte of this response arrived (a close before one means the peer never answered).
  [[nodiscard]] bool any_byte() const noexcept { return now_.first_byte; }
  [[nodiscard]] std::size_t buffer_bytes() const noexcept { return buffer_bytes_; }

 private:
  Status on_head(const ResponseHead& head) override;
  Status on_body(std::string_view bytes) override;
  Status on_complete() override;
  // Feeds `bytes` to the parser; true when the response completed (and the sink ended).
  Result<bool> feed(std::string_view bytes);
  void stamp(uint64_t Timeline::*phase) noexcept {
    if (timeline_ != nullptr && ticks_ != nullptr) timeline_->*phase = ticks_();
  }

  ResponseParser parser_;
  std::unique_ptr<char[]> own_;
  std::size_t buffer_bytes_;
  BodySink* sink_ = nullptr;
  Timeline* timeline_ = nullptr;
  TickSource ticks_ = nullptr;
  // What the response in progress has done so far; start() resets it whole.
  struct Progress {
    std::size_t head_fill = 0;  // bytes of an incomplete head kept at the start of own_
    char* window = nullptr;     // where the last window() pointed
    bool head_done = false;
    bool interim = false;
    bool complete = false;
    bool first_byte = false;
    bool keep_alive = true;
    bool close_delimited = false;
    int status = 0;
    uint64_t body_bytes = 0;
  };
  Progress now_;
  uint64_t last_body_bytes_ = 0;  // the body of the last complete response (start() keeps it)
};

}  // namespace ringlab::http
