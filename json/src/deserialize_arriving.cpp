// An array body parsed while it arrives, one document per call (deserialize.hpp, parse_arriving), and
// its sibling for a body arriving in pieces scattered in memory (parse_piece): finding record
// boundaries in what has arrived, lending a window its brackets, and reading the window's records with
// the same readers as the whole-body parse. A window is bytes in one place: a contiguous body's, a
// piece's or the carry's; the two parses differ only in where they take their windows.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <span>
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
// first stage), whose text needs the body as it arrived (built once the lent bytes are back), or an
// error in a record (or no array where one should start), left in the Error.
struct WindowResult {
  std::size_t records = 0;
  error_code document = simdjson::SUCCESS;
  bool failed = false;
};

// The bytes simdjson reads as one array: `size` bytes at `bytes`, `readable` bytes loadable from
// `bytes` (what follows the window and the padding after it included), the first at body offset
// `offset`. A window past the body's start begins at a boundary ',': its first byte is lent '['.
struct Window {
  char* bytes = nullptr;
  std::size_t size = 0;
  std::size_t readable = 0;
  std::size_t offset = 0;
};

// body[begin, end) of a body that lies in one PaddedBuffer from body offset `offset` on.
Window window_of(base::PaddedBuffer& body, std::size_t begin, std::size_t end, std::size_t offset) noexcept {
  return Window{body.data() + begin, end - begin, body.capacity() + base::kPadding - begin, offset + begin};
}

// piece[begin, end) of a piece that starts at body offset `at`: loadable to the piece's end and the
// base::kPadding readable bytes after it (parse_piece's contract).
Window window_in(std::span<char> piece, std::size_t begin, std::size_t end, std::size_t at) noexcept {
  return Window{piece.data() + begin, end - begin, piece.size() - begin + base::kPadding, at + begin};
}

// The errors of a window are built with offsets from its first byte (what simdjson's pointers give);
// the body's count `by` bytes more.
[[gnu::cold, gnu::noinline]] void rebase(Error& error, std::size_t by) {
  if (error.offset == kNoOffset || by == 0) return;
  const std::string said = " at byte " + std::to_string(error.offset);
  if (error.message.ends_with(said)) error.message.resize(error.message.size() - said.size());
  error.offset += by;
  error.message += " at byte " + std::to_string(error.offset);
}

// Where a window ends.
enum class WindowEnd {
  boundary,  // at a boundary ',', lent ']'
  body,      // at the body's end; the byte after it is lent a space, so that simdjson, on a bad body, stops
             // there rather than reading on into bytes a longer earlier body left
  in_place,  // at the body's end, its last byte other than whitespace the array's ']', inside a piece that
             // may not be written past: nothing lent; simdjson then stops at that ']' on a good body, and a
             // bad one fails the window, which the caller parses again as a `body` window
};

// Parses the window with its first byte lent '[' when it starts at a boundary and its end as `end` says.
// Errors' offsets count from the window's first byte.
template <class Record>
WindowResult parse_lent_window(Parser& parser, const Window& window, WindowEnd end, std::pmr::vector<Record>& out,
                               std::size_t first, Error& error) {
  WindowResult result;
  Context ctx{window.bytes, window.size, kNoRecord, &error};
  LentBytes lent(window.bytes);
  if (window.offset > 0) lent.lend(0, '[');
  if (end == WindowEnd::boundary) lent.lend(window.size - 1, ']');
  if (end == WindowEnd::body) lent.lend(window.size, ' ');
  const simdjson::padded_string_view view(window.bytes, window.size, window.readable);
  od::document doc;
  od::array array;
  error_code e = parser.iterate(view).get(doc);
  if (!e) e = doc.get_array().get(array);
  if (e == simdjson::INCORRECT_TYPE) {
    result.failed = true;
    error = build_error(ctx, {}, e, offset_of(doc, ctx), "the body is not an array");
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
    error = build_error(ctx, {}, simdjson::TRAILING_CONTENT, static_cast<std::size_t>(rest - ctx.body),
                        "after the array");
  }
  return result;
}

