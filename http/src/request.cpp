#include "ringlab/http/request.hpp"

#include <charconv>
#include <cstring>
#include <string>

namespace ringlab::http {

namespace {

// RFC 9110 5.5 field-value: visible characters, SP, HTAB and obs-text. CR and LF above all: one of
// them in a value would let the value start a header (or a whole request) of its own.
bool is_field_value(std::string_view text) noexcept {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return true;
}

// Visible ASCII only: the target is delimited by spaces in the request line.
bool is_target(std::string_view text) noexcept {
  if (text.empty()) return false;
  for (char c : text) {
    if (c <= ' ' || c >= 0x7f) return false;
  }
  return true;
}

// Methods whose requests carry a body by definition; they get "Content-Length: 0" when it is empty
// (RFC 9110 8.6: a user agent SHOULD send it for them), the others only when a body is given.
bool method_has_body(std::string_view method) noexcept {
  return method == "POST" || method == "PUT" || method == "PATCH";
}

// Headers the serializer writes itself: a second copy from the caller would make the message
// ambiguous (two Content-Lengths is the classic request-smuggling shape).
bool is_reserved(std::string_view name) noexcept {
  return iequals(name, "Host") || iequals(name, "Content-Length") ||
         iequals(name, "Transfer-Encoding") || iequals(name, "Connection");
}

std::unexpected<Error> malformed(std::string_view what, std::string_view field) {
  std::string detail = "request ";
  detail += what;
  detail += ": '";
  // The field is echoed with its control characters escaped, so the log line stays one line.
  for (char c : field.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      detail += "\\x";
      detail += kHex[u >> 4];
      detail += kHex[u & 0xf];
    } else {
      detail += c;
    }
  }
  if (field.size() > 64) detail += "...";
  detail += '\'';
  return fail(Errc::malformed, std::move(detail));
}

// Appends into the caller's buffer; remembers an overflow instead of checking at every call.
class Writer {
 public:
  explicit Writer(std::span<char> out) noexcept : out_(out) {}

  void put(std::string_view text) noexcept {
    if (text.size() > out_.size() - used_) {
      overflow_ = true;
      return;
    }
    std::memcpy(out_.data() + used_, text.data(), text.size());
    used_ += text.size();
  }
  void put_number(std::size_t value) noexcept {
    char digits[24];
    const auto result = std::to_chars(digits, digits + sizeof digits, value);
    put({digits, static_cast<std::size_t>(result.ptr - digits)});
  }
  void header(std::string_view name, std::string_view value) noexcept {
    put(name);
    put(": ");
    put(value);
    put("\r\n");
  }

  [[nodiscard]] bool overflow() const noexcept { return overflow_; }
  [[nodiscard]] std::size_t used() const noexcept { return used_; }

 private:
  std::span<char> out_;
  std::size_t used_ = 0;
  bool overflow_ = false;
};

}  // namespace

Result<SerializedRequest> serialize(const RequestSpec& spec, std::span<char> head_buffer) {
  // Everything is checked before anything is written: a rejected request leaves no half head.
  if (!is_token(spec.method)) return malformed("method is not a token", spec.method);
  if (!is_target(spec.target)) return malformed("target is empty or has a space or control byte", spec.target);
  if (spec.host.empty() || !is_field_value(spec.host)) return malformed("host is empty or has a control byte", spec.host);
  if (!is_field_value(spec.content_type)) return malformed("content type has a control byte", spec.content_type);
  for (const Header& header : spec.extra_headers) {
    if (!is_token(header.name)) return malformed("header name is not a token", header.name);
    if (is_reserved(header.name)) return malformed("header is set by the serializer", header.name);
    if (!is_field_value(header.value)) return malformed("header value has a control byte", header.value);
  }

  Writer out(head_buffer);
  out.put(spec.method);
  out.put(" ");
  out.put(spec.target);
  out.put(" HTTP/1.1\r\n");
  out.header("Host", spec.host);
  for (const Header& header : spec.extra_headers) out.header(header.name, header.value);
  if (!spec.keep_alive) out.header("Connection", "close");
  if (!spec.content_type.empty()) out.header("Content-Type", spec.content_type);
  if (!spec.body.empty() || method_has_body(spec.method)) {
    out.put("Content-Length: ");
    out.put_number(spec.body.size());
    out.put("\r\n");
  }
  out.put("\r\n");
  if (out.overflow()) {
    std::string detail = "request head does not fit in the ";
    detail += std::to_string(head_buffer.size());
    detail += "-byte head buffer";
    return fail(Errc::header_too_large, std::move(detail));
  }

  SerializedRequest request;
  request.parts[0] = iovec{head_buffer.data(), out.used()};
  if (!spec.body.empty()) {
    // iovec has no const member; the body is only ever read by the send.
    request.parts[1] = iovec{const_cast<char*>(spec.body.data()), spec.body.size()};
    request.part_count = 2;
  }
  return request;
}

}  // namespace ringlab::http
