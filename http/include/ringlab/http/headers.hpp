#pragma once
// Message heads as views.
//
// Lifetime: every string_view in a RequestHead/ResponseHead points into the receive buffer the bytes
// arrived in (or, when a name or value was split across two non-adjacent buffers, into the parser's
// own scratch storage; RequestHead::method points to a static string). They are valid until the
// parser is fed again after the head's callback returned, or reset. Copy what must live longer.
// parser.hpp says what the caller must keep in place while a head arrives over several feeds.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ringlab::http {

struct Header {
  std::string_view name;
  std::string_view value;
};

inline constexpr std::size_t kMaxHeaders = 64;

struct Headers {
  std::array<Header, kMaxHeaders> items{};
  std::size_t count = 0;

  // Case-insensitive (ASCII) lookup of the first header with this name; values have no leading or
  // trailing whitespace.
  [[nodiscard]] std::optional<std::string_view> find(std::string_view name) const noexcept;
  [[nodiscard]] const Header* begin() const noexcept { return items.data(); }
  [[nodiscard]] const Header* end() const noexcept { return items.data() + count; }
};

// ASCII case-insensitive comparison, as header names compare.
[[nodiscard]] bool iequals(std::string_view a, std::string_view b) noexcept;
// RFC 9110 5.6.2 token (a method or a header name): one or more tchar.
[[nodiscard]] bool is_token(std::string_view text) noexcept;

// content_length in both heads is the length of the body that follows, when it is known from the
// head: the Content-Length value, or 0 when the message has no body by rule (a request without
// Content-Length or Transfer-Encoding; a response to HEAD, 1xx, 204, 304, whatever its
// Content-Length header says). It is absent for chunked and close-delimited bodies.
struct ResponseHead {
  int status = 0;
  std::string_view reason;
  uint8_t version_major = 1, version_minor = 1;
  Headers headers;
  std::optional<uint64_t> content_length;  // see above
  bool chunked = false;
  bool keep_alive = true;  // false when the connection must be closed after this message
};

struct RequestHead {
  std::string_view method;  // "GET", "POST" ...
  std::string_view target;  // "/weather?count=10"
  uint8_t version_major = 1, version_minor = 1;
  Headers headers;
  std::optional<uint64_t> content_length;
  bool chunked = false;
  bool keep_alive = true;
};

}  // namespace ringlab::http
