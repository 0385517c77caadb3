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

// test_options() receiving with `mode`, into `buffer_count` buffers of `buffer_bytes` (the
// ClientOptions defaults unless given).
ClientOptions receiving(ReceiveMode mode, std::size_t buffer_bytes = ClientOptions{}.receive_buffer_bytes,
                        unsigned buffer_count = ClientOptions{}.provided_buffer_count) {
  ClientOptions options = test_options();
  options.receive = mode;
  options.receive_buffer_bytes = buffer_bytes;
  options.provided_buffer_count = buffer_count;
  return options;
}

// Cases that loop over the receive modes skip provided_buffers where the kernel has no multishot recv.
bool unavailable(ReceiveMode mode, const net::Ring& ring) {
  return mode == ReceiveMode::provided_buffers && !ring.features().recv_multishot;
}

// The response of an exchange that must succeed; the test fails with the error's message otherwise.
ResponseInfo succeeded(const Result<ResponseInfo>& info) {
  REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
  return *info;
}

// The error of an exchange that must fail.
Error failed(const Result<ResponseInfo>& info) {
  REQUIRE_FALSE(info);
  return info.error();
}

// A client on its own ring, for one URL: each case then says only what the server does and what the
// client reports.
class TestClient {
 public:
  explicit TestClient(const TestServer& server, const ClientOptions& options = test_options(),
                      std::string_view target = "/")
      : TestClient(server.url(target), options) {}
  TestClient(std::string url_text, const ClientOptions& options)
      : client_(*ring, options), url_(parse(std::move(url_text))) {}

  Result<ResponseInfo> request(const Request& request, BodySink& sink, Timeline* timeline = nullptr) {
    return client_.request(url_.url, request, sink, timeline);
  }
  Result<ResponseInfo> get(BodySink& sink, Timeline* timeline = nullptr) { return request(Request{}, sink, timeline); }
  // The body lands in `out`, which each call empties first.
  Result<ResponseInfo> request(const Request& request) {
    out.clear();
    StringSink sink(out);
    return this->request(request, sink);
  }
  Result<ResponseInfo> get() { return request(Request{}); }
  // A GET that must fail, its body (if any) discarded: its error, for the case to check.
  Error failed_get() {
    DiscardSink sink;
    return failed(get(sink));
  }

  [[nodiscard]] const ClientStats& stats() const { return client_.stats(); }
  void close_idle() { client_.close_idle(); }

  std::unique_ptr<net::Ring> ring = make_ring();
  std::string out;

 private:
  Client client_;
  ParsedUrl url_;
};

// A PaddedBuffer carved out of registered buffer 0, `slack` bytes short of it: its memory is the fixed
// buffer, so a PresizedSink over it with fixed index 0 receives with read_fixed.
struct BufferInFixed {
  BufferInFixed(net::FixedBuffers& fixed, std::size_t slack)
      : region(fixed.buffer(0)),
        arena(region.data(), region.size() + base::kPadding, std::pmr::null_memory_resource()),
        buffer(region.size() - slack, &arena) {}
  std::span<char> region;
  std::pmr::monotonic_buffer_resource arena;
  base::PaddedBuffer buffer;
};

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
    TestClient client(server, test_options(), "/weather?count=10");
    const ResponseInfo info = succeeded(client.get());
    CHECK(info.status == 200);
    CHECK(info.body_bytes == size);
    CHECK_FALSE(info.reused_connection);
    CHECK(client.out == body);
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
    TestClient client(server);
    const ResponseInfo info = succeeded(client.get());
    CHECK(client.out == expected);
    CHECK(info.body_bytes == expected.size());
  }
}

TEST_CASE("A close-delimited body ends when the peer closes, and the connection is not kept") {
  const std::string body = body_of(150 * 1024, 4);
  TestServer server(answer_once_then_hang_up({"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", body}));
  TestClient client(server);
  succeeded(client.get());
  CHECK(client.out == body);
  CHECK(client.stats().connections_opened == 1);
  CHECK(client.stats().connections_closed == 1);
}

