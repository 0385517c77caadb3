#pragma once
// Request-target and query-string parsing for the server's routes.
//
// Policy: percent-encoding is not decoded. Every value a route accepts is plain ASCII (digits and
// short words), so "count=%31" is simply not a number and gets a 400, which is what a benchmark
// server should say about a request it did not expect. Unknown parameters are ignored; when a
// parameter is repeated, the last occurrence wins (as most servers do).
//
// Lifetime: every view returned points into the string passed in.
#include <cstdint>
#include <optional>
#include <string_view>

namespace ringlab::server {

struct Target {
  std::string_view path;   // "/weather"
  std::string_view query;  // "count=10&format=ndjson" (no '?'); empty when there is none
};

// Splits origin-form ("/p?q") and absolute-form ("http://host:port/p?q") targets. A fragment
// ("#...") is dropped. Returns nullopt for anything else ("*", "p", "https://...": not for us).
[[nodiscard]] std::optional<Target> split_target(std::string_view target) noexcept;

// The value of the last "key=value" pair named `key`; a bare "key" (no '=') has an empty value.
[[nodiscard]] std::optional<std::string_view> find_param(std::string_view query, std::string_view key) noexcept;

// Strict unsigned decimal: one or more ASCII digits, no sign, no spaces, no exponent, at most `max`.
// Leading zeros are allowed ("007" is 7). nullopt when the text is anything else or above `max`
// (overflow included).
[[nodiscard]] std::optional<uint64_t> parse_decimal(std::string_view text, uint64_t max) noexcept;

}  // namespace ringlab::server
