#include "ringlab/http/client.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../support/allocation_counter.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/net/fixed_buffers.hpp"
#include "test_server.hpp"
#include "../support/net.hpp"

using namespace ringlab;
using namespace ringlab::http;
using namespace ringlab::http::testing;
using namespace std::chrono_literals;

using ringlab::net::testing::has_recv_multishot;
using ringlab::net::testing::make_ring;
using ringlab::testing::allocations_on_this_thread;

namespace {

// Keeps the URL text alive next to the views Url::parse returns into it.
struct ParsedUrl {
  std::string text;
  Url url;
};

ParsedUrl parse(std::string text) {
  ParsedUrl parsed{std::move(text), {}};
  auto url = Url::parse(parsed.text);
  REQUIRE_MESSAGE(url, (url ? "" : url.error().message()));
  parsed.url = *url;
  return parsed;
}

std::string describe(const Error& error) { return error.message(); }

// Every test client gets short deadlines: a failing test ends in seconds, never hangs.
ClientOptions test_options() {
  ClientOptions options;
  options.connect_timeout = 2s;
  options.io_timeout = 5s;
  return options;
}

std::string_view body_of_request(std::string_view request) {
  const std::size_t at = request.find("\r\n\r\n");
  return at == std::string_view::npos ? std::string_view{} : request.substr(at + 4);
}

std::string_view head_of_request(std::string_view request) {
  const std::size_t at = request.find("\r\n\r\n");
  return request.substr(0, at == std::string_view::npos ? request.size() : at + 4);
}

// Wraps a PresizedSink and records, for every piece of body, whether it arrived at the sink's write
// cursor: the proof that the body was received in place rather than copied.
class InPlaceSpy final : public BodySink {
 public:
  InPlaceSpy(base::PaddedBuffer& buffer, int fixed_index) : buffer_(buffer), inner_(buffer, fixed_index) {}
  Status begin(const ResponseHead& head) override { return inner_.begin(head); }
  ReceiveWindow receive_window() override { return inner_.receive_window(); }
  Status on_body(std::string_view bytes) override {
    if (bytes.data() == buffer_.data() + buffer_.size()) {
      in_place_bytes += bytes.size();
    } else {
      copied_bytes += bytes.size();
      ++copied_pieces;
    }
    return inner_.on_body(bytes);
  }
  Status end() override { return inner_.end(); }

  std::size_t in_place_bytes = 0;
  std::size_t copied_bytes = 0;
  int copied_pieces = 0;

 private:
  base::PaddedBuffer& buffer_;
  PresizedSink inner_;
};

uint64_t fake_ticks() noexcept {
  static std::atomic<uint64_t> now{0};
  return ++now;
}

}  // namespace

TEST_CASE("A Content-Length response arrives whole, small or larger than the receive buffer") {
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{200 * 1024},
                           std::size_t{3u << 20}}) {
    INFO("body size ", size);
    const std::string body = body_of(size);
    TestServer server(respond_with(with_length(body)));
    auto ring = make_ring();
    Client client(*ring, test_options());
    auto url = parse(server.url("/weather?count=10"));
    std::string out;
    StringSink sink(out);
    auto info = client.get(url.url, sink);
    REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
    CHECK(info->status == 200);
    CHECK(info->body_bytes == size);
    CHECK_FALSE(info->reused_connection);
    CHECK(out == body);
    auto requests = server.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].find("GET /weather?count=10 HTTP/1.1\r\n") == 0);
    CHECK(requests[0].find("\r\nHost: 127.0.0.1:" + std::to_string(server.port()) + "\r\n") != std::string::npos);
  }
}

