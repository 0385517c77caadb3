#include "ringlab/http/error.hpp"

#include <cerrno>
#include "ringlab/base/errno_text.hpp"

namespace ringlab::http {

const char* errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::refused: return "refused";
    case Errc::reset: return "reset";
    case Errc::timeout: return "timeout";
    case Errc::truncated: return "truncated";
    case Errc::malformed: return "malformed";
    case Errc::header_too_large: return "header_too_large";
    case Errc::body_too_large: return "body_too_large";
    case Errc::unsupported: return "unsupported";
    case Errc::bad_url: return "bad_url";
    case Errc::sink: return "sink";
    case Errc::io: return "io";
  }
  // An out-of-range value can only come from a cast; name it rather than crash.
  return "unknown";
}

std::string Error::message() const {
  std::string text = errc_name(code);
  if (!peer.empty()) {
    text += ' ';
    text += peer;
  }
  if (!detail.empty()) {
    text += ": ";
    text += detail;
  }
  return text;
}

namespace {

Errc classify(int code) noexcept {
  switch (code) {
    case ECONNREFUSED: return Errc::refused;
    case ECONNRESET:
    case EPIPE: return Errc::reset;
    // net/ reports an expired deadline as ETIMEDOUT; a linked timeout that fired shows up on the
    // cut-short operation as ECANCELED and on the timeout itself as ETIME.
    case ETIMEDOUT:
    case ECANCELED:
    case ETIME: return Errc::timeout;
    default: return Errc::io;
  }
}

}  // namespace

Error Error::from(const net::Error& error) {
  // Without the peer, which http::Error carries apart: "op: description (ENAME)".
  std::string detail = base::errno_message(error.op != nullptr ? error.op : "", {}, error.code);
  return Error{classify(error.code), std::move(detail), error.peer};
}

}  // namespace ringlab::http
