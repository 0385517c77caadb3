#pragma once
// The one loop that writes a body of generated records: append_*_json() and append_*_ndjson()
// (serialize.cpp, profiles.cpp) run it to the end, BodyWriter (body_writer.cpp) a piece at a time. Private
// to json/src.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ringlab/json/body_writer.hpp"
#include "ringlab/json/profiles.hpp"
#include "ringlab/json/serialize.hpp"

namespace ringlab::json {

// Appends records `next`, next+1, ... of a body of `count` records to `out`, each filled into
// `scratch` by fill(i, scratch) and written by append_json(): an array gets '[' before record 0, ','
// between records and ']' after the last; lines get '\n' after each record. Stops after the record
// that takes out.size() to `flush_at` or beyond (System.Text.Json, too, checks its buffer after each
// element it wrote), or at the end of the body; advances `next` past the records written. Returns true
// when the body is complete. A call with next == 0 begins the body, so every call but the last writes
// at least one record.
template <class Record>
bool append_records(std::string& out, std::size_t count, BodyLayout layout, std::size_t& next, Record& scratch,
                    void (*fill)(std::size_t, Record&), std::size_t flush_at) {
  const bool array = layout == BodyLayout::array;
  if (array && next == 0) out.push_back('[');
  while (next < count) {
    if (array && next > 0) out.push_back(',');
    fill(next, scratch);
    append_json(out, scratch);
    if (!array) out.push_back('\n');
    ++next;
    if (out.size() >= flush_at && next < count) return false;
  }
  if (array) out.push_back(']');
  return true;
}

// A whole body into `out` (the append_*_json and append_*_ndjson functions).
template <class Record>
void append_body(std::string& out, std::size_t count, BodyLayout layout, void (*fill)(std::size_t, Record&)) {
  Record scratch;
  std::size_t next = 0;
  append_records(out, count, layout, next, scratch, fill, SIZE_MAX);
}

}  // namespace ringlab::json