TEST_CASE("A chunked response is de-chunked, whatever the chunk sizes") {
  const std::string body = body_of(300 * 1024, 3);
  const std::vector<std::vector<std::size_t>> plans = {{1}, {7, 4096, 3}, {65536}, {100000, 1, 17}};
  for (const auto& plan : plans) {
    INFO("first chunk size ", plan[0]);
    const std::string response = chunked(plan[0] == 1 ? std::string_view(body).substr(0, 2000) : body, plan);
    const std::string_view expected = plan[0] == 1 ? std::string_view(body).substr(0, 2000) : std::string_view(body);
    TestServer server(respond_with(response));
    auto ring = make_ring();
    Client client(*ring, test_options());
    auto url = parse(server.url());
    std::string out;
    StringSink sink(out);
    auto info = client.get(url.url, sink);
    REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
    CHECK(out == expected);
    CHECK(info->body_bytes == expected.size());
  }
}

TEST_CASE("A close-delimited body ends when the peer closes, and the connection is not kept") {
  const std::string body = body_of(150 * 1024, 4);
  TestServer server([&](ServerConnection& c, TestServer& s) {
    auto request = c.read_request();
    if (!request) return;
    s.record(std::move(*request));
    c.write("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
    c.write(body);
    c.close();
  });
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url());
  std::string out;
  StringSink sink(out);
  auto info = client.get(url.url, sink);
  REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
  CHECK(out == body);
  CHECK(client.stats().connections_opened == 1);
  CHECK(client.stats().connections_closed == 1);
}

TEST_CASE("Keep-alive reuses one connection, and the stats count it") {
  const std::string body = body_of(5000);
  TestServer server(respond_with(with_length(body)));
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url());
  for (int i = 0; i < 5; ++i) {
    INFO("request ", i);
    std::string out;
    StringSink sink(out);
    auto info = client.get(url.url, sink);
    REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
    CHECK(info->reused_connection == (i > 0));
    CHECK(out == body);
  }
  CHECK(client.stats().connections_opened == 1);
  CHECK(client.stats().connections_reused == 4);
  CHECK(client.stats().connections_closed == 0);
  CHECK(server.accepted() == 1);
  client.close_idle();
  CHECK(client.stats().connections_closed == 1);
}

TEST_CASE("fresh_per_request opens and closes one connection per request, asking the server to close") {
  TestServer server(respond_with(with_length("{}")));
  auto ring = make_ring();
  ClientOptions options = test_options();
  options.connection = ConnectionPolicy::fresh_per_request;
  Client client(*ring, options);
  auto url = parse(server.url());
  for (int i = 0; i < 3; ++i) {
    DiscardSink sink;
    auto info = client.get(url.url, sink);
    REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
    CHECK_FALSE(info->reused_connection);
    CHECK(sink.bytes() == 2);
  }
  CHECK(client.stats().connections_opened == 3);
  CHECK(client.stats().connections_reused == 0);
  CHECK(client.stats().connections_closed == 3);
  auto requests = server.requests();
  REQUIRE(requests.size() == 3);
  for (const auto& request : requests) CHECK(request.find("\r\nConnection: close\r\n") != std::string::npos);
}

TEST_CASE("A response that says Connection: close retires its connection") {
  TestServer server(respond_with(with_length("bye", "Connection: close\r\n")));
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url());
  for (int i = 0; i < 2; ++i) {
    std::string out;
    StringSink sink(out);
    auto info = client.get(url.url, sink);
    REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
    CHECK_FALSE(info->reused_connection);
    CHECK(out == "bye");
  }
  CHECK(client.stats().connections_opened == 2);
  CHECK(client.stats().connections_closed == 2);
}

