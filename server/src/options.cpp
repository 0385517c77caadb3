#include "ringlab/server/options.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace ringlab::server {
namespace {

// "1.5" -> 1.5; plain decimal notation only (no sign, no exponent, no hex).
std::optional<double> parse_number(std::string_view text, std::string_view& unit) noexcept {
  std::size_t end = 0;
  bool seen_dot = false;
  while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || (text[end] == '.' && !seen_dot))) {
    seen_dot = seen_dot || text[end] == '.';
    ++end;
  }
  if (end == 0 || text[0] == '.') return std::nullopt;
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, value, std::chars_format::fixed);
  if (ec != std::errc{} || ptr != text.data() + end || !std::isfinite(value)) return std::nullopt;
  unit = text.substr(end);
  return value;
}

}  // namespace

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) noexcept {
  std::string_view unit;
  auto value = parse_number(text, unit);
  if (!value) return std::nullopt;
  double ms = 0;
  if (unit.empty() || unit == "s") {
    ms = *value * 1000.0;
  } else if (unit == "ms") {
    ms = *value;
  } else if (unit == "us") {
    ms = *value / 1000.0;
  } else if (unit == "m" || unit == "min") {
    ms = *value * 60'000.0;
  } else {
    return std::nullopt;
  }
  // A day is far beyond any timeout this server has; anything larger is a typo.
  if (ms > 86'400'000.0) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(ms)));
}

std::optional<uint64_t> parse_size(std::string_view text) noexcept {
  std::string_view unit;
  auto value = parse_number(text, unit);
  if (!value) return std::nullopt;
  double scale = 1;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "k" || unit == "K" || unit == "KB" || unit == "KiB") {
    scale = 1024.0;
  } else if (unit == "M" || unit == "MB" || unit == "MiB") {
    scale = 1024.0 * 1024.0;
  } else if (unit == "G" || unit == "GB" || unit == "GiB") {
    scale = 1024.0 * 1024.0 * 1024.0;
  } else {
    return std::nullopt;
  }
  const double bytes = *value * scale;
  if (bytes >= static_cast<double>(std::numeric_limits<uint64_t>::max() / 2)) return std::nullopt;
  if (bytes != std::floor(bytes)) return std::nullopt;  // "1.5" bytes is not a size
  return static_cast<uint64_t>(bytes);
}

}  // namespace ringlab::server
