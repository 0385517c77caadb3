// The HTTP client's failures as values: refused, reset, silent, truncated and malformed peers, every
// limit, an error's effect on the connection, and the stale-connection retry.
#include "ringlab/http/client.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "client_fixtures.hpp"

using namespace ringlab;
using namespace ringlab::http;
using namespace ringlab::http::testing;
using namespace std::chrono_literals;

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

TEST_CASE("The one-request client refuses incremental provided buffers, before it connects") {
  TestServer server(respond_with(with_length("{}")));
  TestClient client(server, receiving(ReceiveMode::provided_incremental, 4096));
  const Error error = failed(client.get());
  CHECK(error.code == Errc::unsupported);
  CHECK(error.detail.find("InflightClient only") != std::string::npos);
  CHECK(client.stats().connections_opened == 0);
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

TEST_CASE("A zero receive buffer is refused before any connection is made") {
  ClientOptions options = test_options();
  options.receive_buffer_bytes = 0;
  TestClient client("http://127.0.0.1:9/", options);
  CHECK(client.failed_get().code == Errc::io);
  CHECK(client.stats().connections_opened == 0);
}
