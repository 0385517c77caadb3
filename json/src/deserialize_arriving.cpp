// An array body parsed while it arrives, one document per call (deserialize.hpp, parse_*_arriving):
// finding the last record boundary of what has arrived, lending the window its brackets, and reading
// the window's records with the same readers as the whole-body parse.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include "ringlab/json/deserialize.hpp"
// The readers are written for deserialize.cpp, which calls every one of them; this unit reads owning
// records only, and the view readers it leaves uncalled are no mistake here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "parse_errors.hpp"
#include "reader_records.hpp"
#pragma GCC diagnostic pop

namespace ringlab::json {
namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// Index of the last non-whitespace byte before `at`, kNone if there is none.
std::size_t last_before(const char* bytes, std::size_t at) noexcept {
  while (at > 0 && is_space(bytes[at - 1])) --at;
  return at == 0 ? kNone : at - 1;
}

// The last record boundary of bytes[0, size): a ',' after `floor` with '}' before it and a '{' after it
// at or past `from` (whitespace allowed between). kNone if there is none. Only the '{' are searched
// for (memrchr, from the end), and each arrived byte at most once over a body: `from` is where the
// last call stopped. The bytes around the ',' are checked, not what holds them: that is the window
// parse's job.
std::size_t last_boundary(const char* bytes, std::size_t from, std::size_t size, std::size_t floor) noexcept {
  std::size_t end = size;
  while (end > from) {
    const void* found = ::memrchr(bytes + from, '{', end - from);
    if (found == nullptr) return kNone;
    end = static_cast<std::size_t>(static_cast<const char*>(found) - bytes);
    const std::size_t comma = last_before(bytes, end);
    if (comma == kNone || comma <= floor) return kNone;  // every earlier '{' is further back still
    if (bytes[comma] != ',') continue;
    const std::size_t close = last_before(bytes, comma);
    if (close != kNone && close > floor && bytes[close] == '}') return comma;
  }
  return kNone;
}

// Body bytes replaced while simdjson reads a window, put back when the lender goes (every path, errors
// included), so that an error's text is built from the body as it arrived.
class LentBytes {
 public:
  explicit LentBytes(char* body) noexcept : body_(body) {}
  LentBytes(const LentBytes&) = delete;
  LentBytes& operator=(const LentBytes&) = delete;
  ~LentBytes() {
    while (count_ > 0) {
      --count_;
      body_[saved_[count_].at] = saved_[count_].byte;
    }
  }
  void lend(std::size_t at, char byte) noexcept {
    saved_[count_++] = Saved{at, body_[at]};
    body_[at] = byte;
  }

