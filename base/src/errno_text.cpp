#include "ringlab/base/errno_text.hpp"

#include <cstring>

namespace ringlab::base {

const char* errno_name(int code) noexcept {
  // glibc >= 2.32 knows every symbolic name; it returns null for values it does not know.
  const char* name = ::strerrorname_np(code);
  return name != nullptr ? name : "E?";
}

const char* errno_description(int code) noexcept {
  // strerrordesc_np is the thread-safe form of strerror (no locale, static strings).
  const char* description = ::strerrordesc_np(code);
  return description != nullptr ? description : "Unknown error";
}

std::string errno_message(std::string_view op, std::string_view what, int code) {
  std::string text(op);
  if (!what.empty()) {
    text += ' ';
    text += what;
  }
  text += ": ";
  text += errno_description(code);
  text += " (";
  text += errno_name(code);
  text += ')';
  return text;
}

}  // namespace ringlab::base
