#pragma once
// Deterministic records for the server and for ground truth.
//
// Record i depends only on (kDataSeed, i): its generator is seeded with a hash of both (splitmix64,
// implemented here because std:: distributions differ between library versions). So a response of N
// records is byte for byte the same on every run and machine, and count=N is a prefix of count=N+1.
//
// Weather follows the .NET minimal API sample: date = 2024-01-01 plus i days (wrapping before year
// 10000), temperatureC uniform in [-20, 55), summary one of the ten .NET summaries, temperatureF from
// fahrenheit_of(). Repositories imitate GitHub's repository objects; descriptions carry, now and then,
// quotes, backslashes, newlines, non-ASCII letters and an emoji, so that parsing must unescape. GitHub
// records (jos's flat DTO) are drawn as repositories are, from their own stream, without the owner
// object, topics, license and score; a tenth of them have a null description; visibility follows private.
//
// Allocation: fill_*() overwrite a record in place and reuse its strings' capacity, so generating many
// records into one scratch record allocates only while that record's strings still grow.
#include <cstddef>
#include <cstdint>

#include "ringlab/json/models.hpp"

namespace ringlab::json {

inline constexpr uint64_t kDataSeed = 0x72696E676C616231ULL;

namespace detail {
// 128-bit products: a GCC/Clang extension, named once so -Wpedantic stays quiet.
__extension__ typedef unsigned __int128 uint128;
}  // namespace detail

// splitmix64 (Steele, Lea, Flood 2014): a tiny generator whose output is the same everywhere.
class SplitMix64 {
 public:
  explicit constexpr SplitMix64(uint64_t state) noexcept : state_(state) {}
  constexpr uint64_t next() noexcept {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) for bound > 0 (Lemire's multiply-shift; the bias is below 2^-32 here).
  constexpr uint64_t below(uint64_t bound) noexcept {
    return static_cast<uint64_t>((static_cast<detail::uint128>(next()) * bound) >> 64);
  }
  // Uniform in [low, high) for low < high.
  constexpr int64_t between(int64_t low, int64_t high) noexcept {
    return low + static_cast<int64_t>(below(static_cast<uint64_t>(high - low)));
  }
  // True with probability numerator / denominator.
  constexpr bool chance(uint64_t numerator, uint64_t denominator) noexcept { return below(denominator) < numerator; }

 private:
  uint64_t state_;
};

// The generator for record `index` of a payload (`stream` keeps weather and repository streams apart).
[[nodiscard]] SplitMix64 record_rng(uint64_t stream, std::size_t index) noexcept;

// Record `index` of each payload: fill_* overwrites `out` in place (its strings keep their capacity),
// make_* returns a new one.
void fill_weather(std::size_t index, WeatherForecast& out);
void fill_repository(std::size_t index, Repository& out);
void fill_github(std::size_t index, GithubRepository& out);
[[nodiscard]] inline WeatherForecast make_weather(std::size_t i) { WeatherForecast r; fill_weather(i, r); return r; }
[[nodiscard]] inline Repository make_repository(std::size_t i) { Repository r; fill_repository(i, r); return r; }
[[nodiscard]] inline GithubRepository make_github(std::size_t i) { GithubRepository r; fill_github(i, r); return r; }

}  // namespace ringlab::json