 private:
  struct Saved {
    std::size_t at = 0;
    char byte = 0;
  };
  char* body_;
  std::array<Saved, 2> saved_{};
  std::size_t count_ = 0;
};

// Reads the elements of a window's array into out[first, ...): each must be an object, read by the
// record readers of the whole-body parse. Returns how many, or kNone with the error in ctx. Always
// inlined, so that the document's address stays in the window's parse (final_location says why).
template <class Record>
[[gnu::always_inline]] inline std::size_t read_window(od::document& doc, od::array array, std::pmr::vector<Record>& out, std::size_t first,
                        Context& ctx) {
  std::size_t n = 0;
  for (auto element : array) {
    ctx.record = first + n;
    od::value value;
    if (const error_code e = element.get(value)) {
      fail(doc, ctx, {}, e);
      return kNone;
    }
    const auto start = static_cast<std::size_t>(value.raw_json_token().data() - ctx.body);
    od::object object;
    if (const error_code e = value.get_object().get(object)) {
      fail(doc, ctx, {}, e);
      return kNone;
    }
    if (!read_record(doc, object, slot(out, first + n), ctx, start)) return kNone;
    ++n;
  }
  return n;
}

// What a window's parse came to: records read, or an error about the document as a whole (simdjson's
// first stage, or no array where one should start), whose text needs the body as it arrived (built
// once the lent bytes are back), or an error in a record, left in the Context.
struct WindowResult {
  std::size_t records = 0;
  error_code document = simdjson::SUCCESS;
  bool failed = false;
};

// Parses body[begin, end) as one array: body[begin] is lent '[' when the window starts at a boundary,
// and body[end - 1] is lent ']' when it ends at one (`to_boundary`); else the window runs to the end of
// the body, whose next byte is lent a space so that simdjson, on a bad body, stops there rather than
// reading on into bytes a longer earlier body left.
template <class Record>
WindowResult parse_window(Parser& parser, base::PaddedBuffer& body, std::size_t begin, std::size_t end,
                          bool to_boundary, std::pmr::vector<Record>& out, std::size_t first, Context& ctx) {
  WindowResult result;
  LentBytes lent(body.data());
  if (begin > 0) lent.lend(begin, '[');
  lent.lend(to_boundary ? end - 1 : end, to_boundary ? ']' : ' ');
  const simdjson::padded_string_view window(body.data() + begin, end - begin,
                                            body.capacity() + base::kPadding - begin);
  od::document doc;
  od::array array;
  error_code e = parser.iterate(window).get(doc);
  if (!e) e = doc.get_array().get(array);
  if (e == simdjson::INCORRECT_TYPE) {
    result.failed = true;
    *ctx.error = build_error(ctx, {}, e, offset_of(doc, ctx), "the body is not an array");
    return result;
  }
  if (e) {
    result.document = e;
    result.failed = true;
    return result;
  }
  result.records = read_window(doc, array, out, first, ctx);
  if (result.records == kNone) {
    result.failed = true;
    return result;
  }
  ctx.record = kNoRecord;
  // Anything after the array: the document is read to its end here (final_location spends it).
  if (const char* rest = final_location(doc); rest != nullptr) {
    result.failed = true;
    *ctx.error = build_error(ctx, {}, simdjson::TRAILING_CONTENT, static_cast<std::size_t>(rest - ctx.body),
                             "after the array");
  }
  return result;
}

template <class Record>
Status parse_arriving(Parser& parser, base::PaddedBuffer& body, ArrivingArray& progress, std::pmr::vector<Record>& out,
                      Arrival arrival) {
  const std::size_t size = body.size();
  Error error;
  if (arrival == Arrival::partial) {
    if (progress.deferred || size <= progress.searched) return {};
    const std::size_t from = std::max(progress.searched, progress.window + 1);
    progress.searched = size;
    const std::size_t boundary = last_boundary(body.data(), from, size, progress.window);
    if (boundary == kNone) return {};
    Context ctx{body.data(), boundary + 1, kNoRecord, &error};
    const WindowResult window =
        parse_window(parser, body, progress.window, boundary + 1, true, out, progress.records, ctx);
    // Not an error yet: the boundary may have been a guess that the bytes around it fooled. The rest
    // of the body is parsed whole at the end, and its errors reported then.
    if (window.failed) {
      progress.deferred = true;
      return {};
    }
    progress.records += window.records;
    progress.window = boundary;
    return {};
  }

  Context ctx{body.data(), size, kNoRecord, &error};
  if (body.data() == nullptr) return document_error(ctx, simdjson::EMPTY);  // nothing ever reserved: no byte
  const WindowResult window = parse_window(parser, body, progress.window, size, false, out, progress.records, ctx);
  if (window.document != simdjson::SUCCESS) {
    // Only now is the body back as it arrived: the splitter can name the record that is wrong. Where
    // it finds nothing (an error inside a string: bad UTF-8, a control byte), it blames byte 0, which
    // an early window parsed: say which records the error is in instead.
    auto named = document_error(ctx, window.document);
    if (named.error().offset != 0 || progress.window == 0) return named;
    ctx.record = progress.records;
    return make_error(ctx, {}, window.document, progress.window, "in this record or one after it, from the ','");
  }
  if (window.failed) return std::unexpected(std::move(error));
  progress.records += window.records;
  progress.window = size;
  progress.searched = size;
  trim(out, progress.records);
  return {};
}

}  // namespace

inline namespace RINGLAB_JSON_PARSER_ABI {

Status parse_weather_arriving(Parser& parser, base::PaddedBuffer& body, ArrivingArray& progress,
                              std::pmr::vector<WeatherForecast>& out, Arrival arrival) {
  return parse_arriving(parser, body, progress, out, arrival);
}
Status parse_repos_arriving(Parser& parser, base::PaddedBuffer& body, ArrivingArray& progress,
                            std::pmr::vector<Repository>& out, Arrival arrival) {
  return parse_arriving(parser, body, progress, out, arrival);
}
Status parse_github_arriving(Parser& parser, base::PaddedBuffer& body, ArrivingArray& progress,
                             std::pmr::vector<GithubRepository>& out, Arrival arrival) {
  return parse_arriving(parser, body, progress, out, arrival);
}
Status parse_profiles_arriving(Parser& parser, base::PaddedBuffer& body, ArrivingArray& progress,
                          std::pmr::vector<ProfileStars>& out, Arrival arrival) {
  return parse_arriving(parser, body, progress, out, arrival);
}

}  // inline namespace RINGLAB_JSON_PARSER_ABI
}  // namespace ringlab::json