TEST_CASE("Every send mode puts the same bytes on the wire") {
  const std::string payload = body_of(300 * 1024, 9);
  TestServer server(respond_with(with_length("ok")));
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url("/echo"));
  const SendMode modes[] = {SendMode::copy, SendMode::writev, SendMode::zero_copy};
  for (SendMode mode : modes) {
    INFO("send mode ", static_cast<int>(mode));
    Request request{.method = "POST", .body = payload, .content_type = "application/json", .send = mode};
    std::string out;
    StringSink sink(out);
    auto info = client.request(url.url, request, sink);
    REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
    CHECK(out == "ok");
    if (mode == SendMode::zero_copy) {
      CHECK(info->zero_copy.bytes == payload.size());
      CHECK(info->zero_copy.sends >= 1);
      if (ring->features().send_zc_report_usage) CHECK(info->zero_copy.copied_sends == info->zero_copy.sends);
    } else {
      CHECK(info->zero_copy.sends == 0);
    }
  }
  auto requests = server.requests();
  REQUIRE(requests.size() == 3);
  for (const auto& request : requests) {
    CHECK(head_of_request(request) == head_of_request(requests[0]));
    CHECK(body_of_request(request) == payload);
  }
  CHECK(head_of_request(requests[0]).find("POST /echo HTTP/1.1\r\n") == 0);
  CHECK(head_of_request(requests[0]).find("\r\nContent-Length: " + std::to_string(payload.size()) + "\r\n") !=
        std::string_view::npos);
}

TEST_CASE("Every sink receives the same bytes, for every framing and receive mode") {
  const std::string body = body_of(700 * 1024, 5);
  struct Framing {
    const char* name;
    std::string response;
    bool close_after;
  };
  const Framing framings[] = {
      {"content-length", with_length(body), false},
      {"chunked", chunked(body, {1000, 70000, 5}), false},
      {"close-delimited", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body, true},
  };
  for (ReceiveMode mode : {ReceiveMode::own_buffer, ReceiveMode::provided_buffers}) {
    for (const Framing& framing : framings) {
      TestServer server([&](ServerConnection& c, TestServer&) {
        while (c.read_request()) {
          if (!c.write(framing.response)) return;
          if (framing.close_after) return;
        }
      });
      auto ring = make_ring();
      if (mode == ReceiveMode::provided_buffers && !ring->features().recv_multishot) continue;
      auto fixed = net::FixedBuffers::create(*ring, 1, 1u << 20);
      REQUIRE(fixed);
      ClientOptions options = test_options();
      options.receive = mode;
      options.receive_buffer_bytes = 16 * 1024;
      options.provided_buffer_count = 16;
      Client client(*ring, options);
      auto url = parse(server.url());

      std::string as_string;
      base::PaddedBuffer growing, presized;
      // A PaddedBuffer carved out of the registered buffer: its memory is the fixed buffer.
      auto region = (*fixed)->buffer(0);
      std::pmr::monotonic_buffer_resource arena(region.data(), region.size() + base::kPadding,
                                                std::pmr::null_memory_resource());
      base::PaddedBuffer in_fixed(region.size() - 64, &arena);
      StringSink string_sink(as_string);
      GrowingSink growing_sink(growing);
      PresizedSink presized_sink(presized);
      PresizedSink fixed_sink(in_fixed, 0);
      DiscardSink discard_sink;
      struct Case {
        const char* name;
        BodySink* sink;
        std::function<std::string_view()> bytes;
      };
      const Case cases[] = {
          {"string", &string_sink, [&] { return std::string_view(as_string); }},
          {"growing", &growing_sink, [&] { return growing.view(); }},
          {"presized", &presized_sink, [&] { return presized.view(); }},
          {"presized in a fixed buffer", &fixed_sink, [&] { return in_fixed.view(); }},
      };
      for (const Case& c : cases) {
        INFO("receive mode ", static_cast<int>(mode), ", framing ", std::string(framing.name), ", sink ", std::string(c.name));
        auto info = client.get(url.url, *c.sink);
        REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
        CHECK(c.bytes().size() == body.size());
        CHECK(c.bytes() == body);
      }
      INFO("receive mode ", static_cast<int>(mode), ", framing ", std::string(framing.name), ", sink discard");
      auto info = client.get(url.url, discard_sink);
      REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
      CHECK(discard_sink.bytes() == body.size());
      if (!framing.close_after) CHECK(client.stats().connections_opened == 1);
    }
  }
}

