#pragma once
// Request serializer: writes the head into a caller's buffer and returns iovecs with the head and
// the body apart, so the body can go out by writev or a zero-copy send without being copied next to
// the head.
//
// Ownership: the returned iovecs point into `head_buffer` and into `body`; both must outlive the send.
// Nothing is allocated.
//
// The head is "METHOD target HTTP/1.1", Host, the extra headers in order, "Connection: close" when
// keep_alive is false, Content-Type when given, and Content-Length when the body is not empty or the
// method is POST, PUT or PATCH (which then say 0).
#include <sys/uio.h>

#include <array>
#include <span>
#include <string_view>

#include "ringlab/http/error.hpp"
#include "ringlab/http/headers.hpp"

namespace ringlab::http {

struct RequestSpec {
  std::string_view method = "GET";
  std::string_view host;    // Host header value ("127.0.0.1:8080")
  std::string_view target;  // "/weather?count=10"
  std::span<const Header> extra_headers{};
  std::string_view body{};            // Content-Length is set from it for methods with a body
  std::string_view content_type{};    // sent when non-empty
  bool keep_alive = true;             // false adds "Connection: close"
};

struct SerializedRequest {
  std::array<iovec, 2> parts{};  // [0] head, [1] body (may be empty)
  std::size_t part_count = 1;
  [[nodiscard]] std::span<const iovec> iovecs() const { return {parts.data(), part_count}; }
  [[nodiscard]] std::string_view head() const {
    return {static_cast<const char*>(parts[0].iov_base), parts[0].iov_len};
  }
};

// Errc::header_too_large when the head does not fit in head_buffer (nothing useful is written then).
// Errc::malformed, before anything is written, when a field could change the message's framing: a
// method or header name that is not a token, a target that is empty or holds a space or control byte,
// a host, value or content type holding CR, LF or another control byte (header injection), or an
// extra header the serializer writes itself (Host, Content-Length, Transfer-Encoding, Connection).
Result<SerializedRequest> serialize(const RequestSpec& spec, std::span<char> head_buffer);

}  // namespace ringlab::http
