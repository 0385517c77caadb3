#pragma once
// BodyWriter: one body of generated records (weather, repos, github or profiles; a JSON array or NDJSON),
// serialized a piece at a time, as a streaming serializer fills and flushes its output buffer. The
// pieces, concatenated, are byte for byte what append_weather_json() and its siblings write for the
// same count (serialize.hpp, profiles.hpp): both go through the same record loop.
//
// A piece ends after the record that brings it to the size asked for (whole records: a piece is at
// most one record longer than asked), or at the end of the body; the array's brackets and separators
// stay with the records they precede or follow, so every piece but the last ends after a record.
//
// Allocation: write() appends to the caller's string (reserve it once and reuse it, and nothing is
// allocated there); the writer keeps one scratch record per kind, whose strings grow over the first
// records of a body and keep their capacity across start().
//
// Threads: none of its own; one writer belongs to one thread at a time.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ringlab/json/profiles.hpp"
#include "ringlab/json/models.hpp"

namespace ringlab::json {

// Which generator's records a body holds (generate.hpp, profiles.hpp).
enum class RecordKind : uint8_t { weather, repos, github, profiles };
// "[{...},{...}]" (array) or one record per line, each ended by '\n' (lines: NDJSON).
enum class BodyLayout : uint8_t { array, lines };

class BodyWriter {
 public:
  // Begins the body of records 0..count-1; a body in progress is dropped.
  void start(RecordKind kind, BodyLayout layout, std::size_t count) noexcept;
  // Appends whole records to `out` until it has grown by at least `at_least` bytes or the body is
  // complete (SIZE_MAX: the whole rest). Returns true once the body is complete; after that, until the
  // next start(), it appends nothing and returns true.
  bool write(std::string& out, std::size_t at_least);
  [[nodiscard]] bool done() const noexcept { return done_; }
  // Records written since start().
  [[nodiscard]] std::size_t records_written() const noexcept { return next_; }

 private:
  RecordKind kind_ = RecordKind::weather;
  BodyLayout layout_ = BodyLayout::array;
  std::size_t count_ = 0;
  std::size_t next_ = 0;
  bool done_ = true;
  WeatherForecast weather_;
  Repository repository_;
  GithubRepository github_;
  ProfileRecord profiles_;
};

}  // namespace ringlab::json