TEST_CASE("PresizedSink receives a Content-Length body in place: no copy after the head's receive") {
  const std::string body = body_of(2u << 20, 8);
  TestServer server(respond_with(with_length(body)));
  auto ring = make_ring();
  auto fixed = net::FixedBuffers::create(*ring, 1, 4u << 20);
  REQUIRE(fixed);
  ClientOptions options = test_options();
  options.receive_buffer_bytes = 8 * 1024;
  Client client(*ring, options);
  auto url = parse(server.url());

  SUBCASE("heap buffer") {
    base::PaddedBuffer buffer;
    InPlaceSpy spy(buffer, -1);
    for (int round = 0; round < 2; ++round) {  // the second time over a reused connection
      auto info = client.get(url.url, spy);
      REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
      CHECK(buffer.view() == body);
    }
    INFO("in place ", spy.in_place_bytes, ", copied ", spy.copied_bytes);
    // Only what came in the same receive as a head was copied: at most one piece per response.
    CHECK(spy.copied_pieces <= 2);
    CHECK(spy.copied_bytes <= 2 * options.receive_buffer_bytes);
    CHECK(spy.in_place_bytes + spy.copied_bytes == 2 * body.size());
  }
  SUBCASE("registered buffer, received with read_fixed") {
    auto region = (*fixed)->buffer(0);
    std::pmr::monotonic_buffer_resource arena(region.data(), region.size() + base::kPadding,
                                              std::pmr::null_memory_resource());
    base::PaddedBuffer buffer(region.size() - 64, &arena);
    const char* start = buffer.data();
    InPlaceSpy spy(buffer, 0);
    auto info = client.get(url.url, spy);
    REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
    CHECK(buffer.data() == start);  // never reallocated out of the registered memory
    CHECK(buffer.view() == body);
    CHECK(spy.copied_pieces <= 1);
    CHECK(spy.in_place_bytes >= body.size() - options.receive_buffer_bytes);
  }
}

TEST_CASE("PresizedSink with a fixed buffer refuses a body larger than the buffer") {
  TestServer server(respond_with(with_length(body_of(10000))));
  auto ring = make_ring();
  auto fixed = net::FixedBuffers::create(*ring, 1, 8192);
  REQUIRE(fixed);
  Client client(*ring, test_options());
  auto url = parse(server.url());
  auto region = (*fixed)->buffer(0);
  std::pmr::monotonic_buffer_resource arena(region.data(), region.size() + base::kPadding,
                                            std::pmr::null_memory_resource());
  base::PaddedBuffer buffer(region.size(), &arena);
  PresizedSink sink(buffer, 0);
  auto info = client.get(url.url, sink);
  REQUIRE_FALSE(info);
  CHECK(info.error().code == Errc::body_too_large);
  CHECK(client.stats().connections_closed == 1);
}

TEST_CASE("A closed port is Errc::refused") {
  uint16_t port;
  {
    TestServer server(respond_with(""));
    port = server.port();
  }
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse("http://127.0.0.1:" + std::to_string(port) + "/");
  DiscardSink sink;
  auto info = client.get(url.url, sink);
  REQUIRE_FALSE(info);
  CHECK(info.error().code == Errc::refused);
  CHECK(info.error().peer == "127.0.0.1:" + std::to_string(port));
  CHECK(client.stats().connections_opened == 0);
}

TEST_CASE("A reset in the middle of the body is Errc::reset, and the connection is not reused") {
  TestServer server([](ServerConnection& c, TestServer&) {
    if (!c.read_request()) return;
    c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n");
    c.write(body_of(1000));
    std::this_thread::sleep_for(20ms);
    c.reset();
  });
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url());
  std::string out;
  StringSink sink(out);
  auto info = client.get(url.url, sink);
  REQUIRE_FALSE(info);
  INFO(describe(info.error()));
  CHECK(info.error().code == Errc::reset);
  CHECK(client.stats().connections_closed == 1);
}

