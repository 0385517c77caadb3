// Bad input over a raw socket: each case gets its status, and the server keeps serving.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "support.hpp"

using namespace ringlab;
using namespace ringlab::e2e;

namespace {

struct BadCase {
  const char* what;
  std::string request;
  int status;
  bool closes;  // the server ends the connection after the answer
  std::string allow = {};
};

constexpr std::size_t kMaxBody = 64 * 1024;

std::vector<BadCase> bad_cases() {
  const std::string big_header = "X-Big: " + std::string(17 * 1024, 'a') + "\r\n";
  const std::string near_limit = "X-Big: " + std::string(15 * 1024, 'a') + "\r\n";
  return {
      {"not HTTP at all", "GARBAGE\r\n\r\n", 400, true},
      {"binary noise", std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) + "\r\n\r\n", 400, true},
      {"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, true},
      {"unknown version", "GET /health HTTP/3.7\r\nHost: x\r\n\r\n", 400, true},
      {"space in header name", "GET /health HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n", 400, true},
      {"NUL in header value", std::string("GET /health HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n", 41), 400, true},
      {"head over 16 KiB", "GET /health HTTP/1.1\r\nHost: x\r\n" + big_header + "\r\n", 431, true},
      {"target over 16 KiB", "GET /weather?" + std::string(17 * 1024, 'q') + " HTTP/1.1\r\nHost: x\r\n\r\n", 431, true},
      {"head just under the limit", "GET /health HTTP/1.1\r\nHost: x\r\n" + near_limit + "\r\n", 200, false},
      {"Content-Length over --max-body",
       "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(kMaxBody + 1) + "\r\n\r\n", 413, true},
      {"chunked body over --max-body",
       "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10001\r\n", 413, true},
      {"bad chunk size", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
       400, true},
      {"chunk without CRLF", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX0\r\n\r\n",
       400, true},
      {"Content-Length and Transfer-Encoding",
       "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
       true},
      {"two Content-Lengths", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nab",
       400, true},
      {"negative Content-Length", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400, true},
      {"unknown path", get_request("/nothing"), 404, false},
      {"wrong method on a GET route", "POST /weather HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405, false,
       "GET, HEAD"},
      {"wrong method on /echo", get_request("/echo"), 405, false, "POST"},
      {"DELETE", "DELETE /health HTTP/1.1\r\nHost: x\r\n\r\n", 405, false, "GET, HEAD"},
      {"count not a number", get_request("/weather?count=abc"), 400, false},
      {"count negative", get_request("/weather?count=-1"), 400, false},
      {"count above 1,000,000", get_request("/repos?count=1000001"), 400, false},
      {"count overflowing 64 bits", get_request("/weather?count=99999999999999999999999"), 400, false},
      {"bad format", get_request("/weather?format=xml"), 400, false},
      {"bad chunk parameter", get_request("/weather?chunked=1&chunk=0"), 400, false},
      {"bad conn parameter", get_request("/proxy?conn=maybe"), 400, false},
      {"bad client parameter", get_request("/proxy?client=factory"), 400, false},
      {"asterisk target", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 400, false},
      {"count above the route's limit (--max-answer)", get_request("/repos?count=40000"), 400, false},
      // Framing that a lenient parser would read one way and a strict one another.
      {"CR followed by another byte in the head",
       "GET /health HTTP/1.1\r\nHost: x\r\n\rXGET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n", 400, true},
      {"CR followed by another byte in a chunk-size line",
       "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\rXa\r\n0\r\n\r\n", 400, true},
      {"CR followed by another byte after the last chunk",
       "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\rXGET /plaintext "
       "HTTP/1.1\r\nHost: x\r\n\r\n",
       400, true},
      {"obsolete line folding", "POST /echo HTTP/1.1\r\nHost: x\r\nX-A: a\r\n Content-Length: 5\r\n\r\nhello", 400,
       true},
      {"a flood of empty chunk extensions",
       "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1" + std::string(20000, ';') +
           "\r\na\r\n0\r\n\r\n",
       431, true},
      {"Transfer-Encoding in HTTP/1.0",
       "POST /echo HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n", 400, true},
      {"HTTP/1.1 without Host", "GET /health HTTP/1.1\r\n\r\n", 400, true},
      {"HTTP/1.1 with two Hosts", "GET /health HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400, true},
      {"Upgrade: h2c is ignored",
       "GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
       "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
       200, false},
  };
}

}  // namespace

TEST_CASE("each bad request gets its status and a JSON error, and the next connection is served") {
  server::ServerOptions options;
  options.max_body_bytes = kMaxBody;
  TestServer server(options);
  for (const BadCase& bad : bad_cases()) {
    INFO(bad.what);
    {
      RawClient client(server.port());
      client.send(bad.request);
      Response response = client.read_response();
      CHECK(response.status == bad.status);
      if (bad.status != 200) {
        auto message = json_error(response.body);
        CHECK_MESSAGE(message.has_value(), "body: ", response.body);
        CHECK(response.header("Content-Type") == "application/json");
      }
      if (!bad.allow.empty()) CHECK(response.header("Allow") == bad.allow);
      if (bad.closes) {
        CHECK(response.header("Connection") == "close");
        CHECK(client.closed_by_peer());
      } else {
        CHECK_FALSE(response.header("Connection").has_value());
        CHECK(client.get("/health").status == 200);
      }
    }
    RawClient next(server.port());
    Response response = next.get("/plaintext");
    CHECK(response.status == 200);
    CHECK(response.body == "Hello, World!");
  }
  auto stats = server.stop();
  CHECK(stats.accepted == stats.closed);
  const auto cases = bad_cases();
  const auto answered_ok =
      std::count_if(cases.begin(), cases.end(), [](const BadCase& bad) { return bad.status == 200; });
  CHECK(stats.bad_requests >= cases.size() - static_cast<std::size_t>(answered_ok));
}

TEST_CASE("a 413 reaches a client that is still sending its body") {
  server::ServerOptions options;
  options.max_body_bytes = 1024;
  TestServer server(options);
  RawClient client(server.port());
  const std::string body = pattern_bytes(512 * 1024);
  client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n");
  // The server answers at the head and drains what follows, so the whole body can still be sent.
  client.send(body);
  Response response = client.read_response();
  CHECK(response.status == 413);
  CHECK(client.closed_by_peer());
}

TEST_CASE("the head limit follows --max-header") {
  server::ServerOptions options;
  options.max_header_bytes = 512;
  TestServer server(options);
  {
    RawClient client(server.port());
    client.send(get_request("/health", "X-Pad: " + std::string(600, 'p') + "\r\n"));
    CHECK(client.read_response().status == 431);
  }
  RawClient client(server.port());
  client.send(get_request("/health", "X-Pad: " + std::string(300, 'p') + "\r\n"));
  CHECK(client.read_response().status == 200);
}

TEST_CASE("answers before a bad request in a pipeline are kept, then the error, then the close") {
  TestServer server;
  RawClient client(server.port());
  client.send(get_request("/plaintext") + get_request("/health") + "BROKEN\r\n\r\n" + get_request("/plaintext"));
  CHECK(client.read_response().status == 200);
  CHECK(client.read_response().status == 200);
  Response error = client.read_response();
  CHECK(error.status == 400);
  CHECK(client.closed_by_peer());
}

TEST_CASE("clients that vanish mid-request or mid-answer leave the server serving and leak nothing") {
  TestServer server;
  {
    RawClient client(server.port());
    client.send("GET /weather?count=10 HTTP/1.1\r\nHost:");  // cut short, then closed
  }
  {
    RawClient client(server.port());
    client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly part");
    client.reset();
  }
  {
    // A large answer the client never reads, then a reset.
    RawClient client(server.port());
    client.send(get_request("/repos?count=3000"));
    client.reset();
  }
  {
    RawClient client(server.port());
    client.send("");
  }
  RawClient next(server.port());
  CHECK(next.get("/health").status == 200);
  auto stats = server.stop();
  CHECK(stats.accepted == 5);
  CHECK(stats.accepted == stats.closed);
}
