#pragma once
// The state machine behind ResponseParser and RequestParser (parser.hpp): one llhttp parser, the
// head it collects as views, the scratch storage that joins split fields, and the checks llhttp 8.1
// does not make. Its member functions are defined, inline, in parser_callbacks.hpp (the llhttp
// callbacks), parser_fields.hpp (message state and scratch storage) and parser_checks.hpp (framing
// checks, limits and errors). Not thread-safe: one Machine per parser, used by one thread at a time.
//
// Private to http/src and included by parser.cpp alone. Everything here is in an unnamed namespace,
// local to that one translation unit, so that the compiler may inline any of it into its callers
// there (feed() and the callbacks run for every byte the server and the client parse).
#include <llhttp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "parser_line_check.hpp"
#include "ringlab/http/parser.hpp"

namespace ringlab::http {
namespace {

std::string at_byte(uint64_t offset) { return " at byte " + std::to_string(offset); }

// N in its " at byte N" is where the CRLF should have started, whichever of its two bytes is wrong.
constexpr const char* kBadCrlf = "expected CRLF after chunk data";

// Which start-line or header field the latest fragment went to, so the next fragment knows whether
// it continues that field or starts a new header.
enum class Piece : uint8_t { none, start_line, name, value };

// One llhttp parser plus everything ResponseParser and RequestParser share. `Head` picks the
// message direction; the few places that differ use `if constexpr`.
template <class Head>
class Machine {
  using Handler = MessageHandler<Head>;
  static constexpr bool kResponse = std::is_same_v<Head, ResponseHead>;

 public:
  explicit Machine(const ParserLimits& limits)
      : limits_(limits),
        // The scratch is reserved once here; it only grows (rebasing its views) if a head is split
        // in more ways than a typical one, up to the bound explained at scratch_bound().
        scratch_capacity_(std::min<std::size_t>(scratch_bound(), 4096)),
        scratch_(std::make_unique<char[]>(scratch_capacity_)) {
    llhttp_init(&parser_, kResponse ? HTTP_RESPONSE : HTTP_REQUEST, &settings());
    parser_.data = this;
  }

  Result<std::size_t> feed(std::string_view bytes, Handler& handler) {
    if (failed_) return std::unexpected(*failed_);
    if (finished_ && !bytes.empty()) {
      return stick(Error{Errc::malformed, "bytes fed after finish()" + at_byte(offset_), {}});
    }
    if (closed_ && !bytes.empty()) {
      // llhttp's lenient default would parse on; a peer that said "close" has nothing more to say.
      return stick(Error{Errc::malformed, "bytes after a message that closes the connection" + at_byte(offset_), {}});
    }
    handler_ = &handler;
    // A pause means the previous message completed; the next one starts with these bytes.
    if (llhttp_get_errno(&parser_) == HPE_PAUSED) llhttp_resume(&parser_);

    std::size_t consumed = 0;
    while (consumed < bytes.size()) {
      const char* base = bytes.data() + consumed;
      std::size_t slice = bytes.size() - consumed;
      // While the head is incomplete llhttp sees at most the bytes left in the head budget: if the
      // head does not end within them, it is too large, and the limit is exact to the byte.
      const bool in_head = !head_done_;
      if (in_head) slice = std::min(slice, limits_.max_header_bytes - head_bytes_);
      // The CRLF after a chunk's data may have been cut by the previous feed: check its rest here.
      if (const uint64_t crlf_at = offset_ - (2 - crlf_left_); crlf_left_ > 0 && !check_crlf(base, slice)) {
        return stick(Error{Errc::malformed, kBadCrlf + at_byte(crlf_at), {}});
      }
      std::optional<Error> framing_bad;  // found ahead of llhttp: reported once llhttp reached it
      if constexpr (!kResponse) {
        if (auto bad = check_framing_before(base, slice)) {
          // Errors are reported in stream order whatever the cut: llhttp first sees the bytes
          // before the offending one, and its own error there (if any) wins.
          framing_bad = std::move(bad);
          slice = static_cast<std::size_t>(*pending_at_ - offset_);
          if (slice == 0) return stick(take_pending_error(std::move(*framing_bad)));
        }
      }
      slice_start_ = base;
      slice_end_ = base + slice;
      overhead_crossed_at_.reset();

      const llhttp_errno_t code = llhttp_execute(&parser_, base, slice);
      if (framing_bad) {
        if (code == HPE_OK) return stick(take_pending_error(std::move(*framing_bad)));
        pending_at_.reset();  // llhttp's error comes first
      }
      if (code == HPE_OK) {
        if constexpr (!kResponse) {
          // The chunk framing of this slice that no chunk data followed yet.
          if (auto bad = check_chunk_framing(slice_end_, false, offset_ + slice)) {
            return stick(take_pending_error(std::move(*bad)));
          }
        }
        consumed += slice;
        offset_ += slice;
        if (in_head && !head_done_) {
          head_bytes_ += slice;
          if (head_bytes_ >= limits_.max_header_bytes) {
            return stick(Error{Errc::header_too_large,
                               "head exceeds max_header_bytes (" + std::to_string(limits_.max_header_bytes) +
                                   ")" + at_byte(offset_),
                               {}});
          }
        }
        continue;
      }

      const char* stop = llhttp_get_error_pos(&parser_);
      const std::size_t used =
          (stop != nullptr && stop >= base && stop <= base + slice) ? static_cast<std::size_t>(stop - base) : slice;
      if (code == HPE_PAUSED) {  // paused by on_message_complete: one whole message consumed
        consumed += used;
        offset_ += used;
        handler_ = nullptr;
        return consumed;
      }
      return stick(stopped(code, base, used));
    }
    handler_ = nullptr;
    return consumed;
  }