TEST_CASE("A silent server is Errc::timeout after io_timeout") {
  TestServer server([](ServerConnection& c, TestServer&) {
    if (!c.read_request()) return;
    c.wait_for_close();  // says nothing; returns when the client gives up and closes
  });
  auto ring = make_ring();
  ClientOptions options = test_options();
  options.io_timeout = 200ms;
  Client client(*ring, options);
  auto url = parse(server.url());
  DiscardSink sink;
  auto info = client.get(url.url, sink);
  REQUIRE_FALSE(info);
  INFO(describe(info.error()));
  CHECK(info.error().code == Errc::timeout);
  CHECK(client.stats().connections_closed == 1);
}

TEST_CASE("A body cut short by the peer closing is Errc::truncated") {
  TestServer server([](ServerConnection& c, TestServer&) {
    if (!c.read_request()) return;
    c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
    c.write(body_of(500));
    c.close();
  });
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url());
  DiscardSink sink;
  auto info = client.get(url.url, sink);
  REQUIRE_FALSE(info);
  INFO(describe(info.error()));
  CHECK(info.error().code == Errc::truncated);
}

TEST_CASE("A peer that closes before responding is Errc::truncated") {
  TestServer server([](ServerConnection& c, TestServer&) {
    if (c.read_request()) c.close();
  });
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url());
  DiscardSink sink;
  auto info = client.get(url.url, sink);
  REQUIRE_FALSE(info);
  CHECK(info.error().code == Errc::truncated);
}

TEST_CASE("Malformed responses are Errc::malformed") {
  const std::string rows[] = {
      "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",
      "garbage\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
  };
  for (const std::string& response : rows) {
    INFO("response ", response);
    TestServer server(respond_with(response));
    auto ring = make_ring();
    Client client(*ring, test_options());
    auto url = parse(server.url());
    DiscardSink sink;
    auto info = client.get(url.url, sink);
    REQUIRE_FALSE(info);
    INFO(describe(info.error()));
    CHECK(info.error().code == Errc::malformed);
    CHECK(client.stats().connections_closed == 1);
  }
}

TEST_CASE("Bytes after the response on a kept-alive connection are malformed, and it is closed") {
  TestServer server(respond_with(with_length("ok") + "HTTP/1.1 200 OK\r\n"));
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url());
  std::string out;
  StringSink sink(out);
  auto info = client.get(url.url, sink);
  REQUIRE_FALSE(info);
  INFO(describe(info.error()));
  CHECK(info.error().code == Errc::malformed);
  CHECK(info.error().detail.find("unsolicited") != std::string::npos);
  CHECK(client.stats().connections_closed == 1);
}

TEST_CASE("A head over max_header_bytes is Errc::header_too_large") {
  const std::string big_header = "X-Padding: " + std::string(20 * 1024, 'p') + "\r\n";
  TestServer server(respond_with(with_length("{}", big_header)));
  auto ring = make_ring();
  SUBCASE("default limit, receive buffer larger than the limit") {
    Client client(*ring, test_options());
    auto url = parse(server.url());
    DiscardSink sink;
    auto info = client.get(url.url, sink);
    REQUIRE_FALSE(info);
    CHECK(info.error().code == Errc::header_too_large);
  }
  SUBCASE("a limit larger than the receive buffer: the head spans several receives") {
    ClientOptions options = test_options();
    options.receive_buffer_bytes = 4096;
    options.limits.max_header_bytes = 64 * 1024;
    Client client(*ring, options);
    auto url = parse(server.url());
    std::string out;
    StringSink sink(out);
    auto info = client.get(url.url, sink);
    REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
    CHECK(out == "{}");
  }
}

