#pragma once
// Parsing of the server binary's flag values that carry units. Pure functions, unit-tested.
//
//   durations: "30s", "300ms", "1.5s", "2m", "500us"; a bare number is seconds ("30" = 30 s).
//   sizes:     "64MiB", "16KiB", "1GiB", "512" (bytes), also "k"/"K"/"KB" = 1024 (as "KiB"), "M", "G".
// Whitespace, negative values and overflow are rejected (nullopt).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ringlab::server {

[[nodiscard]] std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) noexcept;
[[nodiscard]] std::optional<uint64_t> parse_size(std::string_view text) noexcept;

}  // namespace ringlab::server
