#pragma once
// http://host[:port]/path?query. https:// and other schemes give Errc::unsupported; anything that is
// not a URL gives Errc::bad_url. Views point into the string given to parse().
#include <cstdint>
#include <string_view>

#include "ringlab/http/error.hpp"

namespace ringlab::http {

struct Url {
  std::string_view host;    // "127.0.0.1", "localhost", "::1" (brackets removed)
  uint16_t port = 80;
  std::string_view target;  // "/path?query"; "/" when the URL has no path

  static Result<Url> parse(std::string_view text);
};

}  // namespace ringlab::http