  Status finish(Handler& handler) {
    if (failed_) return std::unexpected(*failed_);
    finished_ = true;
    if (!in_message_) return {};  // closed between messages: a clean end
    handler_ = &handler;
    const llhttp_errno_t code = llhttp_finish(&parser_);
    handler_ = nullptr;
    // HPE_PAUSED is our own on_message_complete: the close-delimited body ended with the stream.
    if ((code == HPE_OK || code == HPE_PAUSED) && !in_message_) return {};
    if (pending_) return stick(take_pending(offset_));
    std::string detail = "peer closed the connection";
    if (!head_done_) {
      detail += " in the head, after " + std::to_string(head_bytes_) + " bytes";
    } else if (head_.content_length) {
      detail += " after " + std::to_string(body_bytes_) + " of " + std::to_string(*head_.content_length) +
                " body bytes";
    } else {
      detail += " in a chunked body, after " + std::to_string(body_bytes_) + " body bytes";
    }
    return stick(Error{Errc::truncated, detail + at_byte(offset_), {}});
  }

  void reset() noexcept {
    llhttp_reset(&parser_);
    failed_.reset();
    pending_.reset();
    pending_at_.reset();
    finished_ = false;
    closed_ = false;
    offset_ = 0;
    head_bytes_ = 0;
    lines_.restart();
    framing_ = Framing::head;
    framing_from_ = nullptr;
    clear_message();
  }

  [[nodiscard]] bool in_message() const noexcept { return in_message_; }

  Status detach() {
    if (failed_) return std::unexpected(*failed_);
    if (!in_message_ || head_done_) return {};
    if (!own(start_line())) return scratch_exhausted();
    for (std::size_t i = 0; i < head_.headers.count; ++i) {
      if (!own(head_.headers.items[i].name) || !own(head_.headers.items[i].value)) return scratch_exhausted();
    }
    return {};
  }

  void expect_no_body(bool no_body) noexcept { no_body_expected_ = no_body; }

 private:
  // The error of a feed that llhttp stopped at `base + used` with `code` (not a pause), in stream order
  // whatever the cut. Out of the byte loop's way: reached once per parser, when it fails.
  [[gnu::cold]] Error stopped(llhttp_errno_t code, const char* base, std::size_t used) {
    // llhttp hands a span (a header name or value, a chunk extension, a trailer) to its callback
    // when the span ends or when the fed bytes do, and not at all when it refuses a byte inside it.
    // So the open span's bytes before the refused byte are handed over here, as a cut just before
    // that byte would have: whether they crossed a limit (the header count, the overhead budget)
    // ahead of llhttp's error must not depend on where the feeds were cut. The parser fails either
    // way, so what the callback appends is never read.
    if (code != HPE_USER && !pending_ && parser_._span_pos0 != nullptr && parser_._span_cb0 != nullptr) {
      const char* span = static_cast<const char*>(parser_._span_pos0);
      if (span >= base && span < base + used) {
        using SpanCallback = int (*)(llhttp_t*, const char*, const char*);
        (void)reinterpret_cast<SpanCallback>(parser_._span_cb0)(&parser_, span, base + used);
      }
    }
    if constexpr (!kResponse) {
      // llhttp or a callback refused a byte of the chunk framing: a bad line in the bytes accepted
      // before that one comes first in the stream, so it is the error. Only those bytes: the byte llhttp
      // refused may lie in the next feed, and the answer must not depend on the cut. A crossed
      // overhead budget is an error at the byte that crossed it, so only the bytes before that one.
      std::size_t checked = used;
      if (pending_ && overhead_crossed_at_ && *overhead_crossed_at_ >= offset_ &&
          *overhead_crossed_at_ < offset_ + used) {
        checked = static_cast<std::size_t>(*overhead_crossed_at_ - offset_);
      }
      if (!pending_at_) {  // not an error of the line check itself
        if (auto bad = check_chunk_framing(base + checked, false, offset_ + checked)) {
          pending_.reset();  // a callback's error (a limit, say) at a later byte
          return take_pending_error(std::move(*bad));
        }
      }
    }
    return translate(code, offset_ + used);
  }

