// The errors of the simdjson readers (deserialize.cpp): where a parse is (Context), which field an error
// is about (FieldName), and the Error built from both. Building an error is cold and out of line, so
// that the parse loops keep their registers.
//
// Private to deserialize.cpp, which includes it once; internal linkage for the reason reader_fields.hpp
// gives. Threads: nothing here holds state; a Context belongs to one parse on one thread.
#pragma once

#include <cstddef>
#include <expected>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "ringlab/json/deserialize.hpp"
#include "ringlab/json/record_splitter.hpp"

namespace ringlab::json {

namespace od = simdjson::ondemand;
using simdjson::error_code;

namespace {

// --- errors ------------------------------------------------------------------------------------------

const char* code_name(error_code code) noexcept {
  switch (code) {
    case simdjson::SUCCESS: return "SUCCESS";
    case simdjson::CAPACITY: return "CAPACITY";
    case simdjson::MEMALLOC: return "MEMALLOC";
    case simdjson::TAPE_ERROR: return "TAPE_ERROR";
    case simdjson::DEPTH_ERROR: return "DEPTH_ERROR";
    case simdjson::STRING_ERROR: return "STRING_ERROR";
    case simdjson::T_ATOM_ERROR: return "T_ATOM_ERROR";
    case simdjson::F_ATOM_ERROR: return "F_ATOM_ERROR";
    case simdjson::N_ATOM_ERROR: return "N_ATOM_ERROR";
    case simdjson::NUMBER_ERROR: return "NUMBER_ERROR";
    case simdjson::UTF8_ERROR: return "UTF8_ERROR";
    case simdjson::UNINITIALIZED: return "UNINITIALIZED";
    case simdjson::EMPTY: return "EMPTY";
    case simdjson::UNESCAPED_CHARS: return "UNESCAPED_CHARS";
    case simdjson::UNCLOSED_STRING: return "UNCLOSED_STRING";
    case simdjson::UNSUPPORTED_ARCHITECTURE: return "UNSUPPORTED_ARCHITECTURE";
    case simdjson::INCORRECT_TYPE: return "INCORRECT_TYPE";
    case simdjson::NUMBER_OUT_OF_RANGE: return "NUMBER_OUT_OF_RANGE";
    case simdjson::INDEX_OUT_OF_BOUNDS: return "INDEX_OUT_OF_BOUNDS";
    case simdjson::NO_SUCH_FIELD: return "NO_SUCH_FIELD";
    case simdjson::IO_ERROR: return "IO_ERROR";
    case simdjson::INVALID_JSON_POINTER: return "INVALID_JSON_POINTER";
    case simdjson::INVALID_URI_FRAGMENT: return "INVALID_URI_FRAGMENT";
    case simdjson::UNEXPECTED_ERROR: return "UNEXPECTED_ERROR";
    case simdjson::PARSER_IN_USE: return "PARSER_IN_USE";
    case simdjson::OUT_OF_ORDER_ITERATION: return "OUT_OF_ORDER_ITERATION";
    case simdjson::INSUFFICIENT_PADDING: return "INSUFFICIENT_PADDING";
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT: return "INCOMPLETE_ARRAY_OR_OBJECT";
    case simdjson::SCALAR_DOCUMENT_AS_VALUE: return "SCALAR_DOCUMENT_AS_VALUE";
    case simdjson::OUT_OF_BOUNDS: return "OUT_OF_BOUNDS";
    case simdjson::TRAILING_CONTENT: return "TRAILING_CONTENT";
    case simdjson::NUM_ERROR_CODES: break;
  }
  return "UNKNOWN_ERROR";
}

// Where the parse is: the whole body (offsets count from its start) and the record being read, and
// where an error goes. The readers below return a bool and leave the Error here: a std::expected with
// two strings in it, returned through every level of every field, kept the parse loops from holding
// their state in registers.
struct Context {
  const char* body = nullptr;
  std::size_t body_size = 0;
  std::size_t record = kNoRecord;
  Error* error = nullptr;
};

// The field an error is about: "date", "owner.login", "topics[2]". Cheap to pass; spelled out only
// when an error is made.
struct FieldName {
  std::string_view parent;
  std::string_view name;
  std::size_t index = kNoRecord;  // kNoRecord: not an array element

  FieldName() = default;
  FieldName(std::string_view field) noexcept : name(field) {}  // NOLINT: implicit on purpose
  FieldName(const char* field) noexcept : name(field) {}       // NOLINT: implicit on purpose
  FieldName(std::string_view parent_field, std::string_view field) noexcept : parent(parent_field), name(field) {}
  FieldName(std::string_view array, std::size_t element) noexcept : name(array), index(element) {}

