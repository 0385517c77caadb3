#include "ringlab/json/deserialize.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "parse_errors.hpp"
#include "reader_records.hpp"

namespace ringlab::json {

namespace {

// --- bodies --------------------------------------------------------------------------------------------

template <class Record>
Status read_array(Parser& parser, simdjson::padded_string_view body, std::pmr::vector<Record>& out) {
  Error error;
  Context ctx{body.data(), body.size(), kNoRecord, &error};
  od::document doc;
  if (const error_code e = parser.iterate(body).get(doc)) return document_error(ctx, e);
  od::array array;
  if (const error_code e = doc.get_array().get(array)) {
    if (e == simdjson::INCORRECT_TYPE) return make_error(ctx, {}, e, offset_of(doc, ctx), "the body is not an array");
    return document_error(ctx, e);
  }
  std::size_t n = 0;
  for (auto element : array) {
    ctx.record = n;
    od::object object;
    bool ok = true;
    if (const error_code e = element.get_object().get(object)) {
      ok = fail(doc, ctx, {}, e);
    } else {
      ok = read_record(doc, object, slot(out, n), ctx, kRecordStart);
    }
    if (!ok) return std::unexpected(std::move(error));
    ++n;
  }
  trim(out, n);
  ctx.record = kNoRecord;
  // Anything after the array: the document is read to its end here (final_location spends it).
  if (const char* rest = final_location(doc); rest != nullptr) {
    return make_error(ctx, {}, simdjson::TRAILING_CONTENT, static_cast<std::size_t>(rest - ctx.body),
                      "after the array");
  }
  return {};
}

template <class Record>
Status read_lines(Parser& parser, simdjson::padded_string_view body, std::pmr::vector<Record>& out,
                  std::size_t window_bytes) {
  Error error;
  Context ctx{body.data(), body.size(), kNoRecord, &error};
  // With threads enabled simdjson indexes the next window on a helper thread: work a measurement of
  // the calling thread would not see.
  parser.threaded = false;
  od::document_stream stream;
  if (const error_code e = parser.iterate_many(body.data(), body.size(), window_bytes).get(stream)) {
    return make_error(ctx, {}, e, 0);
  }
  std::size_t n = 0;
  for (auto it = stream.begin(); it != stream.end(); ++it) {
    ctx.record = n;
    const std::size_t start = it.current_index();
    od::document_reference doc;
    if (const error_code e = (*it).get(doc)) return make_error(ctx, {}, e, start);
    od::object object;
    bool ok = true;
    if (const error_code e = doc.get_object().get(object)) {
      ok = fail(doc, ctx, {}, e);
    } else {
      ok = read_record(doc, object, slot(out, n), ctx, start);
    }
    if (!ok) return std::unexpected(std::move(error));
    ++n;
  }
  trim(out, n);
  // A last record cut short is not a document to simdjson: it only shows as truncated bytes. With no
  // document at all, truncated_bytes() reads indexes of an earlier body; the bytes left tell instead.
  std::size_t cut = 0;
  if (n > 0) {
    cut = std::min(stream.truncated_bytes(), body.size());
  } else {
    const std::size_t first = std::string_view(body).find_first_not_of(" \t\r\n");
    cut = first == std::string_view::npos ? 0 : body.size() - first;
  }
  if (cut > 0) {
    ctx.record = n;
    return make_error(ctx, {}, simdjson::INCOMPLETE_ARRAY_OR_OBJECT, body.size() - cut,
                      "the body ends inside this record");
  }
  return {};
}

template <class Record>
Status read_one(Parser& parser, simdjson::padded_string_view body, RecordSpan record, Record& out) {
  Error error;
  Context ctx{body.data(), body.size(), record.index, &error};
  if (record.offset > body.size() || record.length > body.size() - record.offset) {
    return make_error(ctx, {}, simdjson::OUT_OF_BOUNDS, record.offset,
                      "the span of " + std::to_string(record.length) + " bytes runs past the " +
                          std::to_string(body.size()) + "-byte body");
  }
  const simdjson::padded_string_view view(body.data() + record.offset, record.length,
                                          body.capacity() - record.offset);
  od::document doc;
  if (const error_code e = parser.iterate(view).get(doc)) return make_error(ctx, {}, e, record.offset);
  od::object object;
  bool ok = true;
  if (const error_code e = doc.get_object().get(object)) {
    ok = fail(doc, ctx, {}, e);
  } else {
    ok = read_record(doc, object, out, ctx, record.offset);
  }
  if (!ok) return std::unexpected(std::move(error));
  // Anything after the array: the document is read to its end here (final_location spends it).
  if (const char* rest = final_location(doc); rest != nullptr) {
    return make_error(ctx, {}, simdjson::TRAILING_CONTENT, static_cast<std::size_t>(rest - ctx.body),
                      "after the record");
  }
  return {};
}

}  // namespace

simdjson::padded_string_view padded_view(const base::PaddedBuffer& body) noexcept {
  return simdjson::padded_string_view(body.data(), body.size(), body.capacity() + base::kPadding);
}

namespace {
// The body as simdjson reads it, whichever form the record type takes it in.
simdjson::padded_string_view view_of(simdjson::padded_string_view body) noexcept { return body; }
simdjson::padded_string_view view_of(PaddedBody body) noexcept { return body.view(); }
}  // namespace

inline namespace RINGLAB_JSON_PARSER_ABI {

// The specializations deserialize.hpp declares: the owning and the view form of a record on a line.
#define RINGLAB_JSON_WHOLE_BODY_FORMS(R)                                                                  \
  template <>                                                                                             \
  Status parse_array<R>(Parser & parser, BodyFor<R> body, std::pmr::vector<R> & out) {                    \
    return read_array(parser, view_of(body), out);                                                        \
  }                                                                                                       \
  template <>                                                                                             \
  Status parse_ndjson<R>(Parser & parser, BodyFor<R> body, std::pmr::vector<R> & out, std::size_t window) { \
    return read_lines(parser, view_of(body), out, window);                                                \
  }                                                                                                       \
  template <>                                                                                             \
  Status parse_record<R>(Parser & parser, BodyFor<R> body, RecordSpan record, R & out) {                  \
    return read_one(parser, view_of(body), record, out);                                                  \
  }
RINGLAB_JSON_WHOLE_BODY_FORMS(WeatherForecast) RINGLAB_JSON_WHOLE_BODY_FORMS(WeatherView)
RINGLAB_JSON_WHOLE_BODY_FORMS(Repository) RINGLAB_JSON_WHOLE_BODY_FORMS(RepositoryView)
RINGLAB_JSON_WHOLE_BODY_FORMS(GithubRepository) RINGLAB_JSON_WHOLE_BODY_FORMS(GithubRepositoryView)
RINGLAB_JSON_WHOLE_BODY_FORMS(GithubStars) RINGLAB_JSON_WHOLE_BODY_FORMS(GithubStarsView)
RINGLAB_JSON_WHOLE_BODY_FORMS(ProfileStars) RINGLAB_JSON_WHOLE_BODY_FORMS(ProfileStarsView)
#undef RINGLAB_JSON_WHOLE_BODY_FORMS

}  // inline namespace RINGLAB_JSON_PARSER_ABI
}  // namespace ringlab::json
