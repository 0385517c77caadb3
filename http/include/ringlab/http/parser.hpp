#pragma once
// HTTP/1.1 message parsers on llhttp, for responses (the client) and requests (the server).
//
// feed() takes the next bytes of the stream, in pieces of any size: a message split at any byte
// parses the same as one fed whole. Events go to a handler the caller owns:
//   on_head(head)      the head is complete (views valid as documented in headers.hpp)
//   on_body(bytes)     a piece of the body, de-chunked; `bytes` points INTO the buffer given to
//                      feed(), never into a copy, so a sink that received in place can see that
//                      the bytes are already where it wants them (bytes.data() == its write cursor)
//   on_complete()      the message ended; for pipelined messages feed() stops right after it and
//                      returns how many bytes it consumed, so the caller can decide what to do
//                      with the rest (feed them again for the next message).
// A handler returns an error (Status) to stop parsing; feed() then returns that error.
//
// Limits (each with a default here, a flag in the binaries, and a test): max_header_bytes for the
// whole head (default 16 KiB, Errc::header_too_large) and max_body_bytes (default 64 MiB,
// Errc::body_too_large). A parse error sticks until reset().
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ringlab/http/error.hpp"
#include "ringlab/http/headers.hpp"

namespace ringlab::http {

struct ParserLimits {
  std::size_t max_header_bytes = 16 * 1024;
  uint64_t max_body_bytes = 64ull * 1024 * 1024;
};

class ResponseHandler {
 public:
  virtual Status on_head(const ResponseHead& head) = 0;
  virtual Status on_body(std::string_view bytes) = 0;
  virtual Status on_complete() = 0;

 protected:
  ~ResponseHandler() = default;
};

class RequestHandler {
 public:
  virtual Status on_head(const RequestHead& head) = 0;
  virtual Status on_body(std::string_view bytes) = 0;
  virtual Status on_complete() = 0;

 protected:
  ~RequestHandler() = default;
};

class ResponseParser {
 public:
  explicit ResponseParser(const ParserLimits& limits = {});
  ~ResponseParser();
  ResponseParser(const ResponseParser&) = delete;
  ResponseParser& operator=(const ResponseParser&) = delete;

  // Set before each response: a response to HEAD has no body whatever its headers say.
  void expect_no_body(bool no_body);
  // Consumes bytes until they run out or a message completes; returns bytes consumed.
  Result<std::size_t> feed(std::string_view bytes, ResponseHandler& handler);
  // The peer closed: completes a close-delimited body, or reports Errc::truncated.
  Status finish(ResponseHandler& handler);
  // Ready for the next message on the same connection (after on_complete).
  void reset();
  [[nodiscard]] bool in_message() const noexcept;  // some bytes of a message were consumed

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class RequestParser {
 public:
  explicit RequestParser(const ParserLimits& limits = {});
  ~RequestParser();
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  Result<std::size_t> feed(std::string_view bytes, RequestHandler& handler);
  Status finish(RequestHandler& handler);
  void reset();
  [[nodiscard]] bool in_message() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringlab::http
