#include "ringlab/http/parser.hpp"

#include <llhttp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

namespace ringlab::http {

namespace {

std::string at_byte(uint64_t offset) { return " at byte " + std::to_string(offset); }

// N in its " at byte N" is where the CRLF should have started, whichever of its two bytes is wrong.
constexpr const char* kBadCrlf = "expected CRLF after chunk data";

// Which start-line or header field the latest fragment went to, so the next fragment knows whether
// it continues that field or starts a new header.
enum class Piece : uint8_t { none, start_line, name, value };

// The line rules llhttp 8.1 checks only in strict mode (which Debian's build does not enable, and
// which would apply to responses too): a CR must be followed by LF (llhttp takes CR plus any byte as
// a line end, so "\r\rX" hides a request from it that another parser sees), and a line that starts
// with SP or HT after a field line is obsolete line folding (RFC 9112 5.2), refused as nginx and
// h2o do. Fed the framing bytes of a request in order, in pieces split anywhere: the verdict does
// not depend on the split.
class LineCheck {
 public:
  enum class Verdict : uint8_t { more, end, bad_cr, obs_fold };
  struct Outcome {
    Verdict verdict = Verdict::more;
    std::size_t at = 0;  // the offending byte, or just after the LF that ended the section
  };

  // `section`: heads and trailers end at an empty line after a non-empty one; scanning stops there.
  Outcome scan(const char* bytes, std::size_t size, bool section) noexcept {
    for (std::size_t i = 0; i < size; ++i) {
      const char c = bytes[i];
      if (cr_) {
        if (c != '\n') return {Verdict::bad_cr, i};
        cr_ = false;
      } else if (c == '\r') {
        cr_ = true;
        continue;
      }
      if (c == '\n') {
        if (!line_start_) {
          seen_line_ = true;
        } else if (seen_line_ && section) {
          *this = LineCheck{};
          return {Verdict::end, i + 1};
        }
        line_start_ = true;
        continue;
      }
      if (line_start_ && seen_line_ && (c == ' ' || c == '\t')) return {Verdict::obs_fold, i};
      line_start_ = false;
    }
    return {Verdict::more, size};
  }
  // A CR is waiting for its LF.
  [[nodiscard]] bool after_cr() const noexcept { return cr_; }
  // Chunk data interrupts the framing: the next framing byte starts a line of its own.
  void restart() noexcept { *this = LineCheck{}; }