TEST_CASE("Keep-alive reuses one connection, and the stats count it") {
  const std::string body = body_of(5000);
  TestServer server(respond_with(with_length(body)));
  TestClient client(server);
  for (int i = 0; i < 5; ++i) {
    INFO("request ", i);
    const ResponseInfo info = succeeded(client.get());
    CHECK(info.reused_connection == (i > 0));
    CHECK(client.out == body);
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
  ClientOptions options = test_options();
  options.connection = ConnectionPolicy::fresh_per_request;
  TestClient client(server, options);
  for (int i = 0; i < 3; ++i) {
    DiscardSink sink;
    const ResponseInfo info = succeeded(client.get(sink));
    CHECK_FALSE(info.reused_connection);
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
  TestClient client(server);
  for (int i = 0; i < 2; ++i) {
    const ResponseInfo info = succeeded(client.get());
    CHECK_FALSE(info.reused_connection);
    CHECK(client.out == "bye");
  }
  CHECK(client.stats().connections_opened == 2);
  CHECK(client.stats().connections_closed == 2);
}

TEST_CASE("Every send mode puts the same bytes on the wire") {
  const std::string payload = body_of(300 * 1024, 9);
  TestServer server(respond_with(with_length("ok")));
  TestClient client(server, test_options(), "/echo");
  const SendMode modes[] = {SendMode::copy, SendMode::writev, SendMode::zero_copy};
  for (SendMode mode : modes) {
    INFO("send mode ", static_cast<int>(mode));
    const ResponseInfo info = succeeded(
        client.request(Request{.method = "POST", .body = payload, .content_type = "application/json", .send = mode}));
    CHECK(client.out == "ok");
    if (mode == SendMode::zero_copy) {
      CHECK(info.zero_copy.bytes == payload.size());
      CHECK(info.zero_copy.sends >= 1);
      if (client.ring->features().send_zc_report_usage) CHECK(info.zero_copy.copied_sends == info.zero_copy.sends);
    } else {
      CHECK(info.zero_copy.sends == 0);
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
      TestClient client(server, receiving(mode, 16 * 1024, 16));
      if (unavailable(mode, *client.ring)) continue;
      auto fixed = net::FixedBuffers::create(*client.ring, 1, 1u << 20);
      REQUIRE(fixed);

      std::string as_string;
      base::PaddedBuffer growing, presized;
      BufferInFixed in_fixed(**fixed, 64);
      StringSink string_sink(as_string);
      GrowingSink growing_sink(growing);
      PresizedSink presized_sink(presized);
      PresizedSink fixed_sink(in_fixed.buffer, 0);
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
          {"presized in a fixed buffer", &fixed_sink, [&] { return in_fixed.buffer.view(); }},
      };
      for (const Case& c : cases) {
        INFO("receive mode ", static_cast<int>(mode), ", framing ", std::string(framing.name), ", sink ", std::string(c.name));
        succeeded(client.get(*c.sink));
        CHECK(c.bytes().size() == body.size());
        CHECK(c.bytes() == body);
      }
      INFO("receive mode ", static_cast<int>(mode), ", framing ", std::string(framing.name), ", sink discard");
      succeeded(client.get(discard_sink));
      CHECK(discard_sink.bytes() == body.size());
      if (!framing.close_after) CHECK(client.stats().connections_opened == 1);
    }
  }
}

TEST_CASE("PresizedSink receives a Content-Length body in place: no copy after the head's receive") {
  const std::string body = body_of(2u << 20, 8);
  TestServer server(respond_with(with_length(body)));
  ClientOptions options = test_options();
  options.receive_buffer_bytes = 8 * 1024;
  TestClient client(server, options);
  auto fixed = net::FixedBuffers::create(*client.ring, 1, 4u << 20);
  REQUIRE(fixed);

  SUBCASE("heap buffer") {
    base::PaddedBuffer buffer;
    InPlaceSpy spy(buffer, -1);
    for (int round = 0; round < 2; ++round) {  // the second time over a reused connection
      succeeded(client.get(spy));
      CHECK(buffer.view() == body);
    }
    INFO("in place ", spy.in_place_bytes, ", copied ", spy.copied_bytes);
    // Only what came in the same receive as a head was copied: at most one piece per response.
    CHECK(spy.copied_pieces <= 2);
    CHECK(spy.copied_bytes <= 2 * options.receive_buffer_bytes);
    CHECK(spy.in_place_bytes + spy.copied_bytes == 2 * body.size());
  }
  SUBCASE("registered buffer, received with read_fixed") {
    BufferInFixed in_fixed(**fixed, 64);
    const char* start = in_fixed.buffer.data();
    InPlaceSpy spy(in_fixed.buffer, 0);
    succeeded(client.get(spy));
    CHECK(in_fixed.buffer.data() == start);  // never reallocated out of the registered memory
    CHECK(in_fixed.buffer.view() == body);
    CHECK(spy.copied_pieces <= 1);
    CHECK(spy.in_place_bytes >= body.size() - options.receive_buffer_bytes);
  }
}

TEST_CASE("PresizedSink with a fixed buffer refuses a body larger than the buffer") {
  TestServer server(respond_with(with_length(body_of(10000))));
  TestClient client(server);
  auto fixed = net::FixedBuffers::create(*client.ring, 1, 8192);
  REQUIRE(fixed);
  BufferInFixed in_fixed(**fixed, 0);
  PresizedSink sink(in_fixed.buffer, 0);
  const Error error = failed(client.get(sink));
  CHECK(error.code == Errc::body_too_large);
  CHECK(client.stats().connections_closed == 1);
}

TEST_CASE("A closed port is Errc::refused") {
  uint16_t port;
  {
    TestServer server(respond_with(""));
    port = server.port();
  }
  TestClient client("http://127.0.0.1:" + std::to_string(port) + "/", test_options());
  const Error error = client.failed_get();
  CHECK(error.code == Errc::refused);
  CHECK(error.peer == "127.0.0.1:" + std::to_string(port));
  CHECK(client.stats().connections_opened == 0);
}

TEST_CASE("A reset in the middle of the body is Errc::reset, and the connection is not reused") {
  TestServer server(
      answer_once_then_hang_up({"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n", body_of(1000)}, HangUp::reset));
  TestClient client(server);
  const Error error = failed(client.get());
  INFO(describe(error));
  CHECK(error.code == Errc::reset);
  CHECK(client.stats().connections_closed == 1);
}

TEST_CASE("A silent server is Errc::timeout after io_timeout") {
  TestServer server([](ServerConnection& c, TestServer&) {
    if (!c.read_request()) return;
    c.wait_for_close();  // says nothing; returns when the client gives up and closes
  });
  ClientOptions options = test_options();
  options.io_timeout = 200ms;
  TestClient client(server, options);
  const Error error = client.failed_get();
  INFO(describe(error));
  CHECK(error.code == Errc::timeout);
  CHECK(client.stats().connections_closed == 1);
}

TEST_CASE("A body cut short by the peer closing is Errc::truncated") {
  TestServer server(answer_once_then_hang_up({"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", body_of(500)}));
  TestClient client(server);
  const Error error = client.failed_get();
  INFO(describe(error));
  CHECK(error.code == Errc::truncated);
}

TEST_CASE("A peer that closes before responding is Errc::truncated") {
  TestServer server(answer_once_then_hang_up({}));
  TestClient client(server);
  CHECK(client.failed_get().code == Errc::truncated);
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
    TestClient client(server);
    const Error error = client.failed_get();
    INFO(describe(error));
    CHECK(error.code == Errc::malformed);
    CHECK(client.stats().connections_closed == 1);
  }
}

