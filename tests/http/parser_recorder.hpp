#pragma once
// What a parser reported, recorded as owned copies so that two runs compare with ==: the messages
// (heads, bodies, completion) and the error. Shared by the parser tests (parser_harness.hpp, every
// cut of an input) and the fuzz targets (tests/fuzz: whole against split); no test framework here.
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ringlab/http/parser.hpp"

namespace ringlab::http::test {

// One parsed message, copied out of the parser's views.
struct Message {
  int status = 0;           // responses
  std::string reason;       // responses
  std::string method;       // requests
  std::string target;       // requests
  int major = 1, minor = 1;
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<uint64_t> content_length;
  bool chunked = false;
  bool keep_alive = true;
  std::string body;
  bool complete = false;
  bool operator==(const Message&) const = default;
};

struct Outcome {
  std::vector<Message> messages;
  std::optional<Errc> error;
  std::string detail;         // the error's detail without its " at byte N" suffix
  std::optional<uint64_t> at;  // N
  int body_outside_fed = 0;    // on_body pieces that did not point into the buffer being fed
  bool operator==(const Outcome&) const = default;
};

inline std::ostream& operator<<(std::ostream& out, const Message& m) {
  out << "{status " << m.status << " '" << m.reason << "' " << m.method << " '" << m.target << "' HTTP/" << m.major
      << '.' << m.minor << " headers[";
  for (const auto& [name, value] : m.headers) out << name << ": '" << value << "'; ";
  out << "] length " << (m.content_length ? std::to_string(*m.content_length) : "none") << " chunked "
      << m.chunked << " keep_alive " << m.keep_alive << " body '" << m.body << "' complete " << m.complete << '}';
  return out;
}

inline std::ostream& operator<<(std::ostream& out, const Outcome& o) {
  out << "messages:";
  for (const Message& m : o.messages) out << ' ' << m;
  if (o.error) out << " error " << errc_name(*o.error) << " '" << o.detail << "' at " << (o.at ? *o.at : 0);
  out << " stray body pointers " << o.body_outside_fed;
  return out;
}

template <class Head, class Handler>
class Recorder final : public Handler {
 public:
  Status on_head(const Head& head) override {
    Message m;
    if constexpr (std::is_same_v<Head, ResponseHead>) {
      m.status = head.status;
      m.reason = head.reason;
    } else {
      m.method = head.method;
      m.target = head.target;
    }
    m.major = head.version_major;
    m.minor = head.version_minor;
    for (const Header& header : head.headers) m.headers.emplace_back(header.name, header.value);
    m.content_length = head.content_length;
    m.chunked = head.chunked;
    m.keep_alive = head.keep_alive;
    outcome.messages.push_back(std::move(m));
    return {};
  }
  Status on_body(std::string_view bytes) override {
    // parser.hpp promises that body pieces point into the buffer given to feed(), never a copy.
    const std::less_equal<const char*> le;
    if (!le(fed.data(), bytes.data()) || !le(bytes.data() + bytes.size(), fed.data() + fed.size())) {
      ++outcome.body_outside_fed;
    }
    outcome.messages.back().body.append(bytes);
    return {};
  }
  Status on_complete() override {
    outcome.messages.back().complete = true;
    return {};
  }

  Outcome outcome;
  std::string_view fed;
};

using ResponseRecorder = Recorder<ResponseHead, ResponseHandler>;
using RequestRecorder = Recorder<RequestHead, RequestHandler>;

inline void record_error(Outcome& outcome, const Error& error) {
  outcome.error = error.code;
  outcome.detail = error.detail;
  if (const auto at = outcome.detail.rfind(" at byte "); at != std::string::npos) {
    outcome.at = std::stoull(outcome.detail.substr(at + 9));
    outcome.detail.resize(at);
  }
}

}  // namespace ringlab::http::test
