#pragma once
// Deserialization of the three payloads with simdjson On-Demand.
//
// Bodies: a JSON array of records (/weather, /repos, /github), NDJSON (one record per line, parsed with
// simdjson's iterate_many), an array body still arriving (the records complete so far, one document per
// call; or its pieces, scattered in memory, each parsed where it lies), or one record of an array body
// at a time (RecordSplitter). Every body must be padded: simdjson reads up to SIMDJSON_PADDING bytes
// past the end, so the view's capacity() must exceed its size() by that much (else
// INSUFFICIENT_PADDING). base::PaddedBuffer always is; padded_view() makes the simdjson view of one.
//
// Records: keys may come in any order; unknown keys are skipped; a key given twice counts with its last
// value; a field missing from a record is an error. Keys are matched on their raw bytes, so a key
// spelled with an escape ("d\u0061te") counts as unknown, as with simdjson's find_field. Integers must
// fit the field (temperatureC in int32). homepage, language and license may be null, and so may a github
// record's description.
//
// Three fields (jos's Version 8): GithubStars (and GithubStarsView) read from a /github body the
// keys stargazers_count, name and url of each record; the other 19 keys count as unknown, so On-Demand
// skips their values without converting them (their text is still validated as JSON). Missing one of
// the three is an error as above. A /repos body has the same three keys at the top level of its records
// and parses too (owner, topics and license skipped whole).
//
// Outputs: each parse fills `out` from its start, overwriting the records already there in place (so
// their strings' capacity is reused), and erases the ones left over. A fresh vector behaves the obvious
// way. On error `out` is valid but its contents are unspecified. Owning records take their memory from
// out's allocator (models.hpp).
//
// Views (WeatherView and the other *View records) point into the body, never into the parser: they are valid
// while the body is alive and unchanged, and the parser may be reused at once. They take the body as a
// PaddedBody, which cannot be made from a temporary buffer: parsing views out of a temporary does not
// compile (as simdjson deletes iterate(padded_string&&); tests/json/CMakeLists.txt proves it).
//
// Errors (error.hpp) name the record, the field and the byte offset in the body. The parser is the
// caller's: one parser per thread, reused across bodies so that its buffers are allocated once (it grows
// to the largest body it has seen).
#include <concepts>
#include <cstddef>
#include <memory_resource>
#include <span>
#include <type_traits>
#include <vector>

#include <simdjson.h>

#include "ringlab/json/error.hpp"
#include "ringlab/json/profiles.hpp"
#include "ringlab/json/models.hpp"
#include "ringlab/json/record_splitter.hpp"
#include "ringlab/base/padded_buffer.hpp"

// simdjson's parser has a different layout with and without SIMDJSON_THREADS_ENABLED (pkg-config
// passes it; ringlab::json hands it on). A caller compiled the other way would corrupt memory; in this
// inline namespace it fails to link instead. (The kernel, picked by RINGLAB_SIMD, is already part of
// the parser's type: simdjson::haswell::ondemand::parser.)
#if SIMDJSON_THREADS_ENABLED
#define RINGLAB_JSON_PARSER_ABI parser_abi_threads
#else
#define RINGLAB_JSON_PARSER_ABI parser_abi_no_threads
#endif

namespace ringlab::json {

static_assert(base::kPadding >= simdjson::SIMDJSON_PADDING,
              "base::PaddedBuffer must leave at least the padding simdjson reads past the end");

// The default simdjson iterate_many window: an NDJSON record longer than this fails with CAPACITY.
inline constexpr std::size_t kNdjsonWindowBytes = std::size_t{1} << 20;

// A simdjson view of a PaddedBuffer's bytes; its capacity counts the buffer's padding.
[[nodiscard]] simdjson::padded_string_view padded_view(const base::PaddedBuffer& body) noexcept;
simdjson::padded_string_view padded_view(const base::PaddedBuffer&& body) = delete;  // would dangle

// A padded body that outlives the views parsed from it. Made from a PaddedBuffer or a padded_string
// lvalue, never from a temporary one; from a padded_string_view, whose owner the caller vouches for.
class PaddedBody {
 public:
  PaddedBody(const base::PaddedBuffer& body) noexcept : view_(padded_view(body)) {}  // NOLINT: implicit
  PaddedBody(const base::PaddedBuffer&& body) = delete;
  PaddedBody(const simdjson::padded_string& body) noexcept : view_(body) {}  // NOLINT: implicit
  PaddedBody(const simdjson::padded_string&& body) = delete;
  PaddedBody(simdjson::padded_string_view body) noexcept : view_(body) {}  // NOLINT: implicit

