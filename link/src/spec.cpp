#include "ringlab/link/spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cctype>
#include <cmath>
#include <optional>

namespace ringlab::link {
namespace {

using std::chrono::nanoseconds;

struct Profile {
  std::string_view name;
  uint64_t rate;
  nanoseconds delay;
  double loss;
};

constexpr std::array<Profile, 4> kProfiles{{
    {"loopback", 0, nanoseconds{0}, 0.0},
    {"10g", 10'000'000'000ULL, std::chrono::microseconds{25}, 0.0},
    {"1g", 1'000'000'000ULL, std::chrono::microseconds{100}, 0.0},
    {"wan", 100'000'000ULL, std::chrono::milliseconds{10}, 0.0001},
}};

constexpr uint64_t kMaxRate = 400'000'000'000ULL;           // 400 Gbit/s
constexpr nanoseconds kMaxDelay = std::chrono::seconds{10};  // one way
constexpr uint64_t kMaxQueue = 1ULL << 30;

// "12.5" -> 12.5 and the rest of the text (the unit).
std::optional<std::pair<double, std::string_view>> number_prefix(std::string_view text) {
  std::size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  if (end == 0) return std::nullopt;
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, value);
  if (ec != std::errc{} || ptr != text.data() + end || !std::isfinite(value)) return std::nullopt;
  return std::pair{value, text.substr(end)};
}

struct UnitScale {
  std::string_view unit;
  double scale;
};

// "12.5m" with the units {{"k", 1e3}, {"m", 1e6}} -> 12.5e6; the bare number when `bare` scales it
// (0: a unit is required); nullopt for any other unit.
template <std::size_t N>
std::optional<double> scaled_number(std::string_view text, const std::array<UnitScale, N>& units, double bare) {
  const auto number = number_prefix(text);
  if (!number) return std::nullopt;
  const std::string_view unit = number->second;
  if (unit.empty()) return bare == 0 && number->first != 0 ? std::nullopt : std::optional(number->first * bare);
  for (const UnitScale& candidate : units) {
    if (candidate.unit == unit) return number->first * candidate.scale;
  }
  return std::nullopt;
}

constexpr std::array<UnitScale, 6> kRateUnits{{
    {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}}};
constexpr std::array<UnitScale, 4> kTimeUnits{{{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}};
constexpr std::array<UnitScale, 4> kByteUnits{{{"k", 1024}, {"m", 1024.0 * 1024}, {"kb", 1024}, {"mb", 1024.0 * 1024}}};

std::optional<uint64_t> parse_rate(std::string_view text) {
  if (text.ends_with("bit") && !text.ends_with("kbit") && !text.ends_with("mbit") && !text.ends_with("gbit"))
    text.remove_suffix(3);  // "1000bit"
  const auto bits = scaled_number(text, kRateUnits, 1);
  if (!bits || *bits > static_cast<double>(kMaxRate) || (*bits > 0 && *bits < 1000)) return std::nullopt;
  return static_cast<uint64_t>(std::llround(*bits));
}

// A bare number is only accepted for 0 ("delay=0"): 5 of what would be a guess.
std::optional<nanoseconds> parse_duration(std::string_view text) {
  const auto ns = scaled_number(text, kTimeUnits, 0);
  if (!ns || *ns > static_cast<double>(kMaxDelay.count())) return std::nullopt;
  return nanoseconds{static_cast<int64_t>(std::llround(*ns))};
}

std::optional<double> parse_loss(std::string_view text) {
  const bool percent = text.ends_with('%');
  if (percent) text.remove_suffix(1);
  const auto number = number_prefix(text);
  if (!number || !number->second.empty()) return std::nullopt;
  const double loss = percent ? number->first / 100 : number->first;
  if (loss < 0 || loss >= 1) return std::nullopt;
  return loss;
}

std::optional<uint64_t> parse_bytes(std::string_view text) {
  const auto bytes = scaled_number(text, kByteUnits, 1);
  if (!bytes || *bytes < 1 || *bytes > static_cast<double>(kMaxQueue)) return std::nullopt;
  return static_cast<uint64_t>(*bytes);
}

std::optional<uint64_t> parse_unsigned(std::string_view text) {
  uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string format_number(double value) {
  std::string text = fmt::format("{:.3f}", value);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string canonical_duration(nanoseconds duration) {
  const int64_t ns = duration.count();
  if (ns % 1'000'000 == 0 && ns != 0) return fmt::format("{}ms", ns / 1'000'000);
  if (ns % 1'000 == 0 && ns != 0) return fmt::format("{}us", ns / 1'000);
  return fmt::format("{}ns", ns);
}

std::string canonical_rate(uint64_t bits) {
  if (bits % 1'000'000'000 == 0 && bits != 0) return fmt::format("{}gbit", bits / 1'000'000'000);
  if (bits % 1'000'000 == 0 && bits != 0) return fmt::format("{}mbit", bits / 1'000'000);
  if (bits % 1'000 == 0 && bits != 0) return fmt::format("{}kbit", bits / 1'000);
  return fmt::format("{}", bits);
}

}  // namespace

bool LinkSpec::gso_enabled() const noexcept {
  if (gso == Gso::automatic) return loss == 0.0;
  return gso == Gso::on;
}

uint64_t LinkSpec::queue_limit() const noexcept {
  if (queue_bytes != 0) return queue_bytes;
  const uint64_t frames = 1000ULL * (mtu + 14);
  const double bdp_bytes = static_cast<double>(rate_bits_per_second) / 8 * 2 *
                           std::chrono::duration<double>(delay + jitter).count();
  return std::max(frames, static_cast<uint64_t>(2 * bdp_bytes));
}

std::string LinkSpec::canonical() const {
  if (!emulated()) return "loopback";
  std::string text = fmt::format("rate={},delay={}", canonical_rate(rate_bits_per_second), canonical_duration(delay));
  if (jitter.count() != 0) text += ",jitter=" + canonical_duration(jitter);
  if (loss != 0) text += ",loss=" + format_number(loss * 100) + "%";
  text += fmt::format(",mtu={}", mtu);
  if (queue_bytes != 0) text += fmt::format(",queue={}", queue_bytes);
  if (gso != Gso::automatic) text += gso == Gso::on ? ",gso=on" : ",gso=off";
  if (seed != 1) text += fmt::format(",seed={}", seed);
  return text;
}

std::string LinkSpec::describe() const {
  if (!emulated()) return "loopback (no emulation)";
  std::string text = fmt::format("{}: {}, {} one-way", profile, format_rate(rate_bits_per_second), format_duration(delay));
  if (jitter.count() != 0) text += fmt::format(" +/- {}", format_duration(jitter));
  if (loss != 0) text += fmt::format(", {}% loss", format_number(loss * 100));
  text += fmt::format(", MTU {}, GSO {}, queue {} KiB", mtu, gso_enabled() ? "on" : "off", queue_limit() / 1024);
  return text;
}

std::string format_rate(uint64_t bits) {
  if (bits == 0) return "unlimited";
  if (bits >= 1'000'000'000) return format_number(static_cast<double>(bits) / 1e9) + " Gbit/s";
  if (bits >= 1'000'000) return format_number(static_cast<double>(bits) / 1e6) + " Mbit/s";
  return format_number(static_cast<double>(bits) / 1e3) + " kbit/s";
}

std::string format_duration(nanoseconds duration) {
  const double ns = static_cast<double>(duration.count());
  if (ns >= 1e9) return format_number(ns / 1e9) + " s";
  if (ns >= 1e6) return format_number(ns / 1e6) + " ms";
  if (ns >= 1e3) return format_number(ns / 1e3) + " us";
  return format_number(ns) + " ns";
}

std::string_view profile_names() noexcept { return "loopback, 10g, 1g, wan"; }

std::expected<LinkSpec, std::string> parse_link_spec(std::string_view text) {
  LinkSpec spec;
  const std::string whole(text);
  auto error = [&](std::string_view why) { return std::unexpected(fmt::format("link '{}': {}", whole, why)); };
  if (text.empty()) return error(fmt::format("empty; give a profile ({}) or rate=...,delay=...", profile_names()));
  bool first = true;
  bool any_setting = false;
  bool profile_given = false;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (item.empty()) return error("empty item between commas");
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos) {
      const auto profile = std::find_if(kProfiles.begin(), kProfiles.end(), [&](const Profile& p) { return p.name == item; });
      if (!first || profile == kProfiles.end())
        return error(fmt::format("'{}' is not a profile ({}) nor a key=value setting", item, profile_names()));
      spec.profile = std::string(profile->name);
      profile_given = true;
      spec.rate_bits_per_second = profile->rate;
      spec.delay = profile->delay;
      spec.loss = profile->loss;
      first = false;
      continue;
    }
    first = false;
    any_setting = true;
    const std::string_view key = item.substr(0, equals);
    const std::string_view value = item.substr(equals + 1);
    if (key == "rate") {
      const auto rate = parse_rate(value);
      if (!rate) return error(fmt::format("rate '{}' must be 0 (unlimited) or 1kbit..400gbit with a k/m/g[bit] suffix (for example 10gbit)", value));
      spec.rate_bits_per_second = *rate;
    } else if (key == "delay" || key == "jitter") {
      const auto duration = parse_duration(value);
      if (!duration) return error(fmt::format("{} '{}' must be a time up to 10s with a unit ns, us, ms or s (for example 25us)", key, value));
      (key == "delay" ? spec.delay : spec.jitter) = *duration;
    } else if (key == "loss") {
      const auto loss = parse_loss(value);
      if (!loss) return error(fmt::format("loss '{}' must be a percentage below 100% (for example 0.01%) or a fraction below 1", value));
      spec.loss = *loss;
    } else if (key == "mtu") {
      const auto mtu = parse_unsigned(value);
      if (!mtu || *mtu < 576 || *mtu > 65000) return error(fmt::format("mtu '{}' must be an integer from 576 to 65000", value));
      spec.mtu = static_cast<unsigned>(*mtu);
    } else if (key == "queue") {
      const auto bytes = parse_bytes(value);
      if (!bytes) return error(fmt::format("queue '{}' must be 1 byte to 1 GiB, with an optional k/m suffix", value));
      spec.queue_bytes = *bytes;
    } else if (key == "gso") {
      if (value == "on") spec.gso = LinkSpec::Gso::on;
      else if (value == "off") spec.gso = LinkSpec::Gso::off;
      else if (value == "auto") spec.gso = LinkSpec::Gso::automatic;
      else return error(fmt::format("gso '{}' must be on, off or auto", value));
    } else if (key == "seed") {
      const auto seed = parse_unsigned(value);
      if (!seed) return error(fmt::format("seed '{}' must be an unsigned integer", value));
      spec.seed = *seed;
    } else {
      return error(fmt::format("unknown key '{}' (rate, delay, jitter, loss, mtu, queue, gso, seed)", key));
    }
  }
  if (profile_given && spec.profile == "loopback" && any_setting)
    return error("loopback takes no settings: it is the host's own loopback, not an emulated link");
  if (!profile_given) spec.profile = "custom";
  else if (any_setting) spec.profile += "+";  // a profile with a setting changed is no longer that profile
  if (spec.jitter > spec.delay) return error("jitter must not exceed delay (a frame cannot arrive before it was sent)");
  return spec;
}

}  // namespace ringlab::link
