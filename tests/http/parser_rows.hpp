#pragma once
// The parser tests' tables (parser_test.cpp, parser_limits_test.cpp, parser_request_test.cpp): a row is
// an input and the messages and error it must give, checked fed whole, byte by byte, split in two at
// every byte (from one buffer and from two), one byte per separate buffer, and through one reused
// buffer with detach(), each buffer flush against a PROT_NONE page (parser_harness.hpp).
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "parser_harness.hpp"
#include "ringlab/http/parser.hpp"

namespace ringlab::http::test {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

enum Opt : unsigned { kPlain = 0, kFinish = 1, kNoBody = 2 };

struct Row {
  Row(const char* row_name, std::string row_input, std::vector<Message> row_messages, unsigned opt = kPlain)
      : name(row_name), input(std::move(row_input)), messages(std::move(row_messages)),
        finish((opt & kFinish) != 0), no_body((opt & kNoBody) != 0) {}
  Row(const char* row_name, std::string row_input, std::vector<Message> row_messages, Errc row_error,
      std::string row_detail, std::optional<uint64_t> row_at = std::nullopt, unsigned opt = kPlain)
      : Row(row_name, std::move(row_input), std::move(row_messages), opt) {
    error = row_error;
    detail = std::move(row_detail);
    at = row_at;
  }

  const char* name;
  std::string input;
  std::vector<Message> messages;       // in order; the last one is incomplete when an error cut it short
  std::optional<Errc> error;           // the error that ends the run, if any
  std::string detail;                  // its detail without " at byte N"
  std::optional<uint64_t> at;          // N, where it does not depend on the cut
  bool finish = false;                 // call finish() after the last byte
  bool no_body = false;                // expect_no_body(true): a response to HEAD
};

struct Fields {
  HeaderList headers = {};
  std::optional<uint64_t> length = std::nullopt;
  std::string body = {};
  bool keep_alive = true;
  bool chunked = false;
  int minor = 1;
  bool complete = true;
};

inline Message response(int status, std::string reason, Fields f) {
  Message m;
  m.status = status;
  m.reason = std::move(reason);
  m.minor = f.minor;
  m.headers = std::move(f.headers);
  m.content_length = f.length;
  m.chunked = f.chunked;
  m.keep_alive = f.keep_alive;
  m.body = std::move(f.body);
  m.complete = f.complete;
  return m;
}

inline Message request(std::string method, std::string target, Fields f) {
  Message m = response(0, "", std::move(f));
  m.method = std::move(method);
  m.target = std::move(target);
  return m;
}

template <class Parser, class Rec>
void check_rows(const std::vector<Row>& rows, const ParserLimits& limits = {}) {
  for (const Row& row : rows) {
    INFO("row: " << std::string(row.name));
    Outcome expected;
    expected.messages = row.messages;
    expected.error = row.error;
    expected.detail = row.detail;
    expected.at = row.at;
    Setup<Parser> setup;
    if constexpr (std::is_same_v<Parser, ResponseParser>) {
      setup = [&](ResponseParser& p) { p.expect_no_body(row.no_body); };
    }
    const std::size_t runs = check_every_cut<Parser, Rec>(row.input, expected, row.finish, limits, setup);
    CHECK(runs >= 2 * (row.input.size() + 1));
  }
}

inline const std::string kChunkedHead = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";  // 47 bytes
inline const HeaderList kChunkedHeaders = {{"Transfer-Encoding", "chunked"}};
inline const std::string kBadChunkSize = "llhttp: Invalid character in chunk size (HPE_INVALID_CHUNK_SIZE)";

// The one chunked response, or chunked "POST /" request, that an error ended after `body`.
inline std::vector<Message> cut_chunked_response(std::string body = {}) {
  return {response(200, "OK", {.headers = kChunkedHeaders, .body = std::move(body), .chunked = true, .complete = false})};
}
inline std::vector<Message> cut_chunked_request(std::string body = {}) {
  return {request("POST", "/", {.headers = kChunkedHeaders, .body = std::move(body), .chunked = true, .complete = false})};
}


}  // namespace ringlab::http::test
