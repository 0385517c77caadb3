#pragma once
// Errors of the http/ layer.
//
// Convention (as simdjson's error_code): a [[nodiscard]] Result<T> = std::expected<T, Error>; the
// Errc says what kind of failure it was, so callers and tests can tell them apart, and `detail`
// says where (parser position, llhttp's reason, the net/ error text). A parser error sticks until
// the parser is reset.
#include <expected>
#include <string>

#include "ringlab/net/error.hpp"

namespace ringlab::http {

enum class Errc {
  refused,         // connect got ECONNREFUSED
  reset,           // the peer reset the connection (ECONNRESET, EPIPE)
  timeout,         // a connect/send/receive deadline passed
  truncated,       // the peer closed before the message was complete
  malformed,       // the bytes are not valid HTTP/1.1 (llhttp said so, or a value is out of range)
  header_too_large,  // the head exceeded the configured header limit
  body_too_large,    // the body exceeded the configured body limit
  unsupported,       // https://, HTTP/2 upgrade, a method or feature ringlab does not do
  bad_url,           // the URL could not be parsed
  sink,              // the body sink refused the body (its detail says why)
  io,                // any other system error from net/
};

[[nodiscard]] const char* errc_name(Errc code) noexcept;

struct Error {
  Errc code = Errc::io;
  std::string detail;  // human text: "llhttp: Invalid character in chunk size at byte 57"
  std::string peer;    // "127.0.0.1:8080" when known

  [[nodiscard]] std::string message() const;  // "malformed 127.0.0.1:8080: llhttp: ..."
  // Maps a net::Error: ECONNREFUSED -> refused, ECONNRESET/EPIPE -> reset, ETIMEDOUT/ECANCELED/ETIME
  // -> timeout (a deadline that cut an operation short), anything else -> io. The detail is
  // "op: description (ENAME)"; the peer is kept.
  [[nodiscard]] static Error from(const net::Error& error);
};

// A request failed on a kept-alive connection that was reused, before any byte of its response
// arrived, because the peer had reset or closed it (it closed the idle connection; RFC 9112 9.3.1
// lets a client retry then): what may be sent once more on a new connection, as nginx's upstream
// does. The one rule both http::Client (ClientOptions::retry_stale_connection) and the server's
// /proxy fetch follow.
[[nodiscard]] inline bool failed_on_stale_connection(const Error& error, bool reused, bool any_response_byte) noexcept {
  return reused && !any_response_byte && (error.code == Errc::reset || error.code == Errc::truncated);
}

template <class T>
using Result = std::expected<T, Error>;
using Status = Result<void>;

[[nodiscard]] inline std::unexpected<Error> fail(Errc code, std::string detail, std::string peer = {}) {
  return std::unexpected<Error>(Error{code, std::move(detail), std::move(peer)});
}

}  // namespace ringlab::http
