#pragma once
// Request framing checks of the HTTP parser (parser_machine.hpp): the line rules llhttp leaves to
// its strict mode. Included by parser.cpp alone, through parser_machine.hpp.
#include <cstddef>
#include <cstdint>

namespace ringlab::http {
namespace {

// The line rules llhttp 8.1 checks only in strict mode (which Debian's build does not enable, and
// which would apply to responses too): a CR must be followed by LF (llhttp takes CR plus any byte as
// a line end, so "\r\rX" hides a request from it that another parser sees), and a line that starts
// with SP or HT after a field line is obsolete line folding (RFC 9112 5.2), refused as nginx and
// h2o do. Fed the framing bytes of a request in order, in pieces split anywhere: the verdict does
// not depend on the split.
class LineCheck {
 public:
  enum class Verdict : uint8_t { more, end, bad_cr, obs_fold };
  struct Outcome {
    Verdict verdict = Verdict::more;
    std::size_t at = 0;  // the offending byte, or just after the LF that ended the section
  };

  // `section`: heads and trailers end at an empty line after a non-empty one; scanning stops there.
  Outcome scan(const char* bytes, std::size_t size, bool section) noexcept {
    for (std::size_t i = 0; i < size; ++i) {
      const char c = bytes[i];
      if (cr_) {
        if (c != '\n') return {Verdict::bad_cr, i};
        cr_ = false;
      } else if (c == '\r') {
        cr_ = true;
        continue;
      }
      if (c == '\n') {
        if (!line_start_) {
          seen_line_ = true;
        } else if (seen_line_ && section) {
          *this = LineCheck{};
          return {Verdict::end, i + 1};
        }
        line_start_ = true;
        continue;
      }
      if (line_start_ && seen_line_ && (c == ' ' || c == '\t')) return {Verdict::obs_fold, i};
      line_start_ = false;
    }
    return {Verdict::more, size};
  }
  // A CR is waiting for its LF.
  [[nodiscard]] bool after_cr() const noexcept { return cr_; }
  // Chunk data interrupts the framing: the next framing byte starts a line of its own.
  void restart() noexcept { *this = LineCheck{}; }

 private:
  bool cr_ = false;
  bool line_start_ = true;
  bool seen_line_ = false;  // leading empty lines (allowed before a request line) do not count
};

// Where the request side is in the framing it checks with LineCheck.
enum class Framing : uint8_t {
  head,     // before or in a head: bytes are checked before llhttp sees them
  checked,  // the head's end was found; llhttp has yet to reach it or the body is not chunked
  chunked,  // a chunked body: the bytes around chunk data are checked as llhttp reports the data
};

}  // namespace
}  // namespace ringlab::http
