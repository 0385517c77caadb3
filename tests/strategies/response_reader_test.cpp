// strategies/src/response_reader.cpp: the parser driven the way the peers drive it. Every response is
// delivered cut at every byte boundary (two pieces), and byte by byte; each piece is "received" into
// the window the reader gives, as recv would, so the body lands in the sink's buffer exactly as it
// does over a socket.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "response_reader.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/net/padded_buffer.hpp"

namespace ringlab::strategies::detail {
namespace {

struct Delivery {
  http::Result<bool> done = false;
  std::size_t bytes_left = 0;  // bytes not delivered because the response had ended or failed
};

// Delivers `wire` in the given pieces, each split further by the size of the window offered; then,
// if `close_at_end`, reports the peer's close.
Delivery deliver(ResponseReader& reader, std::string_view wire, const std::vector<std::size_t>& piece_ends,
                 bool close_at_end) {
  Delivery delivery;
  std::size_t at = 0;
  for (const std::size_t end : piece_ends) {
    while (at < end) {
      const std::span<char> window = reader.window();
      REQUIRE_FALSE(window.empty());
      const std::size_t n = std::min(window.size(), end - at);
      std::memcpy(window.data(), wire.data() + at, n);
      at += n;
      delivery.done = reader.received(n);
      if (!delivery.done || *delivery.done) {
        delivery.bytes_left = wire.size() - at;
        return delivery;
      }
    }
  }
  if (close_at_end) delivery.done = reader.closed();
  return delivery;
}

struct Good {
  const char* name;
  std::string wire;
  std::string body;
  int status = 200;
  bool needs_close = false;  // close-delimited body
  bool keep_alive = true;
};

std::vector<Good> good_responses() {
  return {
      {"Content-Length body", "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n[{\"a\":1},2]", "[{\"a\":1},2]"},
      {"empty body", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", ""},
      {"chunked body with an extension and a trailer",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\n[1,2\r\nA\r\n,3,4,5,6,7\r\n1\r\n]\r\n0\r\n"
       "Trailer: t\r\n\r\n",
       "[1,2,3,4,5,6,7]"},
      {"close-delimited body", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end", "until the end", 200, true,
       false},
      {"204 has no body whatever it says", "HTTP/1.1 204 No Content\r\n\r\n", "", 204},
      {"an interim 100 before the answer", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
       "ok"},
      {"Connection: close with Content-Length", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye",
       "bye", 200, false, false},
  };
}

void check_good(const Good& good, const std::vector<std::size_t>& piece_ends) {
  ResponseReader reader;
  net::PaddedBuffer body;
  http::PresizedSink sink(body);
  reader.new_connection();
  reader.start(sink, nullptr, nullptr);
  const Delivery delivery = deliver(reader, good.wire, piece_ends, good.needs_close);
  REQUIRE_MESSAGE(delivery.done, (delivery.done ? "" : delivery.done.error().message()));
  CHECK(*delivery.done);
  CHECK(delivery.bytes_left == 0);
  CHECK(reader.status() == good.status);
  CHECK(reader.keep_alive() == good.keep_alive);
  CHECK(body.view() == good.body);
  CHECK(reader.body_bytes() == good.body.size());
}

TEST_CASE("responses read the same whole, cut at every byte, and byte by byte") {
  for (const Good& good : good_responses()) {
    INFO(std::string_view(good.name));
    check_good(good, {good.wire.size()});
    for (std::size_t cut = 1; cut < good.wire.size(); ++cut) {
      INFO("cut at byte " << cut);
      check_good(good, {cut, good.wire.size()});
    }
    std::vector<std::size_t> bytes(good.wire.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = i + 1;
    check_good(good, bytes);
  }
}

TEST_CASE("a large body lands in the sink's window, in place") {
  std::string payload(200'000, 'x');
  const std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(payload.size()) + "\r\n\r\n" + payload;
  ResponseReader reader;
  net::PaddedBuffer body;
  http::PresizedSink sink(body);
  reader.new_connection();
  reader.start(sink, nullptr, nullptr);
  // The head alone first: after it, the window must be the presized buffer's spare room.
  const std::size_t head = wire.size() - payload.size();
  Delivery first = deliver(reader, std::string_view(wire).substr(0, head), {head}, false);
  REQUIRE(first.done);
  const std::span<char> window = reader.window();
  CHECK(window.data() == body.data());
  CHECK(window.size() >= payload.size());
}

TEST_CASE("responses on one connection follow each other; reset between connections") {
  ResponseReader reader;
  net::PaddedBuffer body;
  http::PresizedSink sink(body);
  reader.new_connection();
  for (int i = 0; i < 3; ++i) {
    reader.start(sink, nullptr, nullptr);
    const std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n" + std::to_string(i);
    const Delivery delivery = deliver(reader, wire, {wire.size()}, false);
    REQUIRE(delivery.done);
    CHECK(*delivery.done);
    CHECK(body.view() == std::to_string(i));
  }
}

TEST_CASE("timeline stamps first byte, head and body in order") {
  static uint64_t clock = 0;
  const http::TickSource ticks = []() noexcept { return ++clock; };
  ResponseReader reader;
  net::PaddedBuffer body;
  http::PresizedSink sink(body);
  http::Timeline timeline{};
  reader.new_connection();
  reader.start(sink, &timeline, ticks);
  const std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  REQUIRE(deliver(reader, wire, {10, wire.size()}, false).done);
  CHECK(timeline.first_byte > 0);
  CHECK(timeline.head_parsed > timeline.first_byte);
  CHECK(timeline.body_done > timeline.head_parsed);
}

struct Bad {
  const char* name;
  std::string wire;
  bool close_at_end;
  http::Errc code;
  // Cuts in [complete_from, complete_to] end a receive at the end of a complete response (the head
  // alone, then a body window of exactly Content-Length bytes; or the response exactly): the reader
  // cannot see what follows, so that response succeeds and the bytes after it fail the next one.
  std::size_t complete_from = std::string::npos;
  std::size_t complete_to = std::string::npos;
};

TEST_CASE("bad responses are errors of the right kind, at every cut") {
  const Bad bads[] = {
      {"closed inside the body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345", true, http::Errc::truncated},
      {"closed inside the head", "HTTP/1.1 200 OK\r\nContent-Len", true, http::Errc::truncated},
      {"closed before any byte", "", true, http::Errc::truncated},
      {"bytes after the response", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", false, http::Errc::malformed,
       38, 40},
      {"chunk size not hex", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n", false,
       http::Errc::malformed},
      {"chunk data without CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n0\r\n\r\n", false,
       http::Errc::malformed},
      {"closed inside a chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc", true,
       http::Errc::truncated},
      {"not HTTP", "SSH-2.0-OpenSSH_9.2\r\n", false, http::Errc::malformed},
      {"Content-Length twice", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na", false,
       http::Errc::malformed},
  };
  for (const Bad& bad : bads) {
    INFO(std::string_view(bad.name));
    for (std::size_t cut = 0; cut <= bad.wire.size(); ++cut) {
      INFO("cut at byte " << cut);
      ResponseReader reader;
      net::PaddedBuffer body;
      http::PresizedSink sink(body);
      reader.new_connection();
      reader.start(sink, nullptr, nullptr);
      std::vector<std::size_t> ends;
      if (cut > 0 && cut < bad.wire.size()) ends.push_back(cut);
      ends.push_back(bad.wire.size());
      Delivery delivery = deliver(reader, bad.wire, ends, bad.close_at_end);
      if (cut >= bad.complete_from && cut <= bad.complete_to) {
        REQUIRE(delivery.done);
        CHECK(*delivery.done);
        REQUIRE(delivery.bytes_left > 0);
        reader.start(sink, nullptr, nullptr);
        const std::string rest = bad.wire.substr(bad.wire.size() - delivery.bytes_left);
        delivery = deliver(reader, rest, {rest.size()}, bad.close_at_end);
      }
      REQUIRE_FALSE(delivery.done);
      INFO(delivery.done.error().message());
      CHECK(delivery.done.error().code == bad.code);
    }
  }
}

TEST_CASE("limits: a head over max_header_bytes and a body over max_body_bytes") {
  {
    ResponseReader reader(http::ParserLimits{.max_header_bytes = 64, .max_body_bytes = 1000});
    net::PaddedBuffer body;
    http::PresizedSink sink(body);
    reader.new_connection();
    reader.start(sink, nullptr, nullptr);
    const std::string wire = "HTTP/1.1 200 OK\r\nX-Long: " + std::string(100, 'a') + "\r\nContent-Length: 0\r\n\r\n";
    const Delivery delivery = deliver(reader, wire, {wire.size()}, false);
    REQUIRE_FALSE(delivery.done);
    CHECK(delivery.done.error().code == http::Errc::header_too_large);
  }
  {
    ResponseReader reader(http::ParserLimits{.max_header_bytes = 1024, .max_body_bytes = 10});
    net::PaddedBuffer body;
    http::PresizedSink sink(body);
    reader.new_connection();
    reader.start(sink, nullptr, nullptr);
    const std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n01234567890";
    const Delivery delivery = deliver(reader, wire, {wire.size()}, false);
    REQUIRE_FALSE(delivery.done);
    CHECK(delivery.done.error().code == http::Errc::body_too_large);
  }
}

}  // namespace
}  // namespace ringlab::strategies::detail
