// receive_with_send: the request's send and the response's first receive in one io_uring_enter.
#include "ringlab/http/client.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

// client_test.cpp defines the counting operator new of this executable; this file reads the count.
#define RINGLAB_ALLOCATION_COUNTER_READ_ONLY
#include "../support/allocation_counter.hpp"
#include "client_fixtures.hpp"

using namespace ringlab;
using namespace ringlab::http;
using namespace ringlab::http::testing;
using namespace std::chrono_literals;
using ringlab::testing::allocations_on_this_thread;

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
