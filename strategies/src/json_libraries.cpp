#include "json_libraries.hpp"

namespace ringlab::strategies::detail {

std::string FieldPath::text() const {
  std::string out;
  if (!parent.empty()) (out += parent) += '.';
  out += name;
  if (index != json::kNoRecord) out += "[" + std::to_string(index) + "]";
  return out;
}

json::Error library_error(std::size_t record, const FieldPath& field, std::string_view what, std::size_t offset) {
  json::Error error;
  error.record = record;
  error.field = field.text();
  error.offset = offset;
  error.message = record == json::kNoRecord ? std::string("document") : "record " + std::to_string(record);
  if (!error.field.empty()) error.message += " field " + error.field;
  error.message += ": ";
  error.message += what;
  if (offset != json::kNoOffset) error.message += " at byte " + std::to_string(offset);
  return error;
}

}  // namespace ringlab::strategies::detail
