// The HTTP client against small loopback servers: framing, keep-alive, the sinks and send modes, a
// response split at every byte, the timeline, and no allocation on a warm request.
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
#include "client_fixtures.hpp"

using namespace ringlab;
using namespace ringlab::http;
using namespace ringlab::http::testing;
using namespace std::chrono_literals;
using ringlab::testing::allocations_on_this_thread;

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
  for (ReceiveMode mode : {ReceiveMode::own_buffer, ReceiveMode::provided_buffers, ReceiveMode::provided_bundles}) {
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

TEST_CASE("A response split at every byte boundary parses the same") {
  const std::string body = body_of(300, 2);
  const std::string responses[] = {with_length(body), chunked(body, {100, 7})};
  // own_buffer, provided_buffers, own_buffer with the first receive queued with the send, and
  // provided_bundles in buffers of 16 bytes (a completion of several).
  for (int variant = 0; variant < 4; ++variant) {
    const ReceiveMode mode = variant == 1   ? ReceiveMode::provided_buffers
                             : variant == 3 ? ReceiveMode::provided_bundles
                                            : ReceiveMode::own_buffer;
    ClientOptions options = receiving(mode, variant == 3 ? 16 : 4096, variant == 3 ? 64 : 8);
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

TEST_CASE("provided_bundles: completions of several buffers, walked in ring order, deliver a large body; a small "
          "ring runs dry and re-arms" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  const std::string body = body_of(1u << 20, 6);
  TestServer server(respond_with(with_length(body)));
  for (const unsigned buffers : {64u, 4u}) {
    INFO(buffers, " buffers of 4 KiB");
    TestClient client(server, receiving(ReceiveMode::provided_bundles, 4096, buffers));
    if (unavailable(ReceiveMode::provided_bundles, *client.ring)) return;
    for (int i = 0; i < 3; ++i) {
      succeeded(client.get());
      CHECK(client.out == body);
    }
    MESSAGE(buffers, " buffers: ", client.stats().multi_buffer_receives, " completions of several buffers, ring dry ",
            client.stats().provided_ring_dry, " times over 3 MiB");
    CHECK(client.stats().multi_buffer_receives > 0);
    CHECK(client.stats().connections_opened == 1);
  }
}

TEST_CASE("A request on a warm kept-alive connection allocates nothing, in every receive and send mode") {
  const std::string body = body_of(200 * 1024, 1);
  TestServer server(respond_with(with_length(body)));
  for (ReceiveMode mode : {ReceiveMode::own_buffer, ReceiveMode::provided_buffers, ReceiveMode::provided_bundles}) {
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