TEST_CASE("A body over max_body_bytes is Errc::body_too_large, for every framing") {
  const std::string body = body_of(5000);
  const std::string responses[] = {with_length(body), chunked(body, {1000}),
                                   "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body};
  for (const std::string& response : responses) {
    INFO(response.substr(0, 40));
    TestServer server([&](ServerConnection& c, TestServer&) {
      if (!c.read_request()) return;
      c.write(response);
      c.wait_for_close();
    });
    auto ring = make_ring();
    ClientOptions options = test_options();
    options.limits.max_body_bytes = 4000;
    Client client(*ring, options);
    auto url = parse(server.url());
    std::string out;
    StringSink sink(out);
    auto info = client.get(url.url, sink);
    REQUIRE_FALSE(info);
    CHECK(info.error().code == Errc::body_too_large);
  }
}

TEST_CASE("https and host names are unsupported") {
  auto https = Url::parse("https://127.0.0.1/");
  REQUIRE_FALSE(https);
  CHECK(https.error().code == Errc::unsupported);

  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse("http://example.invalid/");
  DiscardSink sink;
  auto info = client.get(url.url, sink);
  REQUIRE_FALSE(info);
  CHECK(info.error().code == Errc::unsupported);
  CHECK(client.stats().connections_opened == 0);
}

TEST_CASE("A 100 Continue before the response is skipped") {
  TestServer server(respond_with("HTTP/1.1 100 Continue\r\n\r\n" + with_length("final")));
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url());
  std::string out;
  StringSink sink(out);
  auto info = client.get(url.url, sink);
  REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
  CHECK(info->status == 200);
  CHECK(out == "final");
}

TEST_CASE("A HEAD response ends with its head and keeps the connection") {
  TestServer server(respond_with("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n"));
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url());
  for (int i = 0; i < 2; ++i) {
    DiscardSink sink;
    auto info = client.request(url.url, Request{.method = "HEAD"}, sink);
    REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
    CHECK(info->body_bytes == 0);
    CHECK(info->reused_connection == (i > 0));
  }
}

TEST_CASE("After an error the connection is closed and the next request opens a new one") {
  std::atomic<int> served{0};
  TestServer server([&](ServerConnection& c, TestServer&) {
    while (c.read_request()) {
      // The first response is malformed; later ones are fine.
      if (!c.write(served++ == 0 ? std::string("HTTP/1.1 999x\r\n\r\n") : with_length("fine"))) return;
    }
  });
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url());
  std::string out;
  StringSink sink(out);
  auto first = client.get(url.url, sink);
  REQUIRE_FALSE(first);
  auto second = client.get(url.url, sink);
  REQUIRE_MESSAGE(second, (second ? "" : describe(second.error())));
  CHECK_FALSE(second->reused_connection);
  CHECK(out == "fine");
  CHECK(client.stats().connections_opened == 2);
  CHECK(server.accepted() == 2);
}

TEST_CASE("A response split at every byte boundary parses the same") {
  const std::string body = body_of(300, 2);
  const std::string responses[] = {with_length(body), chunked(body, {100, 7})};
  for (ReceiveMode mode : {ReceiveMode::own_buffer, ReceiveMode::provided_buffers}) {
    for (const std::string& response : responses) {
      TestServer server([&](ServerConnection& c, TestServer&) {
        std::size_t split = 1;
        while (c.read_request()) {
          // Two writes with a pause between: the client sees (most often) two receives.
          c.write(std::string_view(response).substr(0, split));
          std::this_thread::sleep_for(1ms);
          if (!c.write(std::string_view(response).substr(split))) return;
          ++split;
        }
      });
      auto ring = make_ring();
      if (mode == ReceiveMode::provided_buffers && !ring->features().recv_multishot) continue;
      ClientOptions options = test_options();
      options.receive = mode;
      options.receive_buffer_bytes = 4096;
      options.provided_buffer_count = 8;
      Client client(*ring, options);
      auto url = parse(server.url());
      for (std::size_t split = 1; split < response.size(); ++split) {
        INFO("receive mode ", static_cast<int>(mode), ", split at ", split, " of ", response.size());
        base::PaddedBuffer buffer;
        PresizedSink sink(buffer);
        auto info = client.get(url.url, sink);
        REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
        REQUIRE(buffer.view() == body);
      }
      CHECK(client.stats().connections_opened == 1);
    }
  }
}

