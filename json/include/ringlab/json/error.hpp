#pragma once
// Errors of the json/ layer.
//
// Convention (as http/): a function that can fail returns a [[nodiscard]] Result<T> =
// std::expected<T, Error>. An Error says where the bytes went wrong in terms a reader of the body can
// check: the record index, the field path, simdjson's error code and its text, the byte offset from
// the start of the body:
//   "record 17 field temperatureC: INCORRECT_TYPE (The JSON element does not have the requested
//    type.) at byte 1234"
// Nothing in json/ retries or skips a bad record: the first error ends the parse.
#include <cstddef>
#include <expected>
#include <limits>
#include <string>

namespace ringlab::json {

inline constexpr std::size_t kNoRecord = std::numeric_limits<std::size_t>::max();
inline constexpr std::size_t kNoOffset = std::numeric_limits<std::size_t>::max();

struct Error {
  std::string message;           // the whole text, as above
  std::size_t record = kNoRecord;  // index of the record being read; kNoRecord for the document itself
  std::string field;             // "temperatureC", "owner.login", "topics[2]"; empty when no field is involved
  std::size_t offset = kNoOffset;  // byte offset in the body; kNoOffset when unknown
};

template <class T>
using Result = std::expected<T, Error>;
using Status = Result<void>;

}  // namespace ringlab::json
