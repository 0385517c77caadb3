// http/src/response_receiver.cpp: the exchange driven as the client and the socket peers drive it.
// Every response is delivered cut at every byte boundary (two pieces), and byte by byte; each piece is
// "received" into the window the receiver gives, as recv would, so the body lands in the sink's buffer
// exactly as it does over a socket. The same bytes also arrive in memory the receiver did not offer,
// as kernel-provided buffers do, each piece in its own allocation freed right after.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <cstring>
#include <string>
#include <vector>

#include "ringlab/http/response_receiver.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/base/padded_buffer.hpp"

namespace ringlab::http {
namespace {

constexpr std::size_t kBufferBytes = 64 * 1024;

struct Delivery {
  Result<bool> done = false;
  std::size_t bytes_left = 0;  // bytes not delivered because the response had ended or failed
};

// Delivers `wire` in the given pieces, each split further by the size of the window offered; then,
// if `close_at_end`, reports the peer's close.
Delivery deliver(ResponseReceiver& reader, std::string_view wire, const std::vector<std::size_t>& piece_ends,
                 bool close_at_end) {
  Delivery delivery;
  std::size_t at = 0;
  for (const std::size_t end : piece_ends) {
    while (at < end) {
      const auto window = reader.window();
      REQUIRE(window);
      REQUIRE_FALSE(window->bytes.empty());
      const std::size_t n = std::min(window->bytes.size(), end - at);
      std::memcpy(window->bytes.data(), wire.data() + at, n);
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

// The same, but every piece lands in memory of its own, freed as soon as the receiver returns (as a
// kernel-provided buffer goes back to the kernel): a view kept into it would be a use after free.
Delivery deliver_elsewhere(ResponseReceiver& reader, std::string_view wire, const std::vector<std::size_t>& piece_ends,
                           bool close_at_end) {
  Delivery delivery;
  std::size_t at = 0;
  for (const std::size_t end : piece_ends) {
    auto piece = std::make_unique<char[]>(end - at);
    std::memcpy(piece.get(), wire.data() + at, end - at);
    delivery.done = reader.received_elsewhere(std::string_view(piece.get(), end - at));
    piece.reset();
    at = end;
    if (!delivery.done || *delivery.done) {
      delivery.bytes_left = wire.size() - at;
      return delivery;
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

enum class Landing { window, small_window, elsewhere };

void check_good(const Good& good, const std::vector<std::size_t>& piece_ends, Landing landing = Landing::window) {
  // small_window: an own buffer smaller than some heads, which must then be carried by the parser.
  ResponseReceiver reader(ParserLimits{}, landing == Landing::small_window ? 16 : kBufferBytes);
  base::PaddedBuffer body;
  PresizedSink sink(body);
  reader.start(sink, nullptr, nullptr);
  const Delivery delivery = landing == Landing::elsewhere ? deliver_elsewhere(reader, good.wire, piece_ends, good.needs_close)
                                                          : deliver(reader, good.wire, piece_ends, good.needs_close);
  REQUIRE_MESSAGE(delivery.done, (delivery.done ? "" : delivery.done.error().message()));
  CHECK(*delivery.done);
  CHECK(delivery.bytes_left == 0);
  CHECK(reader.status() == good.status);
  CHECK(reader.keep_alive() == good.keep_alive);
  CHECK(body.view() == good.body);
  CHECK(reader.body_bytes() == good.body.size());
}

TEST_CASE("responses read the same whole, cut at every byte, and byte by byte, wherever the bytes land") {
  for (const Landing landing : {Landing::window, Landing::small_window, Landing::elsewhere}) {
    for (const Good& good : good_responses()) {
      INFO(std::string_view(good.name) << ", landing " << static_cast<int>(landing));
      check_good(good, {good.wire.size()}, landing);
      for (std::size_t cut = 1; cut < good.wire.size(); ++cut) {
        INFO("cut at byte " << cut);
        check_good(good, {cut, good.wire.size()}, landing);
      }
      std::vector<std::size_t> bytes(good.wire.size());
      for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = i + 1;
      check_good(good, bytes, landing);
    }
  }
}

TEST_CASE("a close before any byte says the peer never answered; a close inside the response is truncated too") {
  ResponseReceiver reader(ParserLimits{}, kBufferBytes);
  base::PaddedBuffer body;
  PresizedSink sink(body);
  reader.start(sink, nullptr, nullptr);
  auto nothing = reader.closed();
  REQUIRE_FALSE(nothing);
  CHECK(nothing.error().code == Errc::truncated);
  CHECK(nothing.error().detail.find("before responding") != std::string::npos);
  CHECK_FALSE(reader.any_byte());
  reader.start(sink, nullptr, nullptr);
  const Delivery part = deliver(reader, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", {40}, true);
  REQUIRE_FALSE(part.done);
  CHECK(part.done.error().code == Errc::truncated);
  CHECK(reader.any_byte());
}

TEST_CASE("a HEAD answer has no body whatever its head says") {
  ResponseReceiver reader(ParserLimits{}, kBufferBytes);
  base::PaddedBuffer body;
  PresizedSink sink(body);
  reader.start(sink, nullptr, nullptr, /*head_request=*/true);
  const std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: 771000\r\n\r\n";
  const Delivery delivery = deliver(reader, wire, {wire.size()}, false);
  REQUIRE(delivery.done);
  CHECK(*delivery.done);
  CHECK(reader.body_bytes() == 0);
}

TEST_CASE("a large body lands in the sink's window, in place") {
  std::string payload(200'000, 'x');
  const std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(payload.size()) + "\r\n\r\n" + payload;
  ResponseReceiver reader(ParserLimits{}, kBufferBytes);
  base::PaddedBuffer body;
  PresizedSink sink(body);
  reader.start(sink, nullptr, nullptr);
  // The head alone first: after it, the window must be the presized buffer's spare room.
  const std::size_t head = wire.size() - payload.size();
  Delivery first = deliver(reader, std::string_view(wire).substr(0, head), {head}, false);
  REQUIRE(first.done);
  const auto window = reader.window();
  REQUIRE(window);
  CHECK(window->bytes.data() == body.data());
  CHECK(window->bytes.size() >= payload.size());
}

TEST_CASE("after a body larger than the buffer, a sink that receives in place gets small head receives") {
  std::string payload(200'000, 'x');
  const std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(payload.size()) + "\r\n\r\n" + payload;
  const std::size_t head = wire.size() - payload.size();
  ResponseReceiver reader(ParserLimits{}, kBufferBytes);
  base::PaddedBuffer body;
  PresizedSink in_place(body);
  CHECK(in_place.receives_in_place());
  // The first response: nothing known of its size, the whole buffer (a small response arrives in one receive).
  reader.start(in_place, nullptr, nullptr);
  auto window = reader.window();
  REQUIRE(window);
  CHECK(window->bytes.size() == kBufferBytes);
  Delivery first = deliver(reader, wire, {wire.size()}, false);
  REQUIRE(first.done);
  REQUIRE(*first.done);
  // The next one, after a body larger than the buffer: the head's receive takes kHeadReceiveBytes, and the
  // sink copies only the body bytes that came with the head; the rest lands in place.
  const uint64_t copied_before = in_place.copied_bytes();
  reader.start(in_place, nullptr, nullptr);
  window = reader.window();
  REQUIRE(window);
  CHECK(window->bytes.size() == kHeadReceiveBytes);
  std::memcpy(window->bytes.data(), wire.data(), kHeadReceiveBytes);
  auto done = reader.received(kHeadReceiveBytes);
  REQUIRE(done);
  CHECK(in_place.copied_bytes() - copied_before == kHeadReceiveBytes - head);
  window = reader.window();
  REQUIRE(window);
  CHECK(window->bytes.data() == body.data() + (kHeadReceiveBytes - head));
  // A head longer than one small receive is appended to across several, and parses whole.
  const std::string long_head = "HTTP/1.1 200 OK\r\nX-Long: " + std::string(3 * kHeadReceiveBytes, 'a') +
                                "\r\nContent-Length: 2\r\n\r\nok";
  ResponseReceiver long_reader(ParserLimits{.max_header_bytes = 64 * 1024}, kBufferBytes);
  base::PaddedBuffer long_body;
  PresizedSink long_sink(long_body);
  long_reader.start(long_sink, nullptr, nullptr);
  REQUIRE(*deliver(long_reader, wire, {wire.size()}, false).done);
  long_reader.start(long_sink, nullptr, nullptr);
  const Delivery whole = deliver(long_reader, long_head, {long_head.size()}, false);
  REQUIRE(whole.done);
  CHECK(*whole.done);
  CHECK(std::string_view(long_body.data(), long_body.size()) == "ok");
  // After a small body, the whole buffer again.
  long_reader.start(long_sink, nullptr, nullptr);
  window = long_reader.window();
  REQUIRE(window);
  CHECK(window->bytes.size() == kBufferBytes);
  // A sink without a window gets the whole buffer whatever came before.
  DiscardSink copying;
  CHECK_FALSE(copying.receives_in_place());
  ResponseReceiver copy_reader(ParserLimits{}, kBufferBytes);
  copy_reader.start(copying, nullptr, nullptr);
  REQUIRE(*deliver(copy_reader, wire, {wire.size()}, false).done);
  copy_reader.start(copying, nullptr, nullptr);
  window = copy_reader.window();
  REQUIRE(window);
  CHECK(window->bytes.size() == kBufferBytes);
}

TEST_CASE("responses on one connection follow each other; reset between connections") {
  ResponseReceiver reader(ParserLimits{}, kBufferBytes);
  base::PaddedBuffer body;
  PresizedSink sink(body);
  for (int i = 0; i < 3; ++i) {
    reader.start(sink, nullptr, nullptr);
    const std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n" + std::to_string(i);
    const Delivery delivery = deliver(reader, wire, {wire.size()}, false);
    REQUIRE(delivery.done);
    CHECK(*delivery.done);
    CHECK(body.view() == std::to_string(i));
  }
}

// A clock for the stamps: every reading one tick after the last, so that stamps in order are increasing.
uint64_t next_tick() noexcept {
  static uint64_t clock = 0;
  return ++clock;
}

// A response exchange that stamps `timeline` on next_tick, its body landing in `body` through a `Sink`.
template <typename Body, typename Sink>
struct StampedExchange {
  ResponseReceiver reader{ParserLimits{}, kBufferBytes};
  Body body{};
  Sink sink{body};
  Timeline timeline{};
  StampedExchange() { reader.start(sink, &timeline, &next_tick); }
};

TEST_CASE("timeline stamps first byte, head and body in order") {
  StampedExchange<base::PaddedBuffer, PresizedSink> exchange;
  const Timeline& timeline = exchange.timeline;
  const std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  REQUIRE(deliver(exchange.reader, wire, {10, wire.size()}, false).done);
  CHECK(timeline.first_byte > 0);
  CHECK(timeline.head_parsed > timeline.first_byte);
  CHECK(timeline.first_body_byte > timeline.head_parsed);
  CHECK(timeline.last_body_byte == timeline.first_body_byte);  // one piece of body
  CHECK(timeline.body_done > timeline.last_body_byte);
}

TEST_CASE("timeline stamps the first and the last body byte as chunks arrive in separate receives") {
  StampedExchange<std::string, StringSink> exchange;
  const Timeline& timeline = exchange.timeline;
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string first = "3\r\nabc\r\n";
  const std::string second = "2\r\nde\r\n";
  const std::string wire = head + first + second + "0\r\n\r\n";
  // The head with the first chunk, the second chunk, then the last chunk alone.
  const std::size_t cuts[] = {head.size() + first.size(), head.size() + first.size() + second.size()};
  REQUIRE(deliver(exchange.reader, wire, {cuts[0]}, false).done);
  const uint64_t first_stamp = timeline.first_body_byte;
  CHECK(first_stamp > timeline.head_parsed);
  CHECK(timeline.last_body_byte == first_stamp);
  const auto rest =
      deliver(exchange.reader, std::string_view(wire).substr(cuts[0]), {cuts[1] - cuts[0], wire.size() - cuts[0]}, false);
  REQUIRE(rest.done);
  CHECK(*rest.done);
  CHECK(exchange.body == "abcde");
  CHECK(timeline.first_body_byte == first_stamp);  // stamped once
  CHECK(timeline.last_body_byte > first_stamp);     // the second chunk's receive
  CHECK(timeline.body_done > timeline.last_body_byte);
}

struct Bad {
  const char* name;
  std::string wire;
  bool close_at_end;
  Errc code;
  // Cuts in [complete_from, complete_to] end a receive at the end of a complete response (the head
  // alone, then a body window of exactly Content-Length bytes; or the response exactly): the reader
  // cannot see what follows, so that response succeeds and the bytes after it fail the next one.
  std::size_t complete_from = std::string::npos;
  std::size_t complete_to = std::string::npos;
};

TEST_CASE("bad responses are errors of the right kind, at every cut") {
  const Bad bads[] = {
      {"closed inside the body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345", true, Errc::truncated},
      {"closed inside the head", "HTTP/1.1 200 OK\r\nContent-Len", true, Errc::truncated},
      {"closed before any byte", "", true, Errc::truncated},
      {"bytes after the response", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", false, Errc::malformed,
       38, 40},
      {"chunk size not hex", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n", false,
       Errc::malformed},
      {"chunk data without CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n0\r\n\r\n", false,
       Errc::malformed},
      {"closed inside a chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc", true,
       Errc::truncated},
      {"not HTTP", "SSH-2.0-OpenSSH_9.2\r\n", false, Errc::malformed},
      {"Content-Length twice", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na", false,
       Errc::malformed},
  };
  for (const Bad& bad : bads) {
    INFO(std::string_view(bad.name));
    for (std::size_t cut = 0; cut <= bad.wire.size(); ++cut) {
      INFO("cut at byte " << cut);
      ResponseReceiver reader(ParserLimits{}, kBufferBytes);
      base::PaddedBuffer body;
      PresizedSink sink(body);
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
    ResponseReceiver reader(ParserLimits{.max_header_bytes = 64, .max_body_bytes = 1000}, kBufferBytes);
    base::PaddedBuffer body;
    PresizedSink sink(body);
    reader.start(sink, nullptr, nullptr);
    const std::string wire = "HTTP/1.1 200 OK\r\nX-Long: " + std::string(100, 'a') + "\r\nContent-Length: 0\r\n\r\n";
    const Delivery delivery = deliver(reader, wire, {wire.size()}, false);
    REQUIRE_FALSE(delivery.done);
    CHECK(delivery.done.error().code == Errc::header_too_large);
  }
  {
    ResponseReceiver reader(ParserLimits{.max_header_bytes = 1024, .max_body_bytes = 10}, kBufferBytes);
    base::PaddedBuffer body;
    PresizedSink sink(body);
    reader.start(sink, nullptr, nullptr);
    const std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n01234567890";
    const Delivery delivery = deliver(reader, wire, {wire.size()}, false);
    REQUIRE_FALSE(delivery.done);
    CHECK(delivery.done.error().code == Errc::body_too_large);
  }
}

}  // namespace
}  // namespace ringlab::http