TEST_CASE("Bytes after the response on a kept-alive connection are malformed, and it is closed") {
  TestServer server(respond_with(with_length("ok") + "HTTP/1.1 200 OK\r\n"));
  TestClient client(server);
  const Error error = failed(client.get());
  INFO(describe(error));
  CHECK(error.code == Errc::malformed);
  CHECK(error.detail.find("unsolicited") != std::string::npos);
  CHECK(client.stats().connections_closed == 1);
}

TEST_CASE("A head over max_header_bytes is Errc::header_too_large") {
  const std::string big_header = "X-Padding: " + std::string(20 * 1024, 'p') + "\r\n";
  TestServer server(respond_with(with_length("{}", big_header)));
  SUBCASE("default limit, receive buffer larger than the limit") {
    TestClient client(server);
    CHECK(client.failed_get().code == Errc::header_too_large);
  }
  SUBCASE("a limit larger than the receive buffer: the head spans several receives") {
    ClientOptions options = test_options();
    options.receive_buffer_bytes = 4096;
    options.limits.max_header_bytes = 64 * 1024;
    TestClient client(server, options);
    succeeded(client.get());
    CHECK(client.out == "{}");
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
    ClientOptions options = test_options();
    options.limits.max_body_bytes = 4000;
    TestClient client(server, options);
    CHECK(failed(client.get()).code == Errc::body_too_large);
  }
}

