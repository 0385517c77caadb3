// RequestParser, as the server uses it: valid requests however they are cut, malformed ones, the strict
// line rules, pipelining, and the head limits.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "parser_rows.hpp"
#include "ringlab/http/parser.hpp"

using namespace ringlab::http;
using namespace ringlab::http::test;

TEST_CASE("request parser: valid requests parse the same however they are cut") {
  check_rows<RequestParser, RequestRecorder>({
      {"GET with a query", "GET /weather?count=10 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n",
       {request("GET", "/weather?count=10", {.headers = {{"Host", "127.0.0.1:8080"}}, .length = 0})}},
      {"POST with Content-Length",
       "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
       {request("POST", "/echo",
                {.headers = {{"Host", "h"}, {"Content-Type", "application/json"}, {"Content-Length", "7"}},
                 .length = 7,
                 .body = "{\"a\":1}"})}},
      {"chunked POST with a trailer",
       "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=1\r\nde\r\n0\r\nT: 1\r\n\r\n",
       {request("POST", "/echo", {.headers = {{"Transfer-Encoding", "chunked"}}, .body = "abcde", .chunked = true})}},
      {"HTTP/1.0 closes by default", "GET / HTTP/1.0\r\n\r\n",
       {request("GET", "/", {.length = 0, .keep_alive = false, .minor = 0})}},
      {"three pipelined requests",
       "GET /a HTTP/1.1\r\nHost: h\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nxyz"
       "GET /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
       {request("GET", "/a", {.headers = {{"Host", "h"}}, .length = 0}),
        request("POST", "/b", {.headers = {{"Host", "h"}, {"Content-Length", "3"}}, .length = 3, .body = "xyz"}),
        request("GET", "/c", {.headers = {{"Host", "h"}, {"Connection", "close"}}, .length = 0, .keep_alive = false})}},
      {"every method name comes from llhttp's table", "DELETE /x HTTP/1.1\r\n\r\nPATCH /y HTTP/1.1\r\n\r\n",
       {request("DELETE", "/x", {.length = 0}), request("PATCH", "/y", {.length = 0})}},
  });
}

TEST_CASE("request parser: malformed, unsupported and truncated requests") {
  check_rows<RequestParser, RequestRecorder>({
      {"a final coding other than chunked", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nzz", {},
       Errc::malformed, "request Transfer-Encoding does not end with chunked"},
      {"Content-Length with chunked",
       "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", {},
       Errc::malformed, "llhttp: Content-Length can't be present with Transfer-Encoding (HPE_UNEXPECTED_CONTENT_LENGTH)",
       66},
      {"no CRLF after the chunk data",
       "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n",
       cut_chunked_request("abc"), Errc::malformed, "expected CRLF after chunk data", 53},
      {"unknown method", "FETCH / HTTP/1.1\r\n\r\n", {}, Errc::malformed,
       "llhttp: Invalid method encountered (HPE_INVALID_METHOD)"},
      {"space inside the target", "GET /a b HTTP/1.1\r\n\r\n", {}, Errc::malformed,
       "llhttp: Expected HTTP/ (HPE_INVALID_CONSTANT)", 7},
      {"CONNECT", "CONNECT example.com:443 HTTP/1.1\r\n\r\n", {}, Errc::unsupported, "protocol upgrade or CONNECT"},
      {"peer closed inside the body", "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab",
       {request("POST", "/", {.headers = {{"Content-Length", "5"}}, .length = 5, .body = "ab", .complete = false})},
       Errc::truncated, "peer closed the connection after 2 of 5 body bytes", 40, kFinish},
      {"finish() after a whole request is clean", "GET / HTTP/1.1\r\n\r\n",
       {request("GET", "/", {.length = 0})}, kFinish},
  });
}

