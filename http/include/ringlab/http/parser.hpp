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
//                      with the rest (feed them again for the next message; no reset() needed).
// A handler returns an error (Status) to stop parsing; feed() then returns that error.
//
// Heads that arrive in several feeds. The parser keeps the head as views, not copies: until
// on_head returns, the bytes of the head already fed must stay where they were and unchanged.
// A caller that appends each receive after the previous one in the same buffer, or keeps its earlier
// buffers alive, needs to do nothing. A name or value whose pieces arrive in two buffers that are
// not adjacent in memory is joined in the parser's scratch storage. A caller that must move or
// overwrite the bytes it fed while a head is incomplete calls detach() first: it copies the partial
// head into the scratch, after which the caller's buffer is free.
//
// Memory: the scratch is allocated with the parser (4 KiB) and grows, at most to twice
// max_header_bytes, only if a head needs it; it is reused for every message, so a parser in steady
// state does not allocate. Error paths allocate (the detail text).
//
// Limits (each with a default here, a flag in the binaries, and a test):
//   max_header_bytes  the whole head, request or status line through the blank line, and any CR/LF
//                     before the start line (default 16 KiB; one byte more is
//                     Errc::header_too_large, however the bytes were cut into feeds). More than
//                     kMaxHeaders header fields is header_too_large too. Chunk extensions and
//                     trailers are read and dropped; their bytes, per message, count against the
//                     same limit, each extension name or value one byte more for its ';' or '='
//                     (so empty extensions count too).
//   max_body_bytes    the body (default 64 MiB, Errc::body_too_large): a Content-Length above it is
//                     refused when the head completes, before on_head; a chunked body when the
//                     chunk size that crosses it is announced; a close-delimited one as it arrives.
//
// Errors: Errc::malformed with llhttp's reason, Errc::header_too_large, body_too_large,
// unsupported (protocol upgrade, CONNECT), truncated (finish() inside a message), or the handler's
// own error. Every detail ends with " at byte N", N counted from the start of the stream (from the
// last reset()). An error sticks: feed() and finish() return it again until reset().
//
// Framing rules worth knowing (RFC 9112 6.3): a response to HEAD (expect_no_body), and a 1xx, 204
// or 304 response, ends with its head whatever its Content-Length says. A 1xx interim response is a
// message of its own: the caller skips it and feeds on. Content-Length together with
// Transfer-Encoding, and duplicate Content-Length fields (even equal), are malformed. A request
// Transfer-Encoding that does not end with chunked is malformed; in a response it means a
// close-delimited body, completed by finish(). Stricter than llhttp 8.1, which skips whatever two
// bytes follow a chunk's data: they must be CRLF (else Errc::malformed at the first of them).
//
// Requests only (what llhttp's strict mode would check, which Debian's llhttp 8.1 is not built
// with; responses keep llhttp's lenient reading, so the client takes what real servers send, at
// no extra cost per body byte): in the head, chunk-size lines, the last chunk and trailers a CR
// must be followed by LF ("CR not followed by LF", at the offending byte); a line starting with SP
// or HT after the request line is obsolete line folding and malformed (RFC 9112 5.2);
// Transfer-Encoding in an HTTP/1.0 request is malformed (RFC 9112 6.1); an Upgrade offer (such as
// "Upgrade: h2c") is ignored and the request parsed as HTTP/1.1, while CONNECT stays unsupported.
// Known limit of llhttp 8.1, kept: a chunk with more than one extension ("2;a=b;c=d") is refused
// as malformed although RFC 9112 allows it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "ringlab/http/error.hpp"
#include "ringlab/http/headers.hpp"

namespace ringlab::http {

struct ParserLimits {
  std::size_t max_header_bytes = 16 * 1024;
  uint64_t max_body_bytes = 64ull * 1024 * 1024;
};

// Receives a parser's events (see above); `Head` is ResponseHead or RequestHead. The caller owns the
// handler; the parser holds it only for the duration of one feed() or finish() call.
template <class Head>
class MessageHandler {
 public:
  virtual Status on_head(const Head& head) = 0;
  virtual Status on_body(std::string_view bytes) = 0;
  virtual Status on_complete() = 0;

 protected:
  ~MessageHandler() = default;
};

using ResponseHandler = MessageHandler<ResponseHead>;
using RequestHandler = MessageHandler<RequestHead>;

// One parser per connection, used from one thread at a time. Instantiated for ResponseHead
// (ResponseParser, the client) and RequestHead (RequestParser, the server) only.
template <class Head>
class MessageParser {
 public:
  explicit MessageParser(const ParserLimits& limits = {});
  ~MessageParser();
  MessageParser(const MessageParser&) = delete;
  MessageParser& operator=(const MessageParser&) = delete;

  // Responses only. Set before each response: a response to HEAD has no body whatever its headers
  // say. The setting stays (across reset() too) until changed.
  void expect_no_body(bool no_body)
    requires std::is_same_v<Head, ResponseHead>;
  // Consumes bytes until they run out or a message completes; returns bytes consumed.
  Result<std::size_t> feed(std::string_view bytes, MessageHandler<Head>& handler);
  // The peer closed: completes a close-delimited body, or reports Errc::truncated when a message is
  // incomplete (a request body is never close-delimited, so inside a request it always is).
  // Closing between messages is not an error. The stream has ended: reset() before feeding again.
  Status finish(MessageHandler<Head>& handler);
  // Copies the head in progress into parser-owned storage, so the caller may reuse the buffers it
  // fed (see above). A no-op outside a head.
  Status detach();
  // Ready for a new stream (a new connection, or after an error). Not needed between messages.
  void reset();
  [[nodiscard]] bool in_message() const noexcept;  // some bytes of a message were consumed

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

extern template class MessageParser<ResponseHead>;
extern template class MessageParser<RequestHead>;

using ResponseParser = MessageParser<ResponseHead>;
using RequestParser = MessageParser<RequestHead>;

}  // namespace ringlab::http
