// Tests of http/src/request.cpp: the request serializer.
#include <doctest/doctest.h>

#include <array>
#include <span>
#include <string>
#include <vector>

#include "ringlab/http/request.hpp"

using namespace ringlab::http;

namespace {

std::string joined(const SerializedRequest& request) {
  std::string out;
  for (const iovec& part : request.iovecs()) out.append(static_cast<const char*>(part.iov_base), part.iov_len);
  return out;
}

// A valid request for "/" on host "h", but for one extra header.
RequestSpec with_header(std::string_view method, std::span<const Header> header) {
  return RequestSpec{.method = method, .host = "h", .target = "/", .extra_headers = header};
}

}  // namespace

TEST_CASE("serialize writes the head, and the body as a second part") {
  const std::array<Header, 2> extra = {Header{"Accept", "application/json"}, Header{"X-Trace", "a b\tc"}};
  struct Row {
    const char* name;
    RequestSpec spec;
    const char* head;
  };
  const Row rows[] = {
      {"GET keeps the connection and sends no Content-Length",
       {.method = "GET", .host = "127.0.0.1:8080", .target = "/weather?count=10"},
       "GET /weather?count=10 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"},
      {"Connection: close when keep_alive is false",
       {.method = "GET", .host = "h", .target = "/", .keep_alive = false},
       "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"},
      {"POST with a body gets Content-Type and Content-Length",
       {.method = "POST", .host = "h", .target = "/echo", .body = "{\"a\":1}", .content_type = "application/json"},
       "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n"},
      {"POST without a body still says Content-Length: 0",
       {.method = "POST", .host = "h", .target = "/echo"},
       "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"},
      {"PUT and PATCH are body methods too", {.method = "PATCH", .host = "h", .target = "/p"},
       "PATCH /p HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"},
      {"a GET with a body says how long it is", {.method = "GET", .host = "h", .target = "/", .body = "xy"},
       "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n"},
      {"extra headers follow Host in order",
       {.method = "DELETE", .host = "[::1]:80", .target = "/r/1", .extra_headers = extra, .keep_alive = false},
       "DELETE /r/1 HTTP/1.1\r\nHost: [::1]:80\r\nAccept: application/json\r\nX-Trace: a b\tc\r\nConnection: close\r\n\r\n"},
  };
  for (const Row& row : rows) {
    INFO("row: " << std::string(row.name));
    std::array<char, 512> buffer{};
    auto request = serialize(row.spec, buffer);
    REQUIRE(request);
    CHECK(request->head() == row.head);
    CHECK(request->parts[0].iov_base == buffer.data());
    if (row.spec.body.empty()) {
      CHECK(request->part_count == 1);
    } else {
      REQUIRE(request->part_count == 2);
      // The body is not copied: the second part is the caller's bytes.
      CHECK(request->parts[1].iov_base == row.spec.body.data());
      CHECK(request->parts[1].iov_len == row.spec.body.size());
      CHECK(joined(*request) == std::string(row.head) + std::string(row.spec.body));
    }
  }
}

TEST_CASE("serialize refuses CR, LF and other control bytes in every field") {
  using namespace std::string_literals;
  for (const std::string& evil : {"a\rb"s, "a\nb"s, "a\r\nb"s, "a\0b"s, "a\x7f"s}) {
    INFO("control byte: " << int(evil[1]));
    const std::string target = "/" + evil;
    const std::array<Header, 1> evil_value = {Header{"X-A", evil}};
    const std::array<Header, 1> evil_name = {Header{evil, "v"}};
    const RequestSpec specs[] = {
        {.method = evil, .host = "h", .target = "/"},
        {.method = "GET", .host = evil, .target = "/"},
        {.method = "GET", .host = "h", .target = target},
        with_header("GET", evil_value),
        with_header("GET", evil_name),
        {.method = "POST", .host = "h", .target = "/", .body = "x", .content_type = evil},
    };
    for (std::size_t i = 0; i < std::size(specs); ++i) {
      INFO("field " << i);
      std::array<char, 256> buffer{};
      auto request = serialize(specs[i], buffer);
      REQUIRE_FALSE(request);
      CHECK(request.error().code == Errc::malformed);
      // The detail names the field with the control bytes escaped, so it stays on one line.
      CHECK(request.error().detail.find('\r') == std::string::npos);
      CHECK(request.error().detail.find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("serialize refuses what would make the request ambiguous") {
  struct Row {
    const char* name;
    RequestSpec spec;
    const char* detail;
  };
  const std::array<Header, 1> length = {Header{"content-length", "5"}};
  const std::array<Header, 1> te = {Header{"Transfer-Encoding", "chunked"}};
  const std::array<Header, 1> host = {Header{"HOST", "other"}};
  const std::array<Header, 1> connection = {Header{"Connection", "keep-alive"}};
  const std::array<Header, 1> spaced = {Header{"Bad Name", "v"}};
  const std::array<Header, 1> empty = {Header{"", "v"}};
  const Row rows[] = {
      {"a second Content-Length", with_header("POST", length), "request header is set by the serializer: 'content-length'"},
      {"a Transfer-Encoding", with_header("POST", te), "request header is set by the serializer: 'Transfer-Encoding'"},
      {"a second Host", with_header("GET", host), "request header is set by the serializer: 'HOST'"},
      {"a Connection header", with_header("GET", connection), "request header is set by the serializer: 'Connection'"},
      {"a space in a header name", with_header("GET", spaced), "request header name is not a token: 'Bad Name'"},
      {"an empty header name", with_header("GET", empty), "request header name is not a token: ''"},
      {"an empty method", {.method = "", .host = "h", .target = "/"}, "request method is not a token: ''"},
      {"a space in the method", {.method = "G T", .host = "h", .target = "/"}, "request method is not a token: 'G T'"},
      {"an empty target", {.method = "GET", .host = "h", .target = ""},
       "request target is empty or has a space or control byte: ''"},
      {"a space in the target", {.method = "GET", .host = "h", .target = "/a b"},
       "request target is empty or has a space or control byte: '/a b'"},
      {"an empty host", {.method = "GET", .host = "", .target = "/"}, "request host is empty or has a control byte: ''"},
  };
  for (const Row& row : rows) {
    INFO("row: " << std::string(row.name));
    std::array<char, 256> buffer{};
    auto request = serialize(row.spec, buffer);
    REQUIRE_FALSE(request);
    CHECK(request.error().code == Errc::malformed);
    CHECK(request.error().detail == row.detail);
  }
}

TEST_CASE("serialize needs room for the whole head, to the byte") {
  const RequestSpec spec{.method = "POST", .host = "127.0.0.1:8080", .target = "/echo", .body = "0123456789"};
  const std::string head = "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 10\r\n\r\n";
  std::vector<char> exact(head.size());
  auto fits = serialize(spec, exact);
  REQUIRE(fits);
  CHECK(fits->head() == head);
  for (std::size_t size = 0; size < head.size(); ++size) {
    INFO("buffer of " << size << " bytes");
    std::vector<char> small(size);
    auto request = serialize(spec, small);
    REQUIRE_FALSE(request);
    CHECK(request.error().code == Errc::header_too_large);
    CHECK(request.error().detail == "request head does not fit in the " + std::to_string(size) + "-byte head buffer");
  }
}

TEST_CASE("serialize writes nothing past the head it reports") {
  std::array<char, 128> buffer;
  buffer.fill('#');
  auto request = serialize({.method = "GET", .host = "h", .target = "/"}, buffer);
  REQUIRE(request);
  const std::size_t used = request->head().size();
  for (std::size_t i = used; i < buffer.size(); ++i) CHECK(buffer[i] == '#');
}
