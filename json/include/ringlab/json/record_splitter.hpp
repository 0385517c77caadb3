#pragma once
// RecordSplitter: finds the complete top-level records of a JSON array body while the body is still
// arriving, so that each record can be parsed as soon as its last byte is in. It reads byte by byte
// between strings: the streaming rows no longer use it (parse_arriving in deserialize.hpp parses the
// records complete so far as one document), and json/ uses it on the error path, to name the record a
// body that simdjson rejects as a whole goes wrong in.
//
// Use: keep the body's bytes in one growing buffer and call next() with the whole prefix received so
// far (the buffer may move between calls: the splitter keeps offsets, never pointers). next() scans
// only bytes it has not seen; string and escape state, and the brace depth, carry over between calls,
// so a record, a string or an escape may be cut at any byte. It returns each complete record once, in
// order, then nullopt when it needs more bytes. When the body is complete, finish() says whether the
// array was closed.
//
//   RecordSplitter splitter;
//   ... bytes arrive into `body` ...
//   while (true) {
//     auto record = splitter.next(body.view());
//     if (!record) return error(record.error());
//     if (!*record) break;  // need more bytes
//     parse_record(parser, body, **record, forecast);  // deserialize.hpp
//   }
//   ... at the end of the body: if (auto done = splitter.finish(); !done) ...
//
// What it checks: the bytes outside records ('[', ',', ']', whitespace), that each record starts with
// '{' and ends with the '}' that brings its nesting back to zero, and that nothing but whitespace
// follows the ']'. Inside a record it only tracks strings and
// nesting; simdjson validates the record itself when it is parsed. Errors name the record and the byte:
// "record 3: expected ',' or ']' after a record, found 'x' at byte 212".
#include <cstddef>
#include <optional>
#include <string_view>

#include "ringlab/json/error.hpp"

namespace ringlab::json {

// Where a record is in the body: bytes [offset, offset + length), the '{' to its '}'.
struct RecordSpan {
  std::size_t index = 0;
  std::size_t offset = 0;
  std::size_t length = 0;
  friend bool operator==(const RecordSpan&, const RecordSpan&) = default;
};

class RecordSplitter {
 public:
  // The next complete record of `prefix`, nullopt if it is not complete yet (or the array has ended:
  // see closed()). `prefix` must begin with every byte given in earlier calls: it is the same body,
  // grown. An error sticks: later calls return it again, until reset().
  [[nodiscard]] Result<std::optional<RecordSpan>> next(std::string_view prefix);

  // At the end of the body (`body` = the complete body): ok if the array was closed and only whitespace
  // followed; else an error naming the incomplete record or the missing bytes.
  [[nodiscard]] Status finish(std::string_view body);

  // The ']' closing the array has been seen.
  [[nodiscard]] bool closed() const noexcept { return phase_ == Phase::after_array; }
  // Records returned so far.
  [[nodiscard]] std::size_t records() const noexcept { return records_; }
  // Bytes of the prefix consumed so far.
  [[nodiscard]] std::size_t scanned() const noexcept { return position_; }
  // Ready for a new body.
  void reset() noexcept { *this = RecordSplitter{}; }

 private:
  enum class Phase {
    before_array,   // whitespace, then '['
    first_record,   // after '[': whitespace, then '{' or ']'
    next_record,    // after ',': whitespace, then '{'
    after_record,   // whitespace, then ',' or ']'
    in_record,      // inside a record: tracking strings and depth
    after_array,    // whitespace only
  };
  [[nodiscard]] Error fail(std::string_view what, std::string_view prefix, std::size_t at);

  Phase phase_ = Phase::before_array;
  std::size_t position_ = 0;      // first byte not scanned yet
  std::size_t record_start_ = 0;  // offset of the current record's '{'
  std::size_t depth_ = 0;         // nesting inside the current record ({ and [), 1 at its top level
  std::size_t records_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;  // the previous byte in a string was an unpaired backslash
  std::optional<Error> error_;
};

}  // namespace ringlab::json