  // ---- llhttp callbacks (parser_callbacks.hpp). Span callbacks return 0 or HPE_USER; the others
  // as llhttp_settings_s says.
  static Machine& self(llhttp_t* parser) noexcept { return *static_cast<Machine*>(parser->data); }
  static int on_message_begin(llhttp_t* parser);
  static int on_start_line(llhttp_t* parser, const char* at, std::size_t length);
  static int on_piece_complete(llhttp_t* parser);
  static int on_header_field(llhttp_t* parser, const char* at, std::size_t length);
  static int on_header_field_complete(llhttp_t* parser);
  static int on_header_value(llhttp_t* parser, const char* at, std::size_t length);
  static int on_header_value_complete(llhttp_t* parser);
  static int on_chunk_extension(llhttp_t* parser, const char* at, std::size_t length);
  static int on_chunk_extension_complete(llhttp_t* parser);
  static int on_headers_complete(llhttp_t* parser);
  static int on_chunk_header(llhttp_t* parser);
  static int on_body(llhttp_t* parser, const char* at, std::size_t length);
  static int on_message_complete(llhttp_t* parser);
  static const llhttp_settings_t& settings();

  // ---- message state and scratch storage (parser_fields.hpp)
  std::string_view& start_line() noexcept;
  void clear_message() noexcept;
  [[nodiscard]] bool in_scratch(std::string_view field) const noexcept;
  bool append(std::string_view& field, const char* at, std::size_t length);
  bool own_at_end(std::string_view& field, std::size_t extra);
  bool own(std::string_view& field);
  [[nodiscard]] std::size_t scratch_bound() const noexcept;
  bool reserve(std::size_t more);
  bool grow_scratch(std::size_t needed);
  int fail_scratch();
  Status scratch_exhausted();

  // ---- request framing checks, limits and errors (parser_checks.hpp)
  Error framing_error(LineCheck::Verdict verdict, uint64_t position);
  std::optional<Error> check_framing_before(const char* base, std::size_t slice);
  std::optional<Error> check_chunk_framing(const char* end, bool section, uint64_t end_offset);
  [[nodiscard]] uint64_t offset_of(const char* at) const noexcept;
  int count_overhead(uint64_t at, std::size_t length);
  bool check_crlf(const char* bytes, std::size_t size) noexcept;
  Error body_limit_error(const std::string& what) const;
  Error take_pending(uint64_t position);
  Error take_pending_error(Error error);
  Error translate(llhttp_errno_t code, uint64_t position);
  std::unexpected<Error> stick(Error error);

  llhttp_t parser_{};
  ParserLimits limits_;
  Handler* handler_ = nullptr;  // set for the duration of feed() and finish()
  Head head_{};

  bool no_body_expected_ = false;
  bool finished_ = false;
  bool closed_ = false;  // the last message ended with keep_alive false: no more bytes may follow
  bool in_message_ = false;
  bool head_done_ = false;
  Piece piece_ = Piece::none;
  std::size_t head_bytes_ = 0;      // head bytes fed so far, while the head is incomplete
  uint64_t body_bytes_ = 0;         // body bytes delivered to on_body
  uint64_t announced_bytes_ = 0;    // sum of the chunk sizes announced
  uint64_t chunk_left_ = 0;         // data bytes of the current chunk not yet delivered
  unsigned crlf_left_ = 0;          // bytes of the CRLF after a chunk's data not yet checked (0-2)
  const char* slice_start_ = nullptr;  // the bytes given to the running llhttp_execute (offset_ is where they start)
  const char* slice_end_ = nullptr;
  // Request side (LineCheck): where the framing is, and the first framing byte not yet checked.
  LineCheck lines_;
  Framing framing_ = Framing::head;
  const char* framing_from_ = nullptr;
  std::size_t overhead_bytes_ = 0;  // chunk-extension and trailer bytes
  uint64_t last_span_end_ = 0;      // stream offset after the last extension or trailer span counted
  std::optional<uint64_t> overhead_crossed_at_;  // this slice: the byte that crossed the budget
  uint64_t offset_ = 0;             // stream bytes consumed since construction or reset()

  std::optional<Error> failed_;   // sticks until reset()
  std::optional<Error> pending_;  // set by a callback that stopped llhttp, read when it returns
  std::optional<uint64_t> pending_at_;  // the position of pending_ when known better than llhttp's

  std::size_t scratch_capacity_;
  std::size_t scratch_used_ = 0;
  std::unique_ptr<char[]> scratch_;
};

}  // namespace
}  // namespace ringlab::http
