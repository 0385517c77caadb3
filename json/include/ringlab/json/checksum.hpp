#pragma once
// Checksum: a 64-bit digest of every field of every record, in order. A strategy returns it to prove it
// read every field; bench compares it with checksum_weather(n) / checksum_repos(n) / checksum_github(n),
// computed straight from the generator, without parsing anything.
//
// Definition (so that every reader of the same records agrees):
//   state starts at a fixed seed; each value adds 64-bit words, each word w doing state = mix(state, w)
//   (wyhash's 128-bit multiply-fold);
//   - integer: its value (two's complement); bool: 0 or 1; double: its IEEE-754 bits;
//   - string: its *decoded* UTF-8 bytes as little-endian 8-byte words, the last one zero-padded, then
//     the byte length. The length comes last so a view can decode escapes on the fly, without knowing
//     the decoded length first; with it ("ab","c") and ("a","bc") differ;
//   - optional (homepage, language, license, a github description): the word 0, or the word 1 then the
//     value;
//   - array (topics): the element count, then the elements;
//   fields in the order of the model's declaration (the order the server writes the keys in, whatever
//   order a body lists them in); value() mixes in the record count last.
// Hence owning and viewing forms give the same value for the same body, and so do a JSON array parse,
// an NDJSON parse and a record-by-record parse of the same records.
//
// A view string flagged has_escapes is decoded as it is hashed (unescape.hpp; no allocation, no scratch
// buffer). The parser validated its escapes; a hand-made view with an invalid escape is hashed as its
// raw text.
//
// Not cryptographic: it catches a field read wrong, not an adversary.
#include <cstddef>
#include <cstdint>
#include <span>

#include "ringlab/json/profiles.hpp"
#include "ringlab/json/models.hpp"

namespace ringlab::json {

class Checksum {
 public:
  void add(const WeatherForecast& record) noexcept;
  void add(const WeatherView& record) noexcept;
  void add(const Repository& record) noexcept;
  void add(const RepositoryView& record) noexcept;
  void add(const GithubRepository& record) noexcept;
  void add(const GithubRepositoryView& record) noexcept;
  void add(const GithubStars& record) noexcept;  // the three fields alone
  void add(const GithubStarsView& record) noexcept;
  void add(const ProfileStars& record) noexcept;  // name, url, stars
  void add(const ProfileStarsView& record) noexcept;

  [[nodiscard]] uint64_t value() const noexcept;
  [[nodiscard]] std::size_t records() const noexcept { return records_; }

 private:
  uint64_t state_ = 0x243F6A8885A308D3ULL;  // digits of pi: any fixed value will do
  std::size_t records_ = 0;
};

[[nodiscard]] uint64_t checksum(std::span<const WeatherForecast> records) noexcept;
[[nodiscard]] uint64_t checksum(std::span<const WeatherView> records) noexcept;
[[nodiscard]] uint64_t checksum(std::span<const Repository> records) noexcept;
[[nodiscard]] uint64_t checksum(std::span<const RepositoryView> records) noexcept;
[[nodiscard]] uint64_t checksum(std::span<const GithubRepository> records) noexcept;
[[nodiscard]] uint64_t checksum(std::span<const GithubRepositoryView> records) noexcept;
[[nodiscard]] uint64_t checksum(std::span<const GithubStars> records) noexcept;
[[nodiscard]] uint64_t checksum(std::span<const GithubStarsView> records) noexcept;
[[nodiscard]] uint64_t checksum(std::span<const ProfileStars> records) noexcept;
[[nodiscard]] uint64_t checksum(std::span<const ProfileStarsView> records) noexcept;

// The checksum of records 0..count-1 as generated (generate.hpp): ground truth for any parse of a
// body the server sent for `count`.
[[nodiscard]] uint64_t checksum_weather(std::size_t count);
[[nodiscard]] uint64_t checksum_repos(std::size_t count);
[[nodiscard]] uint64_t checksum_github(std::size_t count);
// The checksum of the three fields jos's Version 8 reads (GithubStars: stargazers_count, name, url) of
// records 0..count-1: what a parse of a /github body into GithubStars gives. It proves those three
// fields only; the other 19 were skipped, not read.
[[nodiscard]] uint64_t checksum_github_three_fields(std::size_t count);
// The same three fields of repository records (they have the same keys at their top level).
[[nodiscard]] uint64_t checksum_repos_three_fields(std::size_t count);
// The checksum of jos's DTO (ProfileStars: name, url, stars) of /profiles records 0..count-1: what any parse
// of a /profiles body gives, since every row of the jos suite reads those three keys alone (profiles.hpp).
[[nodiscard]] uint64_t checksum_profiles(std::size_t count);

}  // namespace ringlab::json
