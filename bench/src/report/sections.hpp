#pragma once
// Report text put together from parts (console.cpp, markdown.cpp, results_page.cpp): a part with nothing
// to say is left out, its heading with it. Internal to bench/src/report.
#include <string>
#include <string_view>

namespace ringlab::bench {

// Appends `heading`, then `body`, to `out`; nothing when `body` is empty.
inline void append_section(std::string& out, std::string_view heading, const std::string& body) {
  if (body.empty()) return;
  out += heading;
  out += body;
}

}  // namespace ringlab::bench