  [[nodiscard]] std::string text() const {
    std::string out;
    if (!parent.empty()) (out += parent) += '.';
    out += name;
    if (index != kNoRecord) out += "[" + std::to_string(index) + "]";
    return out;
  }
};

// Errors are rare: kept out of line and cold, so the parse loops keep their registers.
[[gnu::cold, gnu::noinline]] Error build_error(const Context& ctx, FieldName field, error_code code, std::size_t offset,
                                               std::string_view detail = {}) {
  Error error;
  error.record = ctx.record;
  error.field = field.text();
  error.offset = offset;
  error.message = ctx.record == kNoRecord ? std::string("document") : "record " + std::to_string(ctx.record);
  if (!error.field.empty()) error.message += " field " + error.field;
  error.message += ": ";
  error.message += code_name(code);
  error.message += " (";
  error.message += simdjson::error_message(code);
  error.message += ")";
  if (!detail.empty()) {
    error.message += ": ";
    error.message += detail;
  }
  if (offset != kNoOffset) error.message += " at byte " + std::to_string(offset);
  return error;
}

std::unexpected<Error> make_error(const Context& ctx, FieldName field, error_code code, std::size_t offset,
                                  std::string_view detail = {}) {
  return std::unexpected(build_error(ctx, field, code, offset, detail));
}

// An offset that stands for "where the record being read starts", for the array loop, which does not keep
// it: asking simdjson for each record's position cost a token lookup per record for an error that almost
// never comes. fail_at finds it again when the error is made.
inline constexpr std::size_t kRecordStart = kNoOffset - 1;

// The offset of record ctx.record's '{' in an array body, found again by the splitter (a record whose
// field is missing is complete and well formed, so the splitter reaches it); kNoOffset if it does not.
[[gnu::cold, gnu::noinline]] std::size_t find_record_start(const Context& ctx) {
  const std::string_view body(ctx.body, ctx.body_size);
  RecordSplitter splitter;
  while (true) {
    auto record = splitter.next(body);
    if (!record || !*record) return kNoOffset;
    if ((*record)->index == ctx.record) return (*record)->offset;
  }
}

// For the readers: records the error in the context; returns false so that `return fail_at(...)` ends
// the reader.
[[gnu::cold, gnu::noinline]] bool fail_at(const Context& ctx, FieldName field, error_code code, std::size_t offset) {
  if (offset == kRecordStart) offset = find_record_start(ctx);
  *ctx.error = build_error(ctx, field, code, offset);
  return false;
}

// Where the document's iterator stands: the token that failed, for most errors; for a document read to
// its end, the first byte after it (or nullptr at the end of the body).
//
// simdjson's current_location() is not inlined, and a call that takes the document's address makes GCC
// keep the document in memory for the whole parse: its iterator's position and depth were then stored
// back at every token (floor_parse 1.09-1.14x floor_parse_minimal at 10,000 weather records then, 1.02-1.04
// without it, in interleaved runs of the same hour). So the document is moved into a temporary whose
// address the call may take: only where the parse ends, on an error or after the last record, never to
// be read again.
[[gnu::always_inline]] inline const char* final_location(od::document& doc) noexcept {
  od::document spent(std::move(doc));
  const char* at = nullptr;
  if (spent.current_location().get(at) != simdjson::SUCCESS) return nullptr;
  return at;
}
// A stream's document lives in the stream, whose address its loop passes on anyway.
[[gnu::always_inline]] inline const char* final_location(od::document_reference& doc) noexcept {
  const char* at = nullptr;
  if (doc.current_location().get(at) != simdjson::SUCCESS) return nullptr;
  return at;
}

// The offset of final_location() in the body; the body's size past its end.
template <class Doc>
[[gnu::always_inline]] inline std::size_t offset_of(Doc& doc, const Context& ctx) noexcept {
  const char* at = final_location(doc);
  return at == nullptr ? ctx.body_size : static_cast<std::size_t>(at - ctx.body);
}

// For the readers: records the error at the token the document stands at and returns false, ending the
// parse (the document is spent: see final_location).
template <class Doc>
[[gnu::always_inline]] inline bool fail(Doc& doc, const Context& ctx, FieldName field, error_code code) {
  return fail_at(ctx, field, code, offset_of(doc, ctx));
}

// simdjson rejects a body whose brackets do not balance as a whole, before any record is read. The
// splitter can say which record the bytes go wrong in; its view is added to the message.
[[gnu::cold, gnu::noinline]] std::unexpected<Error> document_error(const Context& ctx, error_code code) {
  const std::string_view body(ctx.body, ctx.body_size);
  RecordSplitter splitter;
  Status where;
  while (true) {
    auto record = splitter.next(body);
    if (!record) {
      where = std::unexpected(record.error());
      break;
    }
    if (!*record) {
      where = splitter.finish(body);
      break;
    }
  }
  if (where) return make_error(ctx, {}, code, 0);
  // "record 3: the body ends inside ..." becomes "record 3: INCOMPLETE_ARRAY_OR_OBJECT (...): the body
  // ends inside ...".
  const std::string& found = where.error().message;
  const std::size_t colon = found.find(": ");
  Error error;
  error.record = where.error().record;
  error.offset = where.error().offset;
  error.message = found.substr(0, colon) + ": " + code_name(code) + " (" + simdjson::error_message(code) + "): " +
                  found.substr(colon == std::string::npos ? 0 : colon + 2);
  return std::unexpected(std::move(error));
}

}  // namespace
}  // namespace ringlab::json
