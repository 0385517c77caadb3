#include "ringlab/http/headers.hpp"

namespace ringlab::http {

namespace {

// ASCII only: header names are tokens (RFC 9110 5.1), so locale-aware folding would be wrong.
constexpr char lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// RFC 9110 5.6.2 tchar.
constexpr bool is_tchar(char c) noexcept {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-':
    case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

}  // namespace

bool is_token(std::string_view text) noexcept {
  if (text.empty()) return false;
  for (char c : text) {
    if (!is_tchar(c)) return false;
  }
  return true;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::optional<std::string_view> Headers::find(std::string_view name) const noexcept {
  for (const Header& header : *this) {
    if (iequals(header.name, name)) return header.value;
  }
  return std::nullopt;
}

}  // namespace ringlab::http
