#pragma once
// Building responses: the head, the body framing (Content-Length or chunked) and JSON error bodies.
//
// Heads carry no Date header: producing it costs a clock read and formatting per response (or a
// cache refreshed every second by a timer), HTTP/1.1 lets a server without a reliable clock omit it
// (RFC 9110 6.6.1), and none of ringlab's clients reads it. A constant "Server: ringlab" is sent.
//
// HTTP/1.0 clients never get chunked coding (they cannot decode it): a chunked=1 request from one
// is answered with Content-Length. That decision belongs to the caller (ResponseHead::chunked).
#include <cstdint>
#include <string>
#include <string_view>

#include "ringlab/server/output.hpp"

namespace ringlab::server {

struct ResponseHead {
  int status = 200;
  std::string_view content_type{};  // omitted when empty
  uint64_t content_length = 0;    // sent unless chunked
  bool chunked = false;           // "Transfer-Encoding: chunked" instead of Content-Length
  // Neither Content-Length nor Transfer-Encoding: the head of a HEAD answer whose body was not
  // generated (RFC 9110 9.3.2 lets a HEAD answer omit them).
  bool length_unknown = false;
  bool close = false;             // "Connection: close": the server closes after this response
  bool keep_alive = false;        // "Connection: keep-alive" (HTTP/1.0 clients that asked for it)
  std::string_view allow{};       // "Allow: ..." when non-empty (405)
};

// "OK", "Not Found", ...; "Unknown" for a status this server never sends.
[[nodiscard]] std::string_view reason_phrase(int status) noexcept;

// Appends the status line and headers, and the empty line that ends the head.
void append_head(std::string& out, const ResponseHead& head);

// The interim answer to "Expect: 100-continue".
inline constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// One chunk of chunked coding: its size line, `piece` (through OutputBatch::append_body, so a large
// piece is referenced, not copied, and must live as append_ref() requires) and its CRLF. An empty
// piece would be the last chunk: nothing is appended for it.
void append_chunk(OutputBatch& out, std::string_view piece);
// The last chunk of chunked coding, with no trailers.
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

// Appends the body in chunked coding: chunks of `chunk_bytes` (the last one shorter), then the
// terminating "0\r\n\r\n" (no trailers). The chunk payloads go through OutputBatch::append_body, so
// large ones are referenced, not copied: `body` must live as append_ref() requires.
void append_chunked_body(OutputBatch& out, std::string_view body, uint32_t chunk_bytes);

// The same a window at a time: appends chunks from the front of `rest` (removing them from it)
// until `rest` is empty, then the terminator, or until out.queued_bytes() reaches `budget` (at least
// one chunk is appended per call). Returns true once the terminator is appended. Small chunks cost
// up to about six bytes of framing per body byte on the wire; a window keeps that memory bounded
// whatever the chunk size (the connection appends the next window when the previous one went out).
bool append_chunks(OutputBatch& out, std::string_view& rest, uint32_t chunk_bytes, std::size_t budget);

// Appends a response: head (Content-Length or chunked per `head.chunked`, length taken from
// body.size()) and, unless `head_only` (HEAD), the body; a chunked body only up to `budget` as for
// append_chunks. Returns what of a chunked body is left to append (empty when the answer is whole).
// Body lifetime as for append_chunked_body. A Content-Length body goes through
// OutputBatch::append_body(body, *source) when `source` is given (a chunked one ignores it).
std::string_view append_response(OutputBatch& out, ResponseHead head, std::string_view body, bool head_only,
                                 uint32_t chunk_bytes, std::size_t budget = SIZE_MAX,
                                 const BodySource* source = nullptr);

// {"error":"<message>"} with the message escaped as a JSON string.
void append_json_error(std::string& out, std::string_view message);

}  // namespace ringlab::server
