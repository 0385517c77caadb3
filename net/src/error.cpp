#include "ringlab/net/error.hpp"

#include <cstring>

namespace ringlab::net {

const char* errno_name(int code) noexcept {
  // glibc >= 2.32 knows every symbolic name; it returns null for values it does not know.
  const char* name = ::strerrorname_np(code);
  return name != nullptr ? name : "E?";
}

std::string Error::message() const {
  std::string text = op;
  if (!peer.empty()) {
    text += ' ';
    text += peer;
  }
  text += ": ";
  // strerrordesc_np is the thread-safe form of strerror (no locale, static strings).
  const char* description = ::strerrordesc_np(code);
  text += description != nullptr ? description : "Unknown error";
  text += " (";
  text += errno_name(code);
  text += ')';
  return text;
}

}  // namespace ringlab::net
