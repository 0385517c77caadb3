#include "ringlab/server/query.hpp"

namespace ringlab::server {

std::optional<Target> split_target(std::string_view target) noexcept {
  if (auto hash = target.find('#'); hash != std::string_view::npos) target = target.substr(0, hash);
  constexpr std::string_view kScheme = "http://";
  if (target.size() >= kScheme.size()) {
    bool is_absolute = true;
    for (std::size_t i = 0; i < kScheme.size(); ++i) {
      char c = target[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != kScheme[i]) {
        is_absolute = false;
        break;
      }
    }
    if (is_absolute) {
      // The authority ends at the first '/', '?' or end; an empty path means "/".
      std::string_view rest = target.substr(kScheme.size());
      std::size_t end = rest.find_first_of("/?");
      if (end == 0) return std::nullopt;  // no authority
      if (end == std::string_view::npos) return Target{"/", {}};
      target = rest.substr(end);
      if (target.front() == '?') return Target{"/", target.substr(1)};
    }
  }
  if (target.empty() || target.front() != '/') return std::nullopt;
  std::size_t question = target.find('?');
  if (question == std::string_view::npos) return Target{target, {}};
  return Target{target.substr(0, question), target.substr(question + 1)};
}

std::optional<std::string_view> find_param(std::string_view query, std::string_view key) noexcept {
  std::optional<std::string_view> found;
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    std::size_t eq = pair.find('=');
    std::string_view name = pair.substr(0, eq);
    if (name == key) found = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
  }
  return found;
}

std::optional<uint64_t> parse_decimal(std::string_view text, uint64_t max) noexcept {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    auto digit = static_cast<uint64_t>(c - '0');
    // Checked against max at every step, so the value never overflows.
    if (digit > max || value > (max - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

}  // namespace ringlab::server
