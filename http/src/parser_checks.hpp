#pragma once
// Machine's request framing checks (LineCheck), the limits on chunk overhead and bodies, and the
// errors it reports (parser_machine.hpp). Included by parser.cpp alone.
#include "parser_machine.hpp"

namespace ringlab::http {
namespace {

// ---- request framing checks (LineCheck)

// The error's position is where the offending byte is, whichever callback found it: set as
// pending_at_ so that take_pending() does not use llhttp's (which depends on how input was cut).
template <class Head>
inline Error Machine<Head>::framing_error(LineCheck::Verdict verdict, uint64_t position) {
  pending_at_ = position;
  const char* what = verdict == LineCheck::Verdict::obs_fold
                         ? "obsolete line folding (a line starting with a space or tab) is not accepted"
                         : "CR not followed by LF";
  return Error{Errc::malformed, what, {}};
}

// Before llhttp sees a slice of a head (or the CR/LF before one): refuse what it would misread.
template <class Head>
inline std::optional<Error> Machine<Head>::check_framing_before(const char* base, std::size_t slice) {
  if (framing_ != Framing::head) {
    if (framing_ == Framing::chunked) framing_from_ = base;  // earlier slices were checked to their end
    return std::nullopt;
  }
  const auto outcome = lines_.scan(base, slice, true);
  if (outcome.verdict == LineCheck::Verdict::end) {
    framing_ = Framing::checked;
    framing_from_ = base + outcome.at;  // where a chunked body's framing starts
  } else if (outcome.verdict != LineCheck::Verdict::more) {
    return framing_error(outcome.verdict, offset_ + outcome.at);
  }
  return std::nullopt;
}

// The framing bytes of a chunked body from framing_from_ to `end` (chunk-size lines, extensions,
// the last chunk, trailers); `section`: stop at the empty line that ends the trailers. `end_offset`
// is the stream offset of `end`, for the error position.
template <class Head>
inline std::optional<Error> Machine<Head>::check_chunk_framing(const char* end, bool section, uint64_t end_offset) {
  if (framing_ != Framing::chunked || framing_from_ == nullptr || end < framing_from_) return std::nullopt;
  const auto size = static_cast<std::size_t>(end - framing_from_);
  const auto outcome = lines_.scan(framing_from_, size, section);
  framing_from_ = end;
  if (outcome.verdict == LineCheck::Verdict::bad_cr || outcome.verdict == LineCheck::Verdict::obs_fold) {
    return framing_error(outcome.verdict, end_offset - (size - outcome.at));
  }
  return std::nullopt;
}

// Chunk extensions and trailers are read and dropped; they count against max_header_bytes (per
// message) so that a peer cannot keep the parser busy with an endless chunk line or trailer.
template <class Head>
inline uint64_t Machine<Head>::offset_of(const char* at) const noexcept {
  return offset_ + static_cast<uint64_t>(at - slice_start_);
}

// `at`: the stream offset of the first of the `length` bytes; the offset of the byte that crosses
// the budget is kept for the order of errors (feed()).
template <class Head>
inline int Machine<Head>::count_overhead(uint64_t at, std::size_t length) {
  const std::size_t before = overhead_bytes_;
  overhead_bytes_ += length;
  last_span_end_ = at + length;
  if (overhead_bytes_ > limits_.max_header_bytes) {
    overhead_crossed_at_ = at + (before < limits_.max_header_bytes ? limits_.max_header_bytes - before : 0);
    pending_ = Error{Errc::header_too_large,
                     "chunk extensions and trailers exceed max_header_bytes (" +
                         std::to_string(limits_.max_header_bytes) + ")",
                     {}};
    return HPE_USER;
  }
  return 0;
}

// Checks the next up to crlf_left_ bytes of the CRLF that ends a chunk's data against the
// [bytes, bytes + size) that follow; false on a mismatch.
template <class Head>
inline bool Machine<Head>::check_crlf(const char* bytes, std::size_t size) noexcept {
  for (std::size_t i = 0; crlf_left_ > 0 && i < size; ++i, --crlf_left_) {
    if (bytes[i] != "\r\n"[2 - crlf_left_]) return false;
  }
  return true;
}

template <class Head>
inline Error Machine<Head>::body_limit_error(const std::string& what) const {
  return Error{Errc::body_too_large,
               what + " exceeds max_body_bytes (" + std::to_string(limits_.max_body_bytes) + ")", {}};
}

// ---- errors

template <class Head>
inline Error Machine<Head>::take_pending(uint64_t position) {
  Error error = std::move(*pending_);
  pending_.reset();
  error.detail += at_byte(pending_at_.value_or(position));
  pending_at_.reset();
  return error;
}

// An error found outside llhttp (framing_error set its position).
template <class Head>
inline Error Machine<Head>::take_pending_error(Error error) {
  error.detail += at_byte(pending_at_.value_or(offset_));
  pending_at_.reset();
  return error;
}

template <class Head>
inline Error Machine<Head>::translate(llhttp_errno_t code, uint64_t position) {
  if (pending_) return take_pending(position);
  const char* reason = llhttp_get_error_reason(&parser_);
  std::string detail = "llhttp: ";
  detail += reason != nullptr ? reason : "parse error";
  detail += " (";
  detail += llhttp_errno_name(code);
  detail += ')';
  detail += at_byte(position);
  return Error{code == HPE_PAUSED_UPGRADE ? Errc::unsupported : Errc::malformed, std::move(detail), {}};
}

template <class Head>
inline std::unexpected<Error> Machine<Head>::stick(Error error) {
  handler_ = nullptr;
  failed_ = error;
  return std::unexpected(std::move(error));
}

}  // namespace
}  // namespace ringlab::http