TEST_CASE("https and host names are unsupported") {
  auto https = Url::parse("https://127.0.0.1/");
  REQUIRE_FALSE(https);
  CHECK(https.error().code == Errc::unsupported);

  TestClient client("http://example.invalid/", test_options());
  CHECK(client.failed_get().code == Errc::unsupported);
  CHECK(client.stats().connections_opened == 0);
}

TEST_CASE("A 100 Continue before the response is skipped") {
  TestServer server(respond_with("HTTP/1.1 100 Continue\r\n\r\n" + with_length("final")));
  TestClient client(server);
  CHECK(succeeded(client.get()).status == 200);
  CHECK(client.out == "final");
}

TEST_CASE("A HEAD response ends with its head and keeps the connection") {
  TestServer server(respond_with("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n"));
  TestClient client(server);
  for (int i = 0; i < 2; ++i) {
    DiscardSink sink;
    const ResponseInfo info = succeeded(client.request(Request{.method = "HEAD"}, sink));
    CHECK(info.body_bytes == 0);
    CHECK(info.reused_connection == (i > 0));
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
  TestClient client(server);
  // One sink for both: the failed first response must leave nothing in it.
  std::string out;
  StringSink sink(out);
  failed(client.get(sink));
  CHECK_FALSE(succeeded(client.get(sink)).reused_connection);
  CHECK(out == "fine");
  CHECK(client.stats().connections_opened == 2);
  CHECK(server.accepted() == 2);
}

TEST_CASE("A response split at every byte boundary parses the same") {
  const std::string body = body_of(300, 2);
  const std::string responses[] = {with_length(body), chunked(body, {100, 7})};
  // own_buffer, provided_buffers, and own_buffer with the first receive queued with the send.
  for (int variant = 0; variant < 3; ++variant) {
    const ReceiveMode mode = variant == 1 ? ReceiveMode::provided_buffers : ReceiveMode::own_buffer;
    ClientOptions options = receiving(mode, 4096, 8);
    options.receive_with_send = variant == 2;
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
      TestClient client(server, options);
      if (unavailable(mode, *client.ring)) continue;
      for (std::size_t split = 1; split < response.size(); ++split) {
        INFO("receive mode ", static_cast<int>(mode), ", receive_with_send ", options.receive_with_send, ", split at ",
             split, " of ", response.size());
        base::PaddedBuffer buffer;
        PresizedSink sink(buffer);
        succeeded(client.get(sink));
        REQUIRE(buffer.view() == body);
      }
      CHECK(client.stats().connections_opened == 1);
    }
  }
}