TEST_CASE("The timeline stamps every phase in order; a reused connection has no connect") {
  TestServer server(respond_with(with_length(body_of(1000))));
  auto ring = make_ring();
  ClientOptions options = test_options();
  options.ticks = &fake_ticks;
  Client client(*ring, options);
  auto url = parse(server.url());
  for (int i = 0; i < 2; ++i) {
    INFO("request ", i);
    Timeline timeline;
    timeline.deserialized = 42;  // overwritten: request() starts from a clean timeline
    DiscardSink sink;
    auto info = client.get(url.url, sink, &timeline);
    REQUIRE(info);
    CHECK(timeline.start > 0);
    if (i == 0) {
      CHECK(timeline.connected > timeline.start);
      CHECK(timeline.request_sent > timeline.connected);
    } else {
      CHECK(timeline.connected == 0);
      CHECK(timeline.request_sent > timeline.start);
    }
    CHECK(timeline.first_byte > timeline.request_sent);
    CHECK(timeline.head_parsed > timeline.first_byte);
    CHECK(timeline.body_done > timeline.head_parsed);
    CHECK(timeline.deserialized == 0);
  }
}

TEST_CASE("Without a tick source the timeline is left at zero") {
  TestServer server(respond_with(with_length("x")));
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url());
  Timeline timeline;
  DiscardSink sink;
  REQUIRE(client.get(url.url, sink, &timeline));
  CHECK(timeline.start == 0);
  CHECK(timeline.body_done == 0);
}

TEST_CASE("provided_buffers: a ring much smaller than the body still delivers it, re-arming when dry" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  const std::string body = body_of(1u << 20, 6);
  TestServer server(respond_with(with_length(body)));
  auto ring = make_ring();
  if (!has_recv_multishot(*ring)) return;
  ClientOptions options = test_options();
  options.receive = ReceiveMode::provided_buffers;
  options.provided_buffer_count = 2;
  options.receive_buffer_bytes = 4096;
  Client client(*ring, options);
  auto url = parse(server.url());
  for (int i = 0; i < 3; ++i) {
    std::string out;
    StringSink sink(out);
    auto info = client.get(url.url, sink);
    REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
    CHECK(out == body);
  }
  MESSAGE("the 2-buffer ring ran dry ", client.stats().provided_ring_dry, " times over 3 MiB");
  CHECK(client.stats().connections_opened == 1);
}

TEST_CASE("A kept-alive connection the server closed is reported, not retried, by default") {
  TestServer server([](ServerConnection& c, TestServer&) {
    if (!c.read_request()) return;
    c.write(with_length("once"));
    c.close();  // without saying so in the response
  });
  auto ring = make_ring();
  Client client(*ring, test_options());
  auto url = parse(server.url());
  std::string out;
  StringSink sink(out);
  REQUIRE(client.get(url.url, sink));
  std::this_thread::sleep_for(20ms);  // lets the FIN arrive; the outcome is checked either way
  auto second = client.get(url.url, sink);
  REQUIRE_FALSE(second);
  INFO(describe(second.error()));
  CHECK((second.error().code == Errc::truncated || second.error().code == Errc::reset));
  CHECK(server.accepted() == 1);  // no second connection behind the caller's back
  CHECK(client.stats().connections_reused == 1);
  CHECK(client.stats().connections_closed == 1);
}

namespace {

// A client with retry_stale_connection on, against one TestServer: each case then says only what the
// server does and what the client reports.
struct RetryingClient {
  explicit RetryingClient(TestServer& server) : url(parse(server.url())) {}
  static ClientOptions options() {
    ClientOptions options = test_options();
    options.retry_stale_connection = true;
    return options;
  }
  // The body lands in `out`, which each call empties first.
  auto get() {
    out.clear();
    StringSink sink(out);
    return client.get(url.url, sink);
  }
  std::unique_ptr<ringlab::net::Ring> ring = make_ring();
  Client client{*ring, options()};
  ParsedUrl url;
  std::string out;
};

}  // namespace