 private:
  bool cr_ = false;
  bool line_start_ = true;
  bool seen_line_ = false;  // leading empty lines (allowed before a request line) do not count
};

// Where the request side is in the framing it checks with LineCheck.
enum class Framing : uint8_t {
  head,     // before or in a head: bytes are checked before llhttp sees them
  checked,  // the head's end was found; llhttp has yet to reach it or the body is not chunked
  chunked,  // a chunked body: the bytes around chunk data are checked as llhttp reports the data
};

// One llhttp parser plus everything ResponseParser and RequestParser share. `Head` and `Handler`
// pick the message direction; the few places that differ use `if constexpr`.
template <class Head, class Handler>
class Machine {
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
            return stick(take_pending_error(std::move(*bad)));
          }
        }
      }
      return stick(translate(code, offset_ + used));
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
  // ---- llhttp callbacks. Span callbacks return 0 or HPE_USER; the others as llhttp_settings_s says.
  static Machine& self(llhttp_t* parser) noexcept { return *static_cast<Machine*>(parser->data); }

  static int on_message_begin(llhttp_t* parser) {
    Machine& m = self(parser);
    m.clear_message();
    m.in_message_ = true;
    return 0;
  }

  static int on_start_line(llhttp_t* parser, const char* at, std::size_t length) {
    Machine& m = self(parser);
    m.piece_ = Piece::start_line;
    return m.append(m.start_line(), at, length) ? 0 : m.fail_scratch();
  }

  static int on_piece_complete(llhttp_t* parser) {
    self(parser).piece_ = Piece::none;
    return 0;
  }

  static int on_header_field(llhttp_t* parser, const char* at, std::size_t length) {
    Machine& m = self(parser);
    if (m.head_done_) return m.count_overhead(m.offset_of(at), length);  // a trailer
    Headers& headers = m.head_.headers;
    if (m.piece_ != Piece::name) {
      if (headers.count == kMaxHeaders) {
        m.pending_ = Error{Errc::header_too_large, "more than " + std::to_string(kMaxHeaders) + " header fields", {}};
        return HPE_USER;
      }
      headers.items[headers.count++] = Header{};
      m.piece_ = Piece::name;
    }
    return m.append(headers.items[headers.count - 1].name, at, length) ? 0 : m.fail_scratch();
  }

  static int on_header_field_complete(llhttp_t* parser) {
    Machine& m = self(parser);
    m.piece_ = Piece::none;
    if (m.head_done_) return 0;
    // llhttp 8.1 lets a space through inside a name ("Bad Name: x"). Refused here: another parser
    // on the path might read "Content-Length : 5" differently, the request-smuggling shape.
    const std::string_view name = m.head_.headers.items[m.head_.headers.count - 1].name;
    if (!is_token(name)) {
      m.pending_ = Error{Errc::malformed, "header name is not a token: '" + std::string(name.substr(0, 64)) + "'", {}};
      return -1;
    }
    return 0;
  }

  static int on_header_value(llhttp_t* parser, const char* at, std::size_t length) {
    Machine& m = self(parser);
    if (m.head_done_) return m.count_overhead(m.offset_of(at), length);
    m.piece_ = Piece::value;
    return m.append(m.head_.headers.items[m.head_.headers.count - 1].value, at, length) ? 0 : m.fail_scratch();
  }

  static int on_header_value_complete(llhttp_t* parser) {
    Machine& m = self(parser);
    m.piece_ = Piece::none;
    if (m.head_done_) return 0;
    // llhttp drops leading whitespace but keeps trailing; RFC 9110 5.5 says it is not part of the value.
    std::string_view& value = m.head_.headers.items[m.head_.headers.count - 1].value;
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    return 0;
  }

  static int on_chunk_extension(llhttp_t* parser, const char* at, std::size_t length) {
    Machine& m = self(parser);
    return m.count_overhead(m.offset_of(at), length);
  }

  // One more byte per extension name or value, for its ';' or '=': a million empty extensions
  // (";;;;...") are a million bytes of overhead, not zero. llhttp gives no position here: the byte
  // counted is taken to be the one after the last span it handed over.
  static int on_chunk_extension_complete(llhttp_t* parser) {
    Machine& m = self(parser);
    return m.count_overhead(m.last_span_end_, 1);
  }

  // Return values: 0 proceed, 1 no body follows, -1 error (the reason is in pending_).
  static int on_headers_complete(llhttp_t* parser) {
    Machine& m = self(parser);
    m.head_done_ = true;
    m.piece_ = Piece::none;
    Head& head = m.head_;
    head.version_major = parser->http_major;
    head.version_minor = parser->http_minor;
    if constexpr (!kResponse) {
      // A request's Upgrade is an offer the server may ignore (RFC 9110 7.8), as nginx does with
      // "Upgrade: h2c": the request is answered as HTTP/1.1 and the connection stays HTTP/1.1.
      if (parser->upgrade != 0 && parser->method != HTTP_CONNECT) parser->upgrade = 0;
    }
    if (parser->upgrade != 0) {
      m.pending_ = Error{Errc::unsupported, "protocol upgrade or CONNECT", {}};
      return -1;
    }
    const bool chunked = (parser->flags & F_CHUNKED) != 0;
    const bool has_length = (parser->flags & F_CONTENT_LENGTH) != 0;
    bool no_body = false;
    if constexpr (kResponse) {
      head.status = parser->status_code;
      // RFC 9112 6.3: these responses end with their head, whatever their framing headers say
      // (llhttp itself would read a Content-Length body after a 204 or 304).
      no_body = m.no_body_expected_ || head.status / 100 == 1 || head.status == 204 || head.status == 304;
      if (no_body) parser->flags |= F_SKIPBODY;  // so should_keep_alive does not expect an EOF body
    } else {
      head.method = llhttp_method_name(static_cast<llhttp_method_t>(parser->method));
      // RFC 9112 6.3: a request whose final coding is not chunked has no determinable length.
      if ((parser->flags & F_TRANSFER_ENCODING) != 0 && !chunked) {
        m.pending_ = Error{Errc::malformed, "request Transfer-Encoding does not end with chunked", {}};
        return -1;
      }
      // RFC 9112 6.1: an HTTP/1.0 peer cannot have meant chunked framing; a proxy before us may
      // have framed this request by Content-Length or not at all. Refused, as the RFC allows.
      if ((parser->flags & F_TRANSFER_ENCODING) != 0 && parser->http_major == 1 && parser->http_minor == 0) {
        m.pending_ = Error{Errc::malformed, "Transfer-Encoding in an HTTP/1.0 request", {}};
        return -1;
      }
      if (chunked) m.framing_ = Framing::chunked;
    }
    head.keep_alive = llhttp_should_keep_alive(parser) != 0;
    head.chunked = chunked && !no_body;
    if (no_body) {
      head.content_length = 0;
    } else if (has_length && !chunked) {
      head.content_length = parser->content_length;
    } else if (!chunked && llhttp_message_needs_eof(parser) == 0) {
      head.content_length = 0;  // a request without a body
    }
    if (head.content_length && *head.content_length > m.limits_.max_body_bytes) {
      m.pending_ = m.body_limit_error("Content-Length " + std::to_string(*head.content_length));
      return -1;
    }
    if (auto status = m.handler_->on_head(head); !status) {
      m.pending_ = std::move(status.error());
      return -1;
    }
    return no_body ? 1 : 0;
  }

  static int on_chunk_header(llhttp_t* parser) {
    Machine& m = self(parser);
    // The chunk size is checked when it is announced, before any of its bytes are waited for.
    const uint64_t size = parser->content_length;
    if (size > m.limits_.max_body_bytes - m.announced_bytes_) {
      m.pending_ = m.body_limit_error("chunked body of at least " + std::to_string(m.announced_bytes_ + size) +
                                      " bytes");
      return -1;
    }
    m.announced_bytes_ += size;
    m.chunk_left_ = size;
    return 0;
  }

  static int on_body(llhttp_t* parser, const char* at, std::size_t length) {
    Machine& m = self(parser);
    // Content-Length and chunked bodies were checked up front; this catches close-delimited ones.
    if (length > m.limits_.max_body_bytes - m.body_bytes_) {
      m.pending_ = m.body_limit_error("body of at least " + std::to_string(m.body_bytes_ + length) + " bytes");
      return HPE_USER;
    }
    if constexpr (!kResponse) {
      // The chunk-size line before these data: checked before the data are delivered. A CR right
      // before data has data, not LF, after it.
      if (auto bad = m.check_chunk_framing(at, false, m.offset_ + static_cast<uint64_t>(at - m.slice_start_))) {
        m.pending_ = std::move(*bad);
        return HPE_USER;
      }
      if (m.framing_ == Framing::chunked && m.lines_.after_cr()) {
        m.pending_ = m.framing_error(LineCheck::Verdict::bad_cr, m.offset_ + static_cast<uint64_t>(at - m.slice_start_));
        return HPE_USER;
      }
      if (m.framing_ == Framing::chunked) {
        m.lines_.restart();
        m.framing_from_ = at + length;
      }
    }
    m.body_bytes_ += length;
    if (auto status = m.handler_->on_body({at, length}); !status) {
      m.pending_ = std::move(status.error());
      return HPE_USER;
    }
    // llhttp 8.1 skips the two bytes after a chunk's data unread, whatever they are, and only then
    // reports on_chunk_complete; "1\r\naXY0\r\n\r\n" would be a valid body. Another parser on the
    // path reads it differently (the request-smuggling shape), so the two bytes are checked here,
    // those of them in this slice now and any the slice cut off at the start of the next feed.
    if (m.head_.chunked && length != 0 && (m.chunk_left_ -= length) == 0) {
      m.crlf_left_ = 2;
      const char* crlf = at + length;
      if (!m.check_crlf(crlf, static_cast<std::size_t>(m.slice_end_ - crlf))) {
        m.pending_ = Error{Errc::malformed, kBadCrlf, {}};  // llhttp's error position: at + length
        return HPE_USER;
      }
    }
    return 0;
  }

  // Return values: HPE_PAUSED (llhttp_execute stops right after the message), -1 error.
  static int on_message_complete(llhttp_t* parser) {
    Machine& m = self(parser);
    if constexpr (!kResponse) {
      // The last chunk and the trailers, before the handler hears that the message ended.
      if (auto bad = m.check_chunk_framing(m.slice_end_, true, m.offset_ + static_cast<uint64_t>(m.slice_end_ - m.slice_start_))) {
        m.pending_ = std::move(*bad);
        return -1;
      }
      m.framing_ = Framing::head;
      m.framing_from_ = nullptr;
      m.lines_.restart();
    }
    if (auto status = m.handler_->on_complete(); !status) {
      m.pending_ = std::move(status.error());
      return -1;
    }
    m.in_message_ = false;
    m.head_done_ = false;
    m.head_bytes_ = 0;
    m.closed_ = !m.head_.keep_alive;
    return HPE_PAUSED;
  }

  static const llhttp_settings_t& settings() {
    static const llhttp_settings_t table = [] {
      llhttp_settings_t s;
      llhttp_settings_init(&s);
      s.on_message_begin = &Machine::on_message_begin;
      if constexpr (kResponse) {
        s.on_status = &Machine::on_start_line;
        s.on_status_complete = &Machine::on_piece_complete;
      } else {
        s.on_url = &Machine::on_start_line;
        s.on_url_complete = &Machine::on_piece_complete;
      }
      s.on_header_field = &Machine::on_header_field;
      s.on_header_field_complete = &Machine::on_header_field_complete;
      s.on_header_value = &Machine::on_header_value;
      s.on_header_value_complete = &Machine::on_header_value_complete;
      s.on_headers_complete = &Machine::on_headers_complete;
      s.on_chunk_header = &Machine::on_chunk_header;
      s.on_chunk_extension_name = &Machine::on_chunk_extension;
      s.on_chunk_extension_value = &Machine::on_chunk_extension;
      s.on_chunk_extension_name_complete = &Machine::on_chunk_extension_complete;
      s.on_chunk_extension_value_complete = &Machine::on_chunk_extension_complete;
      s.on_body = &Machine::on_body;
      s.on_message_complete = &Machine::on_message_complete;
      return s;
    }();
    return table;
  }

  // ---- message state

  std::string_view& start_line() noexcept {
    if constexpr (kResponse) {
      return head_.reason;
    } else {
      return head_.target;
    }
  }

  void clear_message() noexcept {
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

  // ---- request framing checks (LineCheck)

  // The error's position is where the offending byte is, whichever callback found it: set as
  // pending_at_ so that take_pending() does not use llhttp's (which depends on how input was cut).
  Error framing_error(LineCheck::Verdict verdict, uint64_t position) {
    pending_at_ = position;
    const char* what = verdict == LineCheck::Verdict::obs_fold
                           ? "obsolete line folding (a line starting with a space or tab) is not accepted"
                           : "CR not followed by LF";
    return Error{Errc::malformed, what, {}};
  }

  // Before llhttp sees a slice of a head (or the CR/LF before one): refuse what it would misread.
  std::optional<Error> check_framing_before(const char* base, std::size_t slice) {
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
  std::optional<Error> check_chunk_framing(const char* end, bool section, uint64_t end_offset) {
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
  [[nodiscard]] uint64_t offset_of(const char* at) const noexcept {
    return offset_ + static_cast<uint64_t>(at - slice_start_);
  }

  // `at`: the stream offset of the first of the `length` bytes; the offset of the byte that crosses
  // the budget is kept for the order of errors (feed()).
  int count_overhead(uint64_t at, std::size_t length) {
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
  bool check_crlf(const char* bytes, std::size_t size) noexcept {
    for (std::size_t i = 0; crlf_left_ > 0 && i < size; ++i, --crlf_left_) {
      if (bytes[i] != "\r\n"[2 - crlf_left_]) return false;
    }
    return true;
  }

  Error body_limit_error(const std::string& what) const {
    return Error{Errc::body_too_large,
                 what + " exceeds max_body_bytes (" + std::to_string(limits_.max_body_bytes) + ")", {}};
  }

  // ---- fragments and scratch storage

  [[nodiscard]] bool in_scratch(std::string_view field) const noexcept {
    const std::less<const char*> before;
    return !field.empty() && !before(field.data(), scratch_.get()) &&
           before(field.data(), scratch_.get() + scratch_capacity_);
  }

  // Extends `field` by the fragment [at, at + length): in place when the fragment follows the
  // field's bytes in the caller's memory, else by joining both in the scratch.
  bool append(std::string_view& field, const char* at, std::size_t length) {
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
  bool own_at_end(std::string_view& field, std::size_t extra) {
    if (!reserve(field.size() + extra)) return false;
    // Re-read after reserve(): growing the scratch rebases the views that point into it.
    char* destination = scratch_.get() + scratch_used_;
    std::memmove(destination, field.data(), field.size());
    field = {destination, field.size()};
    scratch_used_ += field.size();
    return true;
  }

  bool own(std::string_view& field) { return in_scratch(field) || field.empty() || own_at_end(field, 0); }

  // Every byte of a name, value, reason or target is a head byte, and the head is at most
  // max_header_bytes; each lands in the scratch once when joined or detached, plus once more for
  // the field in progress when detach() put other fields after it. Hence the bound of twice the head.
  [[nodiscard]] std::size_t scratch_bound() const noexcept { return 2 * std::max<std::size_t>(limits_.max_header_bytes, 1); }

  bool reserve(std::size_t more) {
    if (more <= scratch_capacity_ - scratch_used_) return true;
    return grow_scratch(scratch_used_ + more);
  }

  bool grow_scratch(std::size_t needed) {
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

  int fail_scratch() {
    pending_ = Error{Errc::header_too_large, "head fragments exceed the parser's scratch storage", {}};
    return HPE_USER;
  }

  Status scratch_exhausted() {
    return stick(Error{Errc::header_too_large, "head fragments exceed the parser's scratch storage", {}});
  }

  // ---- errors

  Error take_pending(uint64_t position) {
    Error error = std::move(*pending_);
    pending_.reset();
    error.detail += at_byte(pending_at_.value_or(position));
    pending_at_.reset();
    return error;
  }

  // An error found outside llhttp (framing_error set its position).
  Error take_pending_error(Error error) {
    error.detail += at_byte(pending_at_.value_or(offset_));
    pending_at_.reset();
    return error;
  }

  Error translate(llhttp_errno_t code, uint64_t position) {
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

  std::unexpected<Error> stick(Error error) {
    handler_ = nullptr;
    failed_ = error;
    return std::unexpected(std::move(error));
  }

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

// ---- ResponseParser

struct ResponseParser::Impl final : Machine<ResponseHead, ResponseHandler> {
  using Machine::Machine;
};

ResponseParser::ResponseParser(const ParserLimits& limits) : impl_(std::make_unique<Impl>(limits)) {}
ResponseParser::~ResponseParser() = default;
void ResponseParser::expect_no_body(bool no_body) { impl_->expect_no_body(no_body); }
Result<std::size_t> ResponseParser::feed(std::string_view bytes, ResponseHandler& handler) {
  return impl_->feed(bytes, handler);
}
Status ResponseParser::finish(ResponseHandler& handler) { return impl_->finish(handler); }
Status ResponseParser::detach() { return impl_->detach(); }
void ResponseParser::reset() { impl_->reset(); }
bool ResponseParser::in_message() const noexcept { return impl_->in_message(); }

// ---- RequestParser

struct RequestParser::Impl final : Machine<RequestHead, RequestHandler> {
  using Machine::Machine;
};

RequestParser::RequestParser(const ParserLimits& limits) : impl_(std::make_unique<Impl>(limits)) {}
RequestParser::~RequestParser() = default;
Result<std::size_t> RequestParser::feed(std::string_view bytes, RequestHandler& handler) {
  return impl_->feed(bytes, handler);
}
Status RequestParser::finish(RequestHandler& handler) { return impl_->finish(handler); }
Status RequestParser::detach() { return impl_->detach(); }
void RequestParser::reset() { impl_->reset(); }
bool RequestParser::in_message() const noexcept { return impl_->in_message(); }

}  // namespace ringlab::http