TEST_CASE("The timeline stamps every phase in order; a reused connection has no connect") {
  TestServer server(respond_with(with_length(body_of(1000))));
  ClientOptions options = test_options();
  options.ticks = &fake_ticks;
  TestClient client(server, options);
  for (int i = 0; i < 2; ++i) {
    INFO("request ", i);
    Timeline timeline;
    timeline.deserialized = 42;  // overwritten: request() starts from a clean timeline
    DiscardSink sink;
    REQUIRE(client.get(sink, &timeline));
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
  TestClient client(server);
  Timeline timeline;
  DiscardSink sink;
  REQUIRE(client.get(sink, &timeline));
  CHECK(timeline.start == 0);
  CHECK(timeline.body_done == 0);
}

TEST_CASE("provided_buffers: a ring much smaller than the body still delivers it, re-arming when dry" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  const std::string body = body_of(1u << 20, 6);
  TestServer server(respond_with(with_length(body)));
  TestClient client(server, receiving(ReceiveMode::provided_buffers, 4096, 2));
  if (!has_recv_multishot(*client.ring)) return;
  for (int i = 0; i < 3; ++i) {
    succeeded(client.get());
    CHECK(client.out == body);
  }
  MESSAGE("the 2-buffer ring ran dry ", client.stats().provided_ring_dry, " times over 3 MiB");
  CHECK(client.stats().connections_opened == 1);
}

TEST_CASE("A kept-alive connection the server closed is reported, not retried, by default") {
  TestServer server(answer_once_then_hang_up({with_length("once")}));
  TestClient client(server);
  REQUIRE(client.get());
  std::this_thread::sleep_for(20ms);  // lets the FIN arrive; the outcome is checked either way
  const Error error = failed(client.get());
  INFO(describe(error));
  CHECK((error.code == Errc::truncated || error.code == Errc::reset));
  CHECK(server.accepted() == 1);  // no second connection behind the caller's back
  CHECK(client.stats().connections_reused == 1);
  CHECK(client.stats().connections_closed == 1);
}

namespace {

// retry_stale_connection on: each case then says only what the server does and what the client reports.
ClientOptions retrying() {
  ClientOptions options = test_options();
  options.retry_stale_connection = true;
  return options;
}

}  // namespace

TEST_CASE("retry_stale_connection sends once more on a new connection, and only before any response byte") {
  // Each connection answers one request and closes without saying so: every reuse is stale.
  TestServer server(answer_once_then_hang_up({with_length("once")}));
  TestClient client(server, retrying());
  for (int i = 0; i < 3; ++i) {
    auto response = client.get();
    INFO(i);
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(client.out == "once");
    std::this_thread::sleep_for(20ms);  // the FIN arrives before the next request
  }
  CHECK(client.stats().stale_retries == 2);
  CHECK(server.accepted() == 3);
}

TEST_CASE("retry_stale_connection does not resend after a response byte, on a fresh connection, or twice") {
  // A first request that fails is not sent again: its response had begun, or its connection was new.
  const struct {
    const char* what;
    TestServer::Handler server;
  } rows[] = {
      {"a response cut after its first bytes", answer_once_then_hang_up({"HTTP/1.1 200 OK\r\nContent-Len"})},
      {"a new connection that closes before responding", answer_once_then_hang_up({})},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    TestServer server(row.server);
    TestClient client(server, retrying());
    CHECK(failed(client.get()).code == Errc::truncated);
    CHECK(client.stats().stale_retries == 0);
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
    TestClient client(server, retrying());
    REQUIRE(client.get());
    std::this_thread::sleep_for(20ms);
    CHECK(failed(client.get()).code == Errc::truncated);
    CHECK(client.stats().stale_retries == 1);
    CHECK(server.accepted() == 2);
  }
}

TEST_CASE("A request on a warm kept-alive connection allocates nothing, in every receive and send mode") {
  const std::string body = body_of(200 * 1024, 1);
  TestServer server(respond_with(with_length(body)));
  for (ReceiveMode mode : {ReceiveMode::own_buffer, ReceiveMode::provided_buffers}) {
    TestClient client(server, receiving(mode));
    if (unavailable(mode, *client.ring)) continue;
    base::PaddedBuffer buffer(body.size());
    PresizedSink sink(buffer);
    const std::string payload = body_of(1000, 2);
    for (SendMode send : {SendMode::copy, SendMode::writev, SendMode::zero_copy}) {
      INFO("receive mode ", static_cast<int>(mode), ", send mode ", static_cast<int>(send));
      const Request request{.method = "POST", .body = payload, .send = send};
      REQUIRE(client.request(request, sink));  // warm-up: connection, buffers, copy buffer
      const std::size_t before = allocations_on_this_thread();
      auto info = client.request(request, sink);
      const std::size_t after = allocations_on_this_thread();
      CHECK(succeeded(info).reused_connection);
      CHECK(buffer.view() == body);
      CHECK(after - before == 0);
    }
  }
}

TEST_CASE("A zero receive buffer is refused before any connection is made") {
  ClientOptions options = test_options();
  options.receive_buffer_bytes = 0;
  TestClient client("http://127.0.0.1:9/", options);
  CHECK(client.failed_get().code == Errc::io);
  CHECK(client.stats().connections_opened == 0);
}

// ---- receive_with_send: the request's send and the response's first receive in one io_uring_enter.

namespace {

ClientOptions together(std::size_t buffer_bytes = ClientOptions{}.receive_buffer_bytes) {
  ClientOptions options = receiving(ReceiveMode::own_buffer, buffer_bytes);
  options.receive_with_send = true;
  return options;
}

}  // namespace

TEST_CASE("receive_with_send: one io_uring_enter per kept-alive request whose response fits one receive") {
  const std::string body = body_of(1500, 8);
  TestServer server(respond_with(with_length(body)));
  for (const bool with_send : {false, true}) {
    for (SendMode send : {SendMode::copy, SendMode::writev}) {
      INFO("receive_with_send ", with_send, ", send mode ", static_cast<int>(send));
      ClientOptions options = with_send ? together() : test_options();
      options.ticks = &fake_ticks;
      TestClient client(server, options);
      base::PaddedBuffer buffer;
      PresizedSink sink(buffer);
      const Request request{.send = send};
      REQUIRE(client.request(request, sink));  // warm-up: the connection, what the connect left behind
      constexpr int kRequests = 10;
      const uint64_t enters_before = client.ring->stats().enters;
      for (int i = 0; i < kRequests; ++i) {
        Timeline timeline;
        const ResponseInfo info = succeeded(client.request(request, sink, &timeline));
        CHECK(info.reused_connection);
        CHECK(timeline.request_sent > timeline.start);
        CHECK(timeline.first_byte > timeline.request_sent);
        CHECK(timeline.body_done > timeline.first_byte);
      }
      const uint64_t enters = client.ring->stats().enters - enters_before;
      CHECK(buffer.view() == body);
      const std::size_t allocations_before = allocations_on_this_thread();
      auto again = client.request(request, sink);
      const std::size_t allocations = allocations_on_this_thread() - allocations_before;
      succeeded(again);
      CHECK(allocations == 0);
      // Send then wait: two enters. Both in one: one.
      CHECK(enters == (with_send ? 1 : 2) * kRequests);
      CHECK(client.stats().connections_opened == 1);
    }
  }
}

TEST_CASE("receive_with_send: bodies that need several receives arrive whole, for every framing") {
  const std::string large = body_of(3u << 20, 11);
  const std::string medium = body_of(300 * 1024, 12);
  const struct {
    const char* what;
    std::string response;
    std::string_view body;
  } rows[] = {
      {"empty", with_length(""), ""},
      {"one byte", with_length("x"), "x"},
      {"200 KiB", with_length(std::string_view(large).substr(0, 200 * 1024)), std::string_view(large).substr(0, 200 * 1024)},
      {"3 MiB", with_length(large), large},
      {"chunked, small chunks", chunked(medium, {7, 4096, 3}), medium},
      {"chunked, large chunks", chunked(medium, {100000, 1, 17}), medium},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    TestServer server(respond_with(row.response));
    TestClient client(server, together(4096));
    for (int i = 0; i < 3; ++i) {
      base::PaddedBuffer buffer;
      PresizedSink sink(buffer);
      const ResponseInfo info = succeeded(client.get(sink));
      CHECK(info.reused_connection == (i > 0));
      CHECK(info.body_bytes == row.body.size());
      CHECK(buffer.view() == row.body);
      succeeded(client.get());  // and into a sink without a window
      CHECK(client.out == row.body);
    }
    CHECK(client.stats().connections_opened == 1);
  }
  {
    INFO("close-delimited");
    TestServer server(answer_once_then_hang_up({"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", medium}));
    TestClient client(server, together());
    succeeded(client.get());
    CHECK(client.out == medium);
    CHECK(client.stats().connections_closed == 1);
  }
}

TEST_CASE("receive_with_send: a request body larger than one send goes out whole, in copy and writev") {
  const std::string payload = body_of(16u << 20, 13);
  TestServer server(respond_with(with_length("ok")));
  TestClient client(server, together(), "/echo");
  for (SendMode send : {SendMode::copy, SendMode::writev, SendMode::zero_copy}) {
    INFO("send mode ", static_cast<int>(send));
    succeeded(client.request(Request{.method = "POST", .body = payload, .content_type = "application/json", .send = send}));
    CHECK(client.out == "ok");
  }
  const auto requests = server.requests();
  REQUIRE(requests.size() == 3);
  for (const auto& request : requests) CHECK(body_of_request(request) == payload);
  CHECK(client.stats().connections_opened == 1);
}

TEST_CASE("receive_with_send: a peer that fails mid-response, or never answers, is an error, not a hang") {
  SUBCASE("closed mid-body: truncated") {
    TestServer server(answer_once_then_hang_up({"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", body_of(500)}));
    TestClient client(server, together());
    CHECK(client.failed_get().code == Errc::truncated);
    CHECK(client.stats().connections_closed == 1);
  }
  SUBCASE("closed mid-head: truncated") {
    TestServer server(answer_once_then_hang_up({"HTTP/1.1 200 OK\r\nContent-Len"}));
    TestClient client(server, together());
    CHECK(client.failed_get().code == Errc::truncated);
  }
  SUBCASE("closed before responding: truncated") {
    TestServer server(answer_once_then_hang_up({}));
    TestClient client(server, together());
    CHECK(client.failed_get().code == Errc::truncated);
  }
  SUBCASE("reset mid-body: reset") {
    TestServer server(
        answer_once_then_hang_up({"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n", body_of(1000)}, HangUp::reset));
    TestClient client(server, together());
    CHECK(client.failed_get().code == Errc::reset);
  }
  SUBCASE("silent: timeout after io_timeout") {
    TestServer server([](ServerConnection& c, TestServer&) {
      if (!c.read_request()) return;
      c.wait_for_close();
    });
    ClientOptions options = together();
    options.io_timeout = 200ms;
    TestClient client(server, options);
    const auto started = std::chrono::steady_clock::now();
    CHECK(client.failed_get().code == Errc::timeout);
    CHECK(std::chrono::steady_clock::now() - started < 3s);
    CHECK(client.stats().connections_closed == 1);
  }
  SUBCASE("a kept-alive connection the server closed: reported, and retried when asked") {
    TestServer server(answer_once_then_hang_up({with_length("once")}));
    ClientOptions options = together();
    options.retry_stale_connection = true;
    TestClient client(server, options);
    REQUIRE(client.get());
    std::this_thread::sleep_for(20ms);
    succeeded(client.get());
    CHECK(client.out == "once");
    CHECK(client.stats().stale_retries == 1);
  }
  SUBCASE("bytes after the response in the same receive: malformed") {
    TestServer server(respond_with(with_length("ok") + "junk"));
    TestClient client(server, together());
    CHECK(client.failed_get().code == Errc::malformed);
    CHECK(client.stats().connections_closed == 1);
  }
}
