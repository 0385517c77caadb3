#pragma once
// ResponseReader: ringlab's ResponseParser driven by a peer that receives the bytes itself (blocking
// sockets, epoll), handing the body to a BodySink exactly as http::Client does (body_sink.hpp): the
// head is received into the reader's own buffer; after it, each receive goes into the sink's window
// when it offers one (the body lands in place), else into the reader's buffer (the sink copies).
//
// Use, per response:
//   reader.start(sink, timeline, ticks);
//   while (true) {
//     std::span<char> into = reader.window();
//     n = recv(fd, into.data(), into.size());        // the caller's own syscall
//     done = n == 0 ? reader.closed() : reader.received(n);
//     if (!done) -> error; if (*done) break;
//   }
// new_connection() before the first response on a new connection.
//
// Errors (http::Error, peer left empty for the caller to fill): the parser's (malformed, truncated,
// header_too_large, body_too_large), the sink's, and Errc::malformed for bytes after the response
// (the server answered more than was asked). 1xx interim responses are skipped, as the client does.
//
// Memory: the own buffer (kReaderBufferBytes) and the parser are allocated once, with the reader.
#include <cstdint>
#include <memory>
#include <span>

#include "ringlab/http/body_sink.hpp"
#include "ringlab/http/client.hpp"
#include "ringlab/http/parser.hpp"

namespace ringlab::strategies::detail {

inline constexpr std::size_t kReaderBufferBytes = 64 * 1024;

class ResponseReader final : private http::ResponseHandler {
 public:
  explicit ResponseReader(const http::ParserLimits& limits = {});

  void new_connection() noexcept;
  void start(http::BodySink& sink, http::Timeline* timeline, http::TickSource ticks) noexcept;

  // Where the next receive should land; never empty while the response is incomplete.
  [[nodiscard]] std::span<char> window() noexcept;
  // `n` bytes were received at window().data(). True when the response is complete.
  http::Result<bool> received(std::size_t n);
  // The peer closed the connection: true if that completed a close-delimited body, else an error.
  http::Result<bool> closed();

  [[nodiscard]] int status() const noexcept { return status_; }
  [[nodiscard]] bool keep_alive() const noexcept { return keep_alive_; }
  [[nodiscard]] uint64_t body_bytes() const noexcept { return body_bytes_; }

 private:
  http::Status on_head(const http::ResponseHead& head) override;
  http::Status on_body(std::string_view bytes) override;
  http::Status on_complete() override;
  void stamp(uint64_t http::Timeline::*phase) noexcept {
    if (timeline_ != nullptr && ticks_ != nullptr) timeline_->*phase = ticks_();
  }

  http::ResponseParser parser_;
  std::unique_ptr<char[]> own_;
  std::size_t fill_ = 0;  // head bytes received into own_ so far
  http::BodySink* sink_ = nullptr;
  http::Timeline* timeline_ = nullptr;
  http::TickSource ticks_ = nullptr;
  char* window_ = nullptr;  // where the last window() pointed
  bool head_done_ = false;
  bool interim_ = false;
  bool complete_ = false;
  bool first_byte_ = false;
  int status_ = 0;
  bool keep_alive_ = true;
  uint64_t body_bytes_ = 0;
};

}  // namespace ringlab::strategies::detail
