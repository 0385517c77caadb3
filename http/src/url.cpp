#include "ringlab/http/url.hpp"

#include <charconv>
#include <string>

#include "ringlab/http/headers.hpp"

namespace ringlab::http {

namespace {

constexpr bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_hex(char c) noexcept {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Host names and IPv4 literals: RFC 3986 unreserved characters. Percent-encoded and sub-delim host
// names cannot be resolved by net/ anyway, so they are refused here, where the message is clearer.
constexpr bool is_host_char(char c) noexcept {
  return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

// What may appear in a request target as sent on the wire: visible ASCII. A space, a control
// character or a byte >= 0x80 would have to be percent-encoded first.
constexpr bool is_target_char(char c) noexcept { return c > ' ' && c < 0x7f; }

std::unexpected<Error> bad(std::string_view text, std::string_view why) {
  std::string detail = "'";
  detail += text;
  detail += "': ";
  detail += why;
  return fail(Errc::bad_url, std::move(detail));
}

}  // namespace

Result<Url> Url::parse(std::string_view text) {
  // Scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) "://"; only http is spoken here.
  const std::size_t colon = text.find("://");
  if (colon == std::string_view::npos || colon == 0 || !is_alpha(text[0])) {
    return bad(text, "expected scheme://host");
  }
  const std::string_view scheme = text.substr(0, colon);
  for (char c : scheme) {
    if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') {
      return bad(text, "invalid character in the scheme");
    }
  }
  if (!iequals(scheme, "http")) {
    std::string detail = "scheme '";
    detail += scheme;
    detail += "' (only http:// is supported)";
    return fail(Errc::unsupported, std::move(detail));
  }

  std::string_view rest = text.substr(colon + 3);
  // The fragment is never sent to the server.
  if (const std::size_t hash = rest.find('#'); hash != std::string_view::npos) {
    rest = rest.substr(0, hash);
  }
  const std::size_t path_at = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, path_at);
  std::string_view target = path_at == std::string_view::npos ? std::string_view{} : rest.substr(path_at);

  if (authority.find('@') != std::string_view::npos) {
    std::string detail = "'";
    detail += text;
    detail += "': user information in the URL";
    return fail(Errc::unsupported, std::move(detail));
  }

  Url url;
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad(text, "unterminated '[' in the host");
    url.host = authority.substr(1, close - 1);
    if (url.host.empty()) return bad(text, "empty IPv6 literal");
    for (char c : url.host) {
      // Hex digits, colons, and dots for an embedded IPv4 part; a zone id ("%25eth0") is refused.
      if (!is_hex(c) && c != ':' && c != '.') return bad(text, "invalid character in the IPv6 literal");
    }
    if (url.host.find(':') == std::string_view::npos) return bad(text, "IPv6 literal without ':'");
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad(text, "expected ':port' after ']'");
      has_port = true;
      port_text = after.substr(1);
    }
  } else {
    const std::size_t port_colon = authority.find(':');
    url.host = authority.substr(0, port_colon);
    if (port_colon != std::string_view::npos) {
      has_port = true;
      port_text = authority.substr(port_colon + 1);
    }
    if (url.host.empty()) return bad(text, "empty host");
    for (char c : url.host) {
      if (!is_host_char(c)) return bad(text, "invalid character in the host");
    }
  }

  // RFC 3986 3.2.3: "http://host:/" has an empty port, which means the scheme's default.
  if (has_port && !port_text.empty()) {
    for (char c : port_text) {
      if (!is_digit(c)) return bad(text, "port is not a decimal number");
    }
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc{} || end != port_text.data() + port_text.size() || value == 0 || value > 65535) {
      return bad(text, "port out of range 1..65535");
    }
    url.port = static_cast<uint16_t>(value);
  }

  if (target.empty()) {
    target = "/";
  } else if (target.front() == '?') {
    // "http://h?q" means "/?q", but the views point into `text`, which has no '/' to point at.
    return bad(text, "a query needs a path ('/?...')");
  }
  for (char c : target) {
    if (!is_target_char(c)) return bad(text, "space, control or non-ASCII byte in the path (percent-encode it)");
  }
  url.target = target;
  return url;
}

}  // namespace ringlab::http
