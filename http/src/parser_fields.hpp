#pragma once
// Machine's message state and the scratch storage that joins a head's split fields
// (parser_machine.hpp). Included by parser.cpp alone.
#include "parser_machine.hpp"

namespace ringlab::http {
namespace {

// ---- message state

template <class Head>
inline std::string_view& Machine<Head>::start_line() noexcept {
  if constexpr (kResponse) {
    return head_.reason;
  } else {
    return head_.target;
  }
}

template <class Head>
inline void Machine<Head>::clear_message() noexcept {
  // Field by field rather than `head_ = Head{}`: the header array is 2 KiB and only `count` of it
  // is ever read.
  head_.headers.count = 0;
  start_line() = {};
  if constexpr (kResponse) {
    head_.status = 0;
  } else {
    head_.method = {};
  }
  head_.version_major = 1;
  head_.version_minor = 1;
  head_.content_length.reset();
  head_.chunked = false;
  head_.keep_alive = true;
  in_message_ = false;
  head_done_ = false;
  // head_bytes_ is not cleared here (on_message_begin): CR/LF before a start line count against
  // the head limit whichever feed they came in. It starts again after each message and at reset().
  body_bytes_ = 0;
  announced_bytes_ = 0;
  chunk_left_ = 0;
  crlf_left_ = 0;
  overhead_bytes_ = 0;
  piece_ = Piece::none;
  scratch_used_ = 0;
}

// ---- fragments and scratch storage

template <class Head>
inline bool Machine<Head>::in_scratch(std::string_view field) const noexcept {
  const std::less<const char*> before;
  return !field.empty() && !before(field.data(), scratch_.get()) &&
         before(field.data(), scratch_.get() + scratch_capacity_);
}

// Extends `field` by the fragment [at, at + length): in place when the fragment follows the
// field's bytes in the caller's memory, else by joining both in the scratch.
template <class Head>
inline bool Machine<Head>::append(std::string_view& field, const char* at, std::size_t length) {
  if (length == 0) return true;
  if (field.empty()) {
    field = {at, length};
    return true;
  }
  if (!in_scratch(field) && field.data() + field.size() == at) {
    field = {field.data(), field.size() + length};
    return true;
  }
  // The field must end at the scratch's end for the fragment to be appended after it.
  if (!in_scratch(field) || field.data() + field.size() != scratch_.get() + scratch_used_) {
    if (!own_at_end(field, length)) return false;
  } else if (!reserve(length)) {
    return false;
  }
  std::memcpy(scratch_.get() + scratch_used_, at, length);
  scratch_used_ += length;
  field = {field.data(), field.size() + length};
  return true;
}

// Copies `field` to the end of the scratch, with room for `extra` more bytes after it.
template <class Head>
inline bool Machine<Head>::own_at_end(std::string_view& field, std::size_t extra) {
  if (!reserve(field.size() + extra)) return false;
  // Re-read after reserve(): growing the scratch rebases the views that point into it.
  char* destination = scratch_.get() + scratch_used_;
  std::memmove(destination, field.data(), field.size());
  field = {destination, field.size()};
  scratch_used_ += field.size();
  return true;
}

template <class Head>
inline bool Machine<Head>::own(std::string_view& field) { return in_scratch(field) || field.empty() || own_at_end(field, 0); }

// Every byte of a name, value, reason or target is a head byte, and the head is at most
// max_header_bytes; each lands in the scratch once when joined or detached, plus once more for
// the field in progress when detach() put other fields after it. Hence the bound of twice the head.
template <class Head>
inline std::size_t Machine<Head>::scratch_bound() const noexcept { return 2 * std::max<std::size_t>(limits_.max_header_bytes, 1); }

template <class Head>
inline bool Machine<Head>::reserve(std::size_t more) {
  if (more <= scratch_capacity_ - scratch_used_) return true;
  return grow_scratch(scratch_used_ + more);
}

template <class Head>
inline bool Machine<Head>::grow_scratch(std::size_t needed) {
  if (needed > scratch_bound()) return false;
  const std::size_t capacity = std::min(scratch_bound(), std::max(needed, 2 * scratch_capacity_));
  auto bigger = std::make_unique<char[]>(capacity);
  std::memcpy(bigger.get(), scratch_.get(), scratch_used_);
  auto rebase = [&](std::string_view& field) {
    if (in_scratch(field)) field = {bigger.get() + (field.data() - scratch_.get()), field.size()};
  };
  rebase(start_line());
  for (std::size_t i = 0; i < head_.headers.count; ++i) {
    rebase(head_.headers.items[i].name);
    rebase(head_.headers.items[i].value);
  }
  scratch_ = std::move(bigger);
  scratch_capacity_ = capacity;
  return true;
}

template <class Head>
inline int Machine<Head>::fail_scratch() {
  pending_ = Error{Errc::header_too_large, "head fragments exceed the parser's scratch storage", {}};
  return HPE_USER;
}

template <class Head>
inline Status Machine<Head>::scratch_exhausted() {
  return stick(Error{Errc::header_too_large, "head fragments exceed the parser's scratch storage", {}});
}

}  // namespace
}  // namespace ringlab::http
