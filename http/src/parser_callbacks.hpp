#pragma once
// Machine's llhttp callbacks and the settings table that names them (parser_machine.hpp). Span
// callbacks return 0 or HPE_USER; the others as llhttp_settings_s says. Each runs inside
// llhttp_execute() or llhttp_finish(), on the thread that called feed() or finish(). Included by
// parser.cpp alone (see parser_machine.hpp).
#include "parser_machine.hpp"

namespace ringlab::http {
namespace {

template <class Head>
inline int Machine<Head>::on_message_begin(llhttp_t* parser) {
  Machine& m = self(parser);
  m.clear_message();
  m.in_message_ = true;
  return 0;
}

template <class Head>
inline int Machine<Head>::on_start_line(llhttp_t* parser, const char* at, std::size_t length) {
  Machine& m = self(parser);
  m.piece_ = Piece::start_line;
  return m.append(m.start_line(), at, length) ? 0 : m.fail_scratch();
}

template <class Head>
inline int Machine<Head>::on_piece_complete(llhttp_t* parser) {
  self(parser).piece_ = Piece::none;
  return 0;
}

template <class Head>
inline int Machine<Head>::on_header_field(llhttp_t* parser, const char* at, std::size_t length) {
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

template <class Head>
inline int Machine<Head>::on_header_field_complete(llhttp_t* parser) {
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

template <class Head>
inline int Machine<Head>::on_header_value(llhttp_t* parser, const char* at, std::size_t length) {
  Machine& m = self(parser);
  if (m.head_done_) return m.count_overhead(m.offset_of(at), length);
  m.piece_ = Piece::value;
  return m.append(m.head_.headers.items[m.head_.headers.count - 1].value, at, length) ? 0 : m.fail_scratch();
}

template <class Head>
inline int Machine<Head>::on_header_value_complete(llhttp_t* parser) {
  Machine& m = self(parser);
  m.piece_ = Piece::none;
  if (m.head_done_) return 0;
  // llhttp drops leading whitespace but keeps trailing; RFC 9110 5.5 says it is not part of the value.
  std::string_view& value = m.head_.headers.items[m.head_.headers.count - 1].value;
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  return 0;
}

template <class Head>
inline int Machine<Head>::on_chunk_extension(llhttp_t* parser, const char* at, std::size_t length) {
  Machine& m = self(parser);
  return m.count_overhead(m.offset_of(at), length);
}

// One more byte per extension name or value, for its ';' or '=': a million empty extensions
// (";;;;...") are a million bytes of overhead, not zero. llhttp gives no position here: the byte
// counted is taken to be the one after the last span it handed over.
template <class Head>
inline int Machine<Head>::on_chunk_extension_complete(llhttp_t* parser) {
  Machine& m = self(parser);
  return m.count_overhead(m.last_span_end_, 1);
}

// Return values: 0 proceed, 1 no body follows, -1 error (the reason is in pending_).
template <class Head>
inline int Machine<Head>::on_headers_complete(llhttp_t* parser) {
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

template <class Head>
inline int Machine<Head>::on_chunk_header(llhttp_t* parser) {
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

template <class Head>
inline int Machine<Head>::on_body(llhttp_t* parser, const char* at, std::size_t length) {
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
template <class Head>
inline int Machine<Head>::on_message_complete(llhttp_t* parser) {
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

template <class Head>
inline const llhttp_settings_t& Machine<Head>::settings() {
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

}  // namespace
}  // namespace ringlab::http
