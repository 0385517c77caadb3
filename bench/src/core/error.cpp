#include "ringlab/bench/error.hpp"

#include <cstring>

namespace ringlab::bench {

std::string errno_message(std::string_view op, std::string_view what, int code) {
  std::string out(op);
  if (!what.empty()) {
    out += ' ';
    out += what;
  }
  out += ": ";
  out += std::strerror(code);
  const char* name = strerrorname_np(code);
  out += " (";
  out += name != nullptr ? name : "E?";
  out += ')';
  return out;
}

}  // namespace ringlab::bench
