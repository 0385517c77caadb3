#include "ringlab/json/record_splitter.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

namespace ringlab::json {

namespace {

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Index of the first '"' or '\\' in bytes[from, size), or size. Eight bytes per step: record text is
// mostly string contents, and a byte-at-a-time loop over it would cost as much as parsing it.
std::size_t find_quote_or_backslash(const char* bytes, std::size_t from, std::size_t size) noexcept {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  std::size_t i = from;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, sizeof word);
    if constexpr (std::endian::native == std::endian::big) word = std::byteswap(word);
    const uint64_t quotes = word ^ (kOnes * '"');
    const uint64_t backslashes = word ^ (kOnes * '\\');
    // A byte is zero in x where the byte matched; the lowest flagged byte is exact (borrows only
    // travel upwards), and the lowest is all we need.
    const uint64_t found = ((quotes - kOnes) & ~quotes & kHighs) | ((backslashes - kOnes) & ~backslashes & kHighs);
    if (found != 0) return i + static_cast<std::size_t>(std::countr_zero(found)) / 8;
  }
  for (; i < size; ++i) {
    if (bytes[i] == '"' || bytes[i] == '\\') return i;
  }
  return size;
}

std::string describe_byte(char c) {
  const auto b = static_cast<unsigned char>(c);
  if (b >= 0x20 && b < 0x7F) return std::string{'\'', c, '\''};
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string{"byte 0x"} + kHex[b >> 4] + kHex[b & 0xF];
}

}  // namespace

Error RecordSplitter::fail(std::string_view what, std::string_view prefix, std::size_t at) {
  Error error;
  error.offset = at;
  std::string where;
  switch (phase_) {
    case Phase::before_array:
    case Phase::after_array: where = "document"; break;
    case Phase::after_record:
      error.record = records_ - 1;
      where = "after record " + std::to_string(records_ - 1);
      break;
    default:
      error.record = records_;
      where = "record " + std::to_string(records_);
      break;
  }
  error.message = where + ": " + std::string(what);
  if (at < prefix.size()) error.message += ", found " + describe_byte(prefix[at]);
  error.message += " at byte " + std::to_string(at);
  error_ = error;
  return error;
}

Result<std::optional<RecordSpan>> RecordSplitter::next(std::string_view prefix) {
  if (error_) return std::unexpected(*error_);
  if (prefix.size() < position_) {
    return std::unexpected(fail("the body given is shorter than the " + std::to_string(position_) +
                                    " bytes already scanned",
                                prefix, prefix.size()));
  }
  const char* bytes = prefix.data();
  const std::size_t size = prefix.size();
  std::size_t i = position_;
  while (i < size) {
    if (phase_ == Phase::in_record) {
      if (in_string_) {
        if (escaped_) {
          escaped_ = false;
          ++i;
          continue;
        }
        const std::size_t stop = find_quote_or_backslash(bytes, i, size);
        if (stop == size) {
          i = size;
          break;
        }
        if (bytes[stop] == '\\') {
          escaped_ = true;
        } else {
          in_string_ = false;
        }
        i = stop + 1;
        continue;
      }
      const char c = bytes[i++];
      if (c == '"') {
        in_string_ = true;
      } else if (c == '{' || c == '[') {
        ++depth_;
      } else if ((c == '}' || c == ']') && --depth_ == 0) {
        // Nesting inside a record is simdjson's to check, but the record's own end must be the '}'
        // its span promises: "{...]" would otherwise be handed over as a record.
        if (c != '}') {
          --i;
          ++depth_;
          return std::unexpected(fail("expected '}' to close the record", prefix, i));
        }
        position_ = i;
        phase_ = Phase::after_record;
        return RecordSpan{records_++, record_start_, i - record_start_};
      }
      continue;
    }

    const char c = bytes[i];
    if (is_space(c)) {
      ++i;
      continue;
    }
    switch (phase_) {
      case Phase::before_array:
        if (c != '[') return std::unexpected(fail("expected '[' at the start of the body", prefix, i));
        phase_ = Phase::first_record;
        break;
      case Phase::first_record:
        if (c == ']') {
          phase_ = Phase::after_array;
          break;
        }
        [[fallthrough]];
      case Phase::next_record:
        if (c != '{') {
          return std::unexpected(fail(phase_ == Phase::first_record ? "expected '{' or ']' after '['"
                                                                    : "expected '{' after ','",
                                      prefix, i));
        }
        phase_ = Phase::in_record;
        record_start_ = i;
        depth_ = 1;
        break;
      case Phase::after_record:
        if (c == ',') {
          phase_ = Phase::next_record;
        } else if (c == ']') {
          phase_ = Phase::after_array;
        } else {
          return std::unexpected(fail("expected ',' or ']'", prefix, i));
        }
        break;
      case Phase::after_array:
        return std::unexpected(fail("unexpected bytes after the array", prefix, i));
      case Phase::in_record:
        break;  // handled above
    }
    ++i;
  }
  position_ = size;
  return std::optional<RecordSpan>{};
}

Status RecordSplitter::finish(std::string_view body) {
  auto rest = next(body);
  if (!rest) return std::unexpected(rest.error());
  if (*rest) {
    return std::unexpected(fail("finish() called while record " + std::to_string((*rest)->index) +
                                    " was still to be taken with next()",
                                body, body.size()));
  }
  switch (phase_) {
    case Phase::after_array: return {};
    case Phase::before_array:
      return std::unexpected(fail(body.empty() ? "the body is empty" : "the body ends before the array starts", body,
                                  body.size()));
    case Phase::in_record:
      return std::unexpected(fail("the body ends inside the record that starts at byte " +
                                      std::to_string(record_start_),
                                  body, body.size()));
    default: return std::unexpected(fail("the body ends before the array is closed", body, body.size()));
  }
}

}  // namespace ringlab::json