TEST_CASE("retry_stale_connection sends once more on a new connection, and only before any response byte") {
  // Each connection answers one request and closes without saying so: every reuse is stale.
  TestServer server([](ServerConnection& c, TestServer&) {
    if (!c.read_request()) return;
    c.write(with_length("once"));
    c.close();
  });
  RetryingClient retrying(server);
  for (int i = 0; i < 3; ++i) {
    auto response = retrying.get();
    INFO(i);
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(retrying.out == "once");
    std::this_thread::sleep_for(20ms);  // the FIN arrives before the next request
  }
  CHECK(retrying.client.stats().stale_retries == 2);
  CHECK(server.accepted() == 3);
}

TEST_CASE("retry_stale_connection does not resend after a response byte, on a fresh connection, or twice") {
  // A first request that fails is not sent again: its response had begun, or its connection was new.
  const struct {
    const char* what;
    TestServer::Handler server;
  } rows[] = {
      {"a response cut after its first bytes",
       [](ServerConnection& c, TestServer&) {
         if (!c.read_request()) return;
         c.write("HTTP/1.1 200 OK\r\nContent-Len");
         c.close();
       }},
      {"a new connection that closes before responding",
       [](ServerConnection& c, TestServer&) {
         (void)c.read_request();
         c.close();
       }},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    TestServer server(row.server);
    RetryingClient retrying(server);
    auto response = retrying.get();
    REQUIRE_FALSE(response);
    CHECK(response.error().code == Errc::truncated);
    CHECK(retrying.client.stats().stale_retries == 0);
    CHECK(server.accepted() == 1);
  }
  {
    // The second attempt failing too is reported: one retry, no more. The first connection answers
    // once; every later one closes before responding.
    TestServer server([](ServerConnection& c, TestServer& s) {
      if (!c.read_request()) return;
      if (s.accepted() == 1) c.write(with_length("once"));
      c.close();
    });
    RetryingClient retrying(server);
    REQUIRE(retrying.get());
    std::this_thread::sleep_for(20ms);
    auto second = retrying.get();
    REQUIRE_FALSE(second);
    CHECK(second.error().code == Errc::truncated);
    CHECK(retrying.client.stats().stale_retries == 1);
    CHECK(server.accepted() == 2);
  }
}

TEST_CASE("A request on a warm kept-alive connection allocates nothing, in every receive and send mode") {
  const std::string body = body_of(200 * 1024, 1);
  TestServer server(respond_with(with_length(body)));
  for (ReceiveMode mode : {ReceiveMode::own_buffer, ReceiveMode::provided_buffers}) {
    auto ring = make_ring();
    if (mode == ReceiveMode::provided_buffers && !ring->features().recv_multishot) continue;
    ClientOptions options = test_options();
    options.receive = mode;
    Client client(*ring, options);
    auto url = parse(server.url());
    base::PaddedBuffer buffer(body.size());
    PresizedSink sink(buffer);
    const std::string payload = body_of(1000, 2);
    for (SendMode send : {SendMode::copy, SendMode::writev, SendMode::zero_copy}) {
      INFO("receive mode ", static_cast<int>(mode), ", send mode ", static_cast<int>(send));
      const Request request{.method = "POST", .body = payload, .send = send};
      REQUIRE(client.request(url.url, request, sink));  // warm-up: connection, buffers, copy buffer
      const std::size_t before = allocations_on_this_thread();
      auto info = client.request(url.url, request, sink);
      const std::size_t after = allocations_on_this_thread();
      REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
      CHECK(info->reused_connection);
      CHECK(buffer.view() == body);
      CHECK(after - before == 0);
    }
  }
}

TEST_CASE("A zero receive buffer is refused before any connection is made") {
  auto ring = make_ring();
  ClientOptions options = test_options();
  options.receive_buffer_bytes = 0;
  Client client(*ring, options);
  auto url = parse("http://127.0.0.1:9/");
  DiscardSink sink;
  auto info = client.get(url.url, sink);
  REQUIRE_FALSE(info);
  CHECK(info.error().code == Errc::io);
  CHECK(client.stats().connections_opened == 0);
}