  [[nodiscard]] simdjson::padded_string_view view() const noexcept { return view_; }

 private:
  simdjson::padded_string_view view_;
};

using Parser = simdjson::ondemand::parser;

inline namespace RINGLAB_JSON_PARSER_ABI {

// --- The record types -------------------------------------------------------------------------------
// Every parse is one function template per form of body, its record type taken from `out`: owning
// records (models.hpp, profiles.hpp) or their views. Views take the body as a PaddedBody (above).
template <class R, class... Of>
concept one_of_types = (std::same_as<R, Of> || ...);
template <class R>
concept OwningRecord = one_of_types<R, WeatherForecast, Repository, GithubRepository, GithubStars, ProfileStars>;
template <class R>
concept ViewRecord =
    one_of_types<R, WeatherView, RepositoryView, GithubRepositoryView, GithubStarsView, ProfileStarsView>;
template <class R>
concept ArrayRecord = OwningRecord<R> || ViewRecord<R>;
// The body a parse into R takes: views need one that outlives them.
template <ArrayRecord R>
using BodyFor = std::conditional_t<ViewRecord<R>, PaddedBody, simdjson::padded_string_view>;

// --- JSON array bodies -----------------------------------------------------------------------------
// WeatherForecast from /weather, Repository from /repos, GithubRepository from /github, ProfileStars
// from /profiles (jos's DTO, profiles.hpp: name, url and stars of each record; the other 18 keys, tags,
// the floats and the rest, count as unknown and are skipped unconverted), GithubStars the three fields
// above; each in its owning or its view form.
template <ArrayRecord R>
[[nodiscard]] Status parse_array(Parser& parser, BodyFor<R> body, std::pmr::vector<R>& out);

// --- NDJSON bodies ---------------------------------------------------------------------------------
// `window_bytes` is simdjson's batch size: the longest record it can hold. These turn the parser's
// `threaded` option off, so that no helper thread indexes the next window behind the caller's back.
template <ArrayRecord R>
[[nodiscard]] Status parse_ndjson(Parser& parser, BodyFor<R> body, std::pmr::vector<R>& out,
                                  std::size_t window_bytes = kNdjsonWindowBytes);

// --- An array body while it arrives (one document per receive) --------------------------------------
// For a body still arriving: the records complete in the bytes received so far are parsed as one
// document, not one document each (simdjson's set-up per document, about 90 ns, doubles the cost of a
// 77-byte weather record), and nothing scans the bytes but simdjson. Each call with Arrival::partial
// looks back from the end of what has arrived for the last record boundary, a ',' with '}' before it
// and '{' after it (whitespace allowed between), and parses the window from the previous boundary (or
// the body's start) to it as one array: its first byte is written as '[' and the boundary as ']' while
// simdjson reads them, then both are put back. A record is thus parsed once the '{' after it is in;
// the last one at Arrival::complete, which parses the rest of the body with the array's own ']'.
//
// Strictness: as parse_array() over the whole body, with the same errors (record
// index counted from the body's first record, byte offsets from the body's start). A boundary found
// this way is only a guess (the bytes could sit inside a string, or inside a record's own array of
// objects); the window's parse checks it: strings are tracked from a point known to be outside any,
// and the window's ']' must close its '['. A window that does not parse is no error yet: the early
// parses stop for this body and Arrival::complete parses everything from the last good boundary, and
// reports the error if the bytes are wrong. So a bad body is reported when it ends, never early.
//
// Records land in `out` from slot 0 as with the whole-body parses (slots overwritten in place, new ones
// appended); the records of one call are out[records before it, progress.records). Complete trims
// `out` to the body's records. Owning records only: they hold no pointer into the body, which the
// caller may keep receiving into (and which may move, offsets being kept, never pointers).
//
// The body: the bytes received so far, padded (PaddedBuffer). The calls write to it as said above, and
// Arrival::complete also writes one byte past its end (in the spare room or the padding, so that
// simdjson meets a byte that stops it there on a bad body), and put every byte back before returning:
// nothing may read or receive into the buffer during a call. Threads: the parser's rule.
enum class Arrival {
  partial,   // more bytes may follow: parse the records known complete
  complete,  // the body is whole: parse the rest, check the array is closed and nothing follows it
};

// Where the parse of one arriving body stands. Value-initialized at the start of each body; written
// by the calls only.
struct ArrivingArray {
  std::size_t records = 0;   // records parsed so far: out[0, records)
  std::size_t window = 0;    // where the next window starts: 0, or the ',' after the last record parsed
  std::size_t searched = 0;  // body bytes already searched for a boundary
  bool deferred = false;     // an early window did not parse: the rest waits for Arrival::complete
};

template <OwningRecord R>
[[nodiscard]] Status parse_arriving(Parser& parser, base::PaddedBuffer& body, ArrivingArray& progress,
                                    std::pmr::vector<R>& out, Arrival arrival);

// --- An array body arriving in scattered pieces (one document per piece) ---------------------------
// For a body whose pieces do not lie together in memory: an io_uring incremental provided-buffer ring
// shared by several connections lands each receive where the ring's last one, for any connection, left
// off. The piecewise sibling of parse_arriving: each piece is parsed where it lies, and only the bytes
// of a record cut between two pieces are copied, into `carry`, the caller's buffer.
//
// Call once per piece in body order with Arrival::partial, and last with Arrival::complete (its piece
// may be empty: at the end of the body the caller may call with an empty span). A call with a piece:
//   1. deferred (see below): the piece is appended to the carry; nothing is parsed before the end.
//   2. The carry not empty (it holds a record cut at the piece's start): the first record boundary
//      (',' with '}' before it and '{' after it, whitespace allowed between, as parse_arriving finds
//      them) whose ',' and '{' lie in the piece (its '}' may end the carry) closes the cut record: the
//      piece up to that ',' is appended and the carry parsed as one window (its first byte lent '['
//      unless it is the body's start, its last, the ',', lent ']'). No such boundary: the whole piece
//      is appended, and that is all.
//   3. In place: from that ',' (or the piece's start, for the body's first piece) to the piece's last
//      boundary, one window parsed where it lies, brackets lent the same way; the piece from that
//      last ',' to its end (or from the window's start, when there is no later boundary) is appended.
//   4. Arrival::complete: the carry is parsed as the final window, to its end (the array's own ']'),
//      then checked as the whole-body parse checks: the array closed and nothing after it. When the
//      complete call brings the body's last piece and the carry is empty once step 2 is done (the piece
//      closed any record cut before it), the piece's rest, from that boundary (or the body's start) to
//      its end, is that final window instead, parsed where it lies, if its last byte other than
//      whitespace is ']'; nothing is then written past the piece, and a rest that does not parse there
//      (a bad body) takes the carry's way, which reports the error.
// So one piece holding the whole body copies nothing when it comes with Arrival::complete, and the tail
// from its last boundary ',' on (the last record, the ',' before it and the ']') when the body's end comes
// as an empty call after it; a cut inside record k, or just after its '}', copies record k and
// the ',' on each side of it; a cut between a ',' and the '{' after it copies the records on both
// sides of the cut (the ',' is no boundary until its '{' is seen, and a window cannot begin at a '{').
// Pieces too short to hold a boundary's ',' and '{' together (one byte each) copy the whole body.
//
// Strictness and errors: as parse_arriving, whose windows these are. A window that does not parse
// before Arrival::complete is no error yet (its boundary may have been a guess that bytes inside a
// string fooled): `deferred` is set, everything from that window's start on goes to the carry, and
// Arrival::complete parses the carry whole, reporting the error if the bytes are wrong. A bad body is
// thus reported when it ends, never early. Errors are the whole-body parse's (record index counted from
// the body's first record, byte offsets from the body's start), with one exception shared with
// parse_arriving: an error simdjson finds while indexing the final window (bad UTF-8, a control byte
// in a string) that the record splitter cannot place is said to be "in this record or one after it",
// naming the first record of the final window and the ',' it starts at, where the whole-body parse
// names the document at byte 0. A body with no byte at all fails at Arrival::complete with EMPTY.
//
// The piece: piece.size() bytes, followed in memory by at least base::kPadding READABLE bytes that the
// parse may load (simdjson reads blocks past a window's end) but never interprets; they may be another
// connection's bytes or garbage. The piece's own bytes are written during the call (brackets lent) and
// are exactly as they were when it returns; nothing outside them is ever written. Nothing points into
// the piece after the call (owning records only), so the caller may reuse its memory at once, unless the
// call left its rest in place (Tail::in_place, below): progress.tail points there until the next call.
//
// The carry: kept by the caller across bodies, so that its capacity is reused; the first call of a body
// (progress.body_bytes == 0) clears it. Between calls it holds body[progress.carry_offset,
// progress.body_bytes): the bytes from the last boundary parsed (or from the first window that did not
// parse) to the end of the last piece; Arrival::complete also lends a space to the byte after them (in
// the carry's spare room or padding), as parse_arriving does after its body. Records land in `out`
// from slot 0 as with parse_arriving; Arrival::complete trims `out` to the body's records. Threads:
// the parser's rule.
//
// A shared `out`: several bodies parsed at once (each with its own progress and carry) may land their
// records in one vector, each taking a call's records, out[records before it, progress.records), before
// the next call on any of them. Record n of a body always lands at out[n], whatever the other bodies
// left there: a body whose end trimmed `out` below another's records makes the next call of that other
// body grow it back first (constructing the records between, which allocates), and no trim lengthens
// the vector.
//
// Where the parse of one body arriving in scattered pieces stands. Value-initialized at the start of
// each body; written by the calls only.
struct PieceArray {
  std::size_t records = 0;       // records parsed so far: out[0, records)
  std::size_t body_bytes = 0;    // body bytes given so far (the body offset of the next piece)
  std::size_t carry_offset = 0;  // body offset of carry's first byte (or of the tail's, when it is left in place)
  std::size_t copied_bytes = 0;  // body bytes copied into the carry for this body
  char* tail = nullptr;          // Tail::in_place: body[carry_offset, body_bytes), left where the last piece lay
  bool deferred = false;         // a window did not parse: every later byte goes to the carry, parsed whole at the end
  bool finished = false;         // Arrival::complete parsed the last piece's tail where it lies (step 4 in place)
};

// Where a call leaves the rest of its piece (step 3's bytes from the last boundary on).
//   carried   appended to the carry, as above: the caller may reuse the piece's memory when the call returns.
//   in_place  left where it lies (progress.tail): the caller keeps those bytes readable, unchanged and
//             writable, with base::kPadding readable bytes after them, until the next call on this body or
//             carry_tail(). A next piece that begins right after them in memory (piece.data() == tail +
//             their length: the same bytes before it, which a ring mapped twice gives across its end) is
//             parsed with them as one piece, so a record cut between the two is parsed where it lies and
//             nothing is copied; any other next piece first has them appended to the carry (copied then, as
//             `carried` would have at the cut). The one-piece case above holds either way.
enum class Tail {
  carried,
  in_place,
};

template <OwningRecord R>
[[nodiscard]] Status parse_piece(Parser& parser, base::PaddedBuffer& carry, PieceArray& progress, std::span<char> piece,
                                 std::pmr::vector<R>& out, Arrival arrival, Tail tail = Tail::carried);

// The bytes of the tail left in place (Tail::in_place): body[carry_offset, body_bytes) at progress.tail;
// 0 when there is none.
[[nodiscard]] inline std::size_t tail_bytes(const PieceArray& progress) noexcept {
  return progress.tail == nullptr ? 0 : progress.body_bytes - progress.carry_offset;
}

// Appends a tail left in place (Tail::in_place) to the carry, counted in copied_bytes, so that the caller
// may reuse its memory; nothing when there is none.
void carry_tail(base::PaddedBuffer& carry, PieceArray& progress);
// The tail left in place is to be read `by` bytes further on from now: the caller's memory holds the same
// bytes there too (a ring mapped twice), which the next piece follows. Nothing when there is none.
void move_tail(PieceArray& progress, std::ptrdiff_t by) noexcept;

// --- One record of an array body (RecordSplitter) --------------------------------------------------
// `body` is the body received so far; `record` a span the splitter found in it. Error offsets count
// from the start of the body. A view parsed here lives until the buffer holding the body moves (a
// PaddedBuffer that grows past its capacity moves), so take what it holds before receiving more.
// Each call runs simdjson on the record alone: its per-document set-up, paid per record, makes this
// about three times slower than one parse of the whole body (10,000 weather records: 1.4 ms against
// 0.43 ms here); what it buys is starting before the last byte has arrived.
template <ArrayRecord R>
[[nodiscard]] Status parse_record(Parser& parser, BodyFor<R> body, RecordSpan record, R& out);

// Each form's specialization for each record type, defined in json/src with the readers they inline.
// Specializations, not instantiations of a template definition: GCC emits an instantiation in a COMDAT
// group, and neither it nor the readers it alone calls then get their cold paths split off, which made
// views 5.8 % and the parse floor 2.9 % slower at 10,000 records
// (docs/experiments/json-parse-explicit-instantiation.md).
#define RINGLAB_JSON_WHOLE_BODY_FORMS(R)                                                 \
  template <> Status parse_array<R>(Parser&, BodyFor<R>, std::pmr::vector<R>&);               \
  template <> Status parse_ndjson<R>(Parser&, BodyFor<R>, std::pmr::vector<R>&, std::size_t); \
  template <> Status parse_record<R>(Parser&, BodyFor<R>, RecordSpan, R&);
#define RINGLAB_JSON_ARRIVING_FORMS(R)                                                                      \
  template <> Status parse_arriving<R>(Parser&, base::PaddedBuffer&, ArrivingArray&, std::pmr::vector<R>&, \
                                       Arrival);                                                            \
  template <> Status parse_piece<R>(Parser&, base::PaddedBuffer&, PieceArray&, std::span<char>,            \
                                    std::pmr::vector<R>&, Arrival, Tail);
RINGLAB_JSON_WHOLE_BODY_FORMS(WeatherForecast) RINGLAB_JSON_WHOLE_BODY_FORMS(WeatherView)
RINGLAB_JSON_WHOLE_BODY_FORMS(Repository) RINGLAB_JSON_WHOLE_BODY_FORMS(RepositoryView)
RINGLAB_JSON_WHOLE_BODY_FORMS(GithubRepository) RINGLAB_JSON_WHOLE_BODY_FORMS(GithubRepositoryView)
RINGLAB_JSON_WHOLE_BODY_FORMS(GithubStars) RINGLAB_JSON_WHOLE_BODY_FORMS(GithubStarsView)
RINGLAB_JSON_WHOLE_BODY_FORMS(ProfileStars) RINGLAB_JSON_WHOLE_BODY_FORMS(ProfileStarsView)
RINGLAB_JSON_ARRIVING_FORMS(WeatherForecast) RINGLAB_JSON_ARRIVING_FORMS(Repository)
RINGLAB_JSON_ARRIVING_FORMS(GithubRepository) RINGLAB_JSON_ARRIVING_FORMS(GithubStars)
RINGLAB_JSON_ARRIVING_FORMS(ProfileStars)
#undef RINGLAB_JSON_WHOLE_BODY_FORMS
#undef RINGLAB_JSON_ARRIVING_FORMS

}  // inline namespace RINGLAB_JSON_PARSER_ABI
}  // namespace ringlab::json