// Parses one window into out[first, ...): parse_lent_window, with its errors' offsets moved to the
// body's.
template <class Record>
WindowResult parse_window(Parser& parser, const Window& window, WindowEnd end, std::pmr::vector<Record>& out,
                          std::size_t first, Error& error) {
  const WindowResult result = parse_lent_window(parser, window, end, out, first, error);
  if (result.failed && result.document == simdjson::SUCCESS) rebase(error, window.offset);
  return result;
}

// A document error (simdjson's first stage) in the final window, which starts at body offset `window`
// after `records` records; `body` is the body as it arrived. The splitter can name the record that is
// wrong. Where it finds nothing (an error inside a string: bad UTF-8, a control byte), it blames byte
// 0, which an early window parsed: say which records the error is in instead.
[[gnu::cold, gnu::noinline]] std::unexpected<Error> final_document_error(const Context& body, error_code code,
                                                                         std::size_t records, std::size_t window) {
  auto named = document_error(body, code);
  if (named.error().offset != 0 || window == 0) return named;
  Context ctx = body;
  ctx.record = records;
  return make_error(ctx, {}, code, window, "in this record or one after it, from the ','");
}

template <class Record>
Status read_arriving(Parser& parser, base::PaddedBuffer& body, ArrivingArray& progress, std::pmr::vector<Record>& out,
                      Arrival arrival) {
  const std::size_t size = body.size();
  Error error;
  if (arrival == Arrival::partial) {
    if (progress.deferred || size <= progress.searched) return {};
    const std::size_t from = std::max(progress.searched, progress.window + 1);
    progress.searched = size;
    const std::size_t boundary = last_boundary(body.data(), from, size, progress.window);
    if (boundary == kNone) return {};
    const WindowResult window =
        parse_window(parser, window_of(body, progress.window, boundary + 1, 0), WindowEnd::boundary, out,
                     progress.records, error);
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
  const WindowResult window =
      parse_window(parser, window_of(body, progress.window, size, 0), WindowEnd::body, out, progress.records, error);
  // Only now is the body back as it arrived, for the splitter.
  if (window.document != simdjson::SUCCESS) {
    return final_document_error(ctx, window.document, progress.records, progress.window);
  }
  if (window.failed) return std::unexpected(std::move(error));
  progress.records += window.records;
  progress.window = size;
  progress.searched = size;
  trim(out, progress.records);
  return {};
}

// --- pieces ------------------------------------------------------------------------------------------

// The first record boundary whose ',' and '{' lie in piece[0, size), with its '}' before the ',' in the
// piece or as the carry's last byte other than whitespace; kNone if there is none. The carry's first
// byte is where its window starts ('[' or a boundary ','), so a '}' there does not count (as `floor`
// in last_boundary). Guesses, checked by the window parse, as last_boundary's.
std::size_t first_boundary(const base::PaddedBuffer& carry, const char* piece, std::size_t size) noexcept {
  std::size_t from = 0;
  while (from < size) {
    const void* found = std::memchr(piece + from, '{', size - from);
    if (found == nullptr) return kNone;
    const auto open = static_cast<std::size_t>(static_cast<const char*>(found) - piece);
    from = open + 1;
    const std::size_t comma = last_before(piece, open);
    if (comma == kNone || piece[comma] != ',') continue;  // none in the piece: a window cannot start at '{'
    const std::size_t close = last_before(piece, comma);
    if (close != kNone) {
      if (piece[close] == '}') return comma;
      continue;
    }
    const std::size_t carried = last_before(carry.data(), carry.size());
    if (carried != kNone && carried > 0 && carry.data()[carried] == '}') return comma;
  }
  return kNone;
}

void carry_over(base::PaddedBuffer& carry, PieceArray& progress, std::span<const char> bytes) {
  carry.append(std::string_view(bytes.data(), bytes.size()));
  progress.copied_bytes += bytes.size();
}

// Parses a window before the body's end: its records count in progress; a window that does not parse
// sets `deferred` (no error yet: the boundary may have been a guess that the bytes fooled). Returns
// whether it parsed.
template <class Record>
bool parse_early(Parser& parser, const Window& window, PieceArray& progress, std::pmr::vector<Record>& out) {
  Error error;
  const WindowResult result = parse_window(parser, window, WindowEnd::boundary, out, progress.records, error);
  if (result.failed) {
    progress.deferred = true;
    return false;
  }
  progress.records += result.records;
  return true;
}

// The body's last piece, from `start` (the body's start or a boundary ',') to its end, parsed where it lies
// as the final window, when it ends with the array's ']' (whitespace after it allowed); true when it
// parsed. Nothing is written past the piece. False leaves everything as it was: the records it wrote
// are overwritten by the carry's parse that follows.
template <class Record>
bool finish_in_place(Parser& parser, PieceArray& progress, std::span<char> piece, std::size_t start, std::size_t at,
                     std::pmr::vector<Record>& out) {
  const std::size_t last = last_before(piece.data(), piece.size());
  if (last == kNone || last < start || piece[last] != ']') return false;
  Error error;
  const WindowResult result =
      parse_window(parser, window_in(piece, start, piece.size(), at), WindowEnd::in_place, out, progress.records, error);
  if (result.failed) return false;
  progress.records += result.records;
  progress.finished = true;
  return true;
}

// Steps 1 to 3 of the section's comment for one non-empty piece (and step 4 in place for the body's last
// piece when it can be); afterwards the carry holds body[carry_offset, body_bytes), or the body is finished.
template <class Record>
void take_piece(Parser& parser, base::PaddedBuffer& carry, PieceArray& progress, std::span<char> piece,
                std::pmr::vector<Record>& out, Arrival arrival, Tail tail) {
  std::size_t at = progress.body_bytes;  // the piece's body offset
  if (progress.tail != nullptr && progress.tail + tail_bytes(progress) == piece.data()) {
    // The piece follows the tail left in place: one piece from the tail's first byte (the body's start or
    // a boundary ','), so the record cut between them is parsed where it lies.
    piece = std::span<char>(progress.tail, tail_bytes(progress) + piece.size());
    at = progress.carry_offset;
    progress.tail = nullptr;
  }
  carry_tail(carry, progress);  // a tail the piece does not follow in memory: copied now
  progress.body_bytes = at + piece.size();
  std::size_t start = 0;  // where the in-place window starts: the body's start or a boundary ','
  if (!progress.deferred && carry.size() > 0) {
    const std::size_t comma = first_boundary(carry, piece.data(), piece.size());
    if (comma == kNone) return carry_over(carry, progress, piece);
    carry_over(carry, progress, piece.first(comma + 1));
    if (!parse_early(parser, window_of(carry, 0, carry.size(), progress.carry_offset), progress, out)) {
      return carry_over(carry, progress, piece.subspan(comma + 1));
    }
    carry.clear();
    start = comma;
  }
  if (progress.deferred) return carry_over(carry, progress, piece);
  if (arrival == Arrival::complete && finish_in_place(parser, progress, piece, start, at, out)) return;
  const std::size_t end = last_boundary(piece.data(), start + 1, piece.size(), start);
  if (end != kNone) {
    if (parse_early(parser, window_in(piece, start, end + 1, at), progress, out)) start = end;
  }
  progress.carry_offset = at + start;
  if (tail == Tail::in_place) {
    progress.tail = piece.data() + start;
    return;
  }
  carry_over(carry, progress, piece.subspan(start));
}

// A document error in the carry's final window. The splitter, to name the record as it would in the
// whole body, needs the bytes before the carry, which are gone; they held `records` records that
// parsed, so stand-ins of the same count and length ("[{},{}" and spaces: 3 bytes a record at most,
// fewer than the real ones) put it where the real ones would, at the carry's first byte.
[[gnu::cold, gnu::noinline]] std::unexpected<Error> carried_document_error(const base::PaddedBuffer& carry,
                                                                           const PieceArray& progress,
                                                                           error_code code) {
  std::string body;
  body.reserve(progress.carry_offset + carry.size());
  if (progress.carry_offset > 0) {
    body += '[';
    for (std::size_t i = 0; i < progress.records; ++i) body += i == 0 ? "{}" : ",{}";
    body.resize(progress.carry_offset, ' ');
  }
  body += carry.view();
  Error error;
  const Context ctx{body.data(), body.size(), kNoRecord, &error};
  return final_document_error(ctx, code, progress.records, progress.carry_offset);
}

// Step 4: the carry, to the body's end, as the final window.
template <class Record>
Status finish_pieces(Parser& parser, base::PaddedBuffer& carry, PieceArray& progress, std::pmr::vector<Record>& out) {
  Error error;
  if (carry.size() == 0) {  // the carry is empty only while no byte has come
    const Context ctx{carry.data(), 0, kNoRecord, &error};
    return document_error(ctx, simdjson::EMPTY);
  }
  const WindowResult window =
      parse_window(parser, window_of(carry, 0, carry.size(), progress.carry_offset), WindowEnd::body, out,
                   progress.records, error);
  if (window.document != simdjson::SUCCESS) return carried_document_error(carry, progress, window.document);
  if (window.failed) return std::unexpected(std::move(error));
  progress.records += window.records;
  trim(out, progress.records);
  return {};
}

template <class Record>
Status read_piece(Parser& parser, base::PaddedBuffer& carry, PieceArray& progress, std::span<char> piece,
                  std::pmr::vector<Record>& out, Arrival arrival, Tail tail) {
  if (progress.body_bytes == 0) carry.clear();
  if (!piece.empty()) take_piece(parser, carry, progress, piece, out, arrival, tail);
  if (arrival == Arrival::partial) return {};
  if (progress.tail != nullptr) {
    // The end came as an empty call after a tail left in place: the last piece's rest, where it lies when
    // it can be parsed there (as step 4 in place), else copied and parsed as the carry.
    const std::span<char> rest(progress.tail, tail_bytes(progress));
    if (finish_in_place(parser, progress, rest, 0, progress.carry_offset, out)) progress.tail = nullptr;
    carry_tail(carry, progress);
  }
  if (progress.finished) {
    trim(out, progress.records);
    return {};
  }
  return finish_pieces(parser, carry, progress, out);
}

}  // namespace