TEST_CASE("request parser: strict line rules (CR must be followed by LF, no obsolete line folding)") {
  const std::string chunked_head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";  // 47 bytes
  const std::string cr_not_lf = "CR not followed by LF";
  const std::string folding = "obsolete line folding (a line starting with a space or tab) is not accepted";
  check_rows<RequestParser, RequestRecorder>({
      {"CR followed by another byte in the head (a second request hidden from llhttp)",
       "GET / HTTP/1.1\r\nHost: h\r\n\rXGET /p HTTP/1.1\r\n\r\n", {}, Errc::malformed, cr_not_lf, 26},
      {"CR followed by another byte in the request line", "GET / HTTP/1.1\rXHost: h\r\n\r\n", {}, Errc::malformed,
       cr_not_lf, 15},
      {"CR followed by another byte in a chunk-size line", chunked_head + "1\rXa\r\n0\r\n\r\n",
       cut_chunked_request(), Errc::malformed, cr_not_lf, 49},
      {"CR followed by another byte after the last chunk", chunked_head + "1\r\na\r\n0\r\n\rXGET / HTTP/1.1\r\n\r\n",
       cut_chunked_request("a"), Errc::malformed, cr_not_lf, 57},
      // Where llhttp itself refuses the byte after a CR, its error stands (the same whatever the cut).
      {"CR after an empty chunk extension", chunked_head + "3;\rab\nx=1c\r\n",
       cut_chunked_request(), Errc::malformed, "llhttp: Invalid character in chunk extensions (HPE_STRICT)", 50},
      {"CR followed by another byte in a trailer", chunked_head + "0\r\nT: 1\rX\r\n\r\n",
       cut_chunked_request(), Errc::malformed, "llhttp: Missing expected LF after header value (HPE_LF_EXPECTED)", 55},
      {"obsolete line folding", "POST / HTTP/1.1\r\nX-A: a\r\n Content-Length: 5\r\n\r\nhello", {}, Errc::malformed,
       folding, 25},
      {"whitespace before the first header field", "GET / HTTP/1.1\r\n\tHost: h\r\n\r\n", {}, Errc::malformed,
       folding, 16},
      {"Transfer-Encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", {},
       Errc::malformed, "Transfer-Encoding in an HTTP/1.0 request"},
      // Valid per RFC 9112 7.1.1, refused by llhttp 8.1: a documented limit (parser.hpp, docs/server.md).
      {"a second chunk extension (llhttp 8.1's limit)", chunked_head + "2;a=b;c=d\r\nab\r\n0\r\n\r\n",
       cut_chunked_request(), Errc::malformed, kBadChunkSize, 53},
  });
  check_rows<RequestParser, RequestRecorder>({
      {"CR/LF before the request line are skipped", "\r\n\r\nGET / HTTP/1.1\r\n\r\n", {request("GET", "/", {.length = 0})}},
      {"a chunked body with extensions and a trailer still parses",
       chunked_head + "3;a=b\r\nabc\r\n0\r\nT: 1\r\n\r\n",
       {request("POST", "/", {.headers = kChunkedHeaders, .body = "abc", .chunked = true})}},
      {"Upgrade: h2c is ignored: the request is plain HTTP/1.1",
       "GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n",
       {request("GET", "/", {.headers = {{"Connection", "Upgrade"}, {"Upgrade", "h2c"}}, .length = 0})}},
  });
}

TEST_CASE("request parser: CR/LF before a request line and empty chunk extensions count against the head limit") {
  const ParserLimits limits{.max_header_bytes = 64, .max_body_bytes = 1024};
  const std::string leading(40, '\n');
  const std::string head = "GET / HTTP/1.1\r\nX: v\r\n\r\n";  // 24 bytes: 64 with the leading bytes
  REQUIRE(leading.size() + head.size() == 64);
  check_rows<RequestParser, RequestRecorder>(
      {
          {"leading CR/LF and a head of exactly the limit", leading + head,
           {request("GET", "/", {.headers = {{"X", "v"}}, .length = 0})}},
          // The same answer however the bytes are cut (it once depended on it).
          {"one leading byte more", "\n" + leading + head, {}, Errc::header_too_large,
           "head exceeds max_header_bytes (64)", 64},
          {"a flood of empty chunk extensions",
           "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1" + std::string(100, ';') + "\r\na\r\n0\r\n\r\n",
           cut_chunked_request(), Errc::header_too_large, "chunk extensions and trailers exceed max_header_bytes (64)"},
      },
      limits);
}

TEST_CASE("request parser: pipelined requests are consumed one at a time, in order") {
  const std::string first = "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n";
  const std::string second = "POST /2 HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi";
  const std::string third = "GET /3 HTTP/1.1\r\n\r\n";
  Guarded buffer(first + second + third);
  RequestParser parser;
  RequestRecorder recorder;
  std::string_view rest = buffer.view();
  for (const std::string* expected : {&first, &second, &third}) {
    CHECK_FALSE(parser.in_message());
    recorder.fed = rest;
    auto consumed = parser.feed(rest, recorder);
    REQUIRE(consumed);
    CHECK(*consumed == expected->size());
    CHECK_FALSE(parser.in_message());
    rest.remove_prefix(*consumed);
  }
  CHECK(rest.empty());
  REQUIRE(recorder.outcome.messages.size() == 3);
  CHECK(recorder.outcome.messages[0].target == "/1");
  CHECK(recorder.outcome.messages[1].body == "hi");
  CHECK(recorder.outcome.messages[2].target == "/3");
  for (const Message& m : recorder.outcome.messages) CHECK(m.complete);
}

TEST_CASE("request parser: head limit and header count") {
  const ParserLimits limits{.max_header_bytes = 64, .max_body_bytes = 16};
  const std::string line = "GET / HTTP/1.1\r\nX: ";
  const std::string exact = line + std::string(64 - line.size() - 4, 'v') + "\r\n\r\n";
  REQUIRE(exact.size() == 64);
  check_rows<RequestParser, RequestRecorder>(
      {
          {"a head of exactly the limit", exact,
           {request("GET", "/", {.headers = {{"X", std::string(64 - line.size() - 4, 'v')}}, .length = 0})}},
          {"a head one byte over the limit", line + std::string(64 - line.size() - 3, 'v') + "\r\n\r\n", {},
           Errc::header_too_large, "head exceeds max_header_bytes (64)", 64},
          {"a body over the limit", "POST / HTTP/1.1\r\nContent-Length: 17\r\n\r\n", {}, Errc::body_too_large,
           "Content-Length 17 exceeds max_body_bytes (16)"},
      },
      limits);
}
