#pragma once
// Decoding the escapes of a JSON string's raw text (what a JsonStringView holds).
//
// The decoding is byte for byte the one simdjson's On-Demand get_string() applies, so text decoded here
// equals the text an owning parse stored: the short escapes \" \\ \/ \b \f \n \r \t; \uXXXX (either
// hex case) as UTF-8; a high surrogate must be followed by \u and a low surrogate, and the pair is one
// code point; a lone low surrogate, an unknown escape, bad hex or a trailing backslash is an error.
// (tests/json/unescape_test.cpp holds the two decoders side by side.)
//
// No allocation here: decode_json_string() hands out pieces, the caller decides where they go.
#include <cstdint>
#include <string_view>

#include "ringlab/json/models.hpp"

namespace ringlab::json {

namespace detail {
[[nodiscard]] constexpr int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
// Four hex digits at raw[at..at+4); -1 when absent or not hex.
[[nodiscard]] constexpr int32_t hex4(std::string_view raw, std::size_t at) noexcept {
  if (raw.size() < at + 4) return -1;
  int32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const int digit = hex_digit(raw[at + i]);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}
}  // namespace detail

// Calls emit(std::string_view piece) for each run of literal bytes and each decoded character, in
// order. Returns false at the first invalid escape; what came before it has been emitted.
template <class Emit>
constexpr bool decode_json_string(std::string_view raw, Emit&& emit) {
  std::size_t run = 0;  // start of the literal bytes not emitted yet
  std::size_t i = 0;
  while (i < raw.size()) {
    i = raw.find('\\', i);  // memchr at run time: literal runs go by in bulk
    if (i == std::string_view::npos) {
      i = raw.size();
      break;
    }
    if (i > run) emit(raw.substr(run, i - run));
    if (i + 1 >= raw.size()) return false;
    const char escape = raw[i + 1];
    char one = 0;
    switch (escape) {
      case '"': one = '"'; break;
      case '\\': one = '\\'; break;
      case '/': one = '/'; break;
      case 'b': one = '\b'; break;
      case 'f': one = '\f'; break;
      case 'n': one = '\n'; break;
      case 'r': one = '\r'; break;
      case 't': one = '\t'; break;
      case 'u': break;
      default: return false;
    }
    if (escape != 'u') {
      const char piece[1] = {one};
      emit(std::string_view(piece, 1));
      i += 2;
      run = i;
      continue;
    }
    int32_t code_point = detail::hex4(raw, i + 2);
    if (code_point < 0) return false;
    i += 6;
    if (code_point >= 0xD800 && code_point < 0xDC00) {
      if (raw.size() < i + 2 || raw[i] != '\\' || raw[i + 1] != 'u') return false;
      const int32_t low = detail::hex4(raw, i + 2);
      if (low < 0xDC00 || low > 0xDFFF) return false;
      code_point = 0x10000 + ((code_point - 0xD800) << 10) + (low - 0xDC00);
      i += 6;
    } else if (code_point >= 0xDC00 && code_point <= 0xDFFF) {
      return false;
    }
    char utf8[4];
    std::size_t length = 0;
    const auto cp = static_cast<uint32_t>(code_point);
    if (cp < 0x80) {
      utf8[0] = static_cast<char>(cp);
      length = 1;
    } else if (cp < 0x800) {
      utf8[0] = static_cast<char>(0xC0 | (cp >> 6));
      utf8[1] = static_cast<char>(0x80 | (cp & 0x3F));
      length = 2;
    } else if (cp < 0x10000) {
      utf8[0] = static_cast<char>(0xE0 | (cp >> 12));
      utf8[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      utf8[2] = static_cast<char>(0x80 | (cp & 0x3F));
      length = 3;
    } else {
      utf8[0] = static_cast<char>(0xF0 | (cp >> 18));
      utf8[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      utf8[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      utf8[3] = static_cast<char>(0x80 | (cp & 0x3F));
      length = 4;
    }
    emit(std::string_view(utf8, length));
    run = i;
  }
  if (i > run) emit(raw.substr(run, i - run));
  return true;
}

// Replaces `out` (std::string, std::pmr::string, ...) with the decoded text of `text`. Returns false
// on an invalid escape (out then holds the part decoded so far). Allocates only if out must grow.
template <class String>
bool unescape(const JsonStringView& text, String& out) {
  out.clear();
  if (!text.has_escapes) {
    out.append(text.raw);
    return true;
  }
  return decode_json_string(text.raw, [&out](std::string_view piece) { out.append(piece); });
}

}  // namespace ringlab::json