inline namespace RINGLAB_JSON_PARSER_ABI {

// The specializations deserialize.hpp declares, one owning record type per line.
#define RINGLAB_JSON_ARRIVING_FORMS(R)                                                                     \
  template <>                                                                                              \
  Status parse_arriving<R>(Parser & parser, base::PaddedBuffer & body, ArrivingArray & progress,           \
                           std::pmr::vector<R> & out, Arrival arrival) {                                   \
    return read_arriving(parser, body, progress, out, arrival);                                            \
  }                                                                                                        \
  template <>                                                                                              \
  Status parse_piece<R>(Parser & parser, base::PaddedBuffer & carry, PieceArray & progress,                \
                        std::span<char> piece, std::pmr::vector<R> & out, Arrival arrival, Tail tail) {    \
    return read_piece(parser, carry, progress, piece, out, arrival, tail);                                 \
  }
RINGLAB_JSON_ARRIVING_FORMS(WeatherForecast)
RINGLAB_JSON_ARRIVING_FORMS(Repository)
RINGLAB_JSON_ARRIVING_FORMS(GithubRepository)
RINGLAB_JSON_ARRIVING_FORMS(GithubStars)
RINGLAB_JSON_ARRIVING_FORMS(ProfileStars)
#undef RINGLAB_JSON_ARRIVING_FORMS

void carry_tail(base::PaddedBuffer& carry, PieceArray& progress) {
  if (progress.tail == nullptr) return;
  const std::span<char> tail(progress.tail, tail_bytes(progress));
  progress.tail = nullptr;
  carry_over(carry, progress, tail);
}

void move_tail(PieceArray& progress, std::ptrdiff_t by) noexcept {
  if (progress.tail != nullptr) progress.tail += by;
}

}  // inline namespace RINGLAB_JSON_PARSER_ABI
}  // namespace ringlab::json
