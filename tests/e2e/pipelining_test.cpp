// Requests pipelined in one send, split at every byte, spread over tiny receive buffers, and many
// kept-alive requests on one connection.
#include <sys/socket.h>

#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "ringlab/server/body_cache.hpp"
#include "support.hpp"

using namespace ringlab;
using namespace ringlab::e2e;

namespace {

struct Exchange {
  std::string request;
  int status;
  std::string body;
};

std::vector<Exchange> mixed_exchanges() {
  const std::string weather3 = server::generate_body({server::Route::weather, server::Format::json, 3}).bytes;
  // Serialized as it is sent (cache=0, chunked): two chunks at the default 16 KiB buffer, then another
  // such answer right behind it, whose first chunk must not share the buffer of the other's last.
  const std::string weather300 = server::generate_body({server::Route::weather, server::Format::json, 300}).bytes;
  return {
      {get_request("/weather?count=300&cache=0&chunked=1"), 200, weather300},
      {get_request("/weather?count=3&cache=0&chunked=1"), 200, weather3},
      {get_request("/weather?count=3"), 200, weather3},
      {get_request("/plaintext"), 200, "Hello, World!"},
      {post_request("/echo", "first body", "text/plain"), 200, "first body"},
      {get_request("/nothing"), 404, ""},
      {"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", 200,
       "abcde"},
      {get_request("/weather?count=3&chunked=1&chunk=5"), 200, weather3},
      {get_request("/health"), 200, "{\"status\":\"ok\"}"},
      {post_request("/echo", "", "text/plain"), 200, ""},
      {get_request("/weather?count=x"), 400, ""},
      {get_request("/proxy?count=3"), 200, weather3},
  };
}

void check_answers(RawClient& client, const std::vector<Exchange>& exchanges) {
  for (std::size_t i = 0; i < exchanges.size(); ++i) {
    INFO("answer ", i);
    Response response = client.read_response();
    CHECK(response.status == exchanges[i].status);
    if (exchanges[i].status == 200) {
      CHECK(response.body == exchanges[i].body);
    } else {
      CHECK(json_error(response.body).has_value());
    }
  }
}

}  // namespace

TEST_CASE("pipelined requests in one send are all answered, in order") {
  TestServer server;
  RawClient client(server.port());
  auto exchanges = mixed_exchanges();
  std::string all;
  for (const auto& exchange : exchanges) all += exchange.request;
  client.send(all);
  check_answers(client, exchanges);
  // Twice more, to reuse the connection's buffers.
  client.send(all + all);
  check_answers(client, exchanges);
  check_answers(client, exchanges);
}

TEST_CASE("a request split at every byte boundary is still answered") {
  // Tiny provided buffers make the server see every request in many pieces as well.
  for (unsigned buffer_bytes : {16u * 1024, 16u}) {
    server::ServerOptions options;
    options.recv_buffer_bytes = buffer_bytes;
    TestServer server(options);
    RawClient client(server.port());
    for (const auto& exchange : mixed_exchanges()) {
      const std::string& request = exchange.request;
      for (std::size_t split = 1; split < request.size(); ++split) {
        INFO("receive buffers of ", buffer_bytes, " bytes; request split at ", split, " of ", request.size(), ": ",
             request);
        client.send(std::string_view(request).substr(0, split));
        // A short pause makes the two pieces arrive apart; correctness does not depend on it.
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        client.send(std::string_view(request).substr(split));
        Response response = client.read_response();
        CHECK(response.status == exchange.status);
        if (exchange.status == 200) CHECK(response.body == exchange.body);
      }
    }
  }
}

TEST_CASE("a request sent one byte at a time is answered") {
  server::ServerOptions options;
  options.recv_buffer_bytes = 16;
  TestServer server(options);
  RawClient client(server.port());
  const std::string request = post_request("/echo?chunked=1&chunk=2", "byte by byte", "text/plain",
                                           "X-Padding: " + std::string(100, 'p') + "\r\n");
  for (char c : request) {
    client.send(std::string_view(&c, 1));
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  Response response = client.read_response();
  CHECK(response.status == 200);
  CHECK(response.body == "byte by byte");
}

TEST_CASE("a head spread over many small receive buffers is parsed whole") {
  server::ServerOptions options;
  options.recv_buffer_bytes = 16;
  options.recv_buffer_count = 4;  // fewer buffers than a head needs: the ring runs dry and is re-armed
  TestServer server(options);
  RawClient client(server.port());
  std::string headers;
  for (int i = 0; i < 60; ++i) headers += "X-Header-" + std::to_string(i) + ": " + std::string(100, 'v') + "\r\n";
  const std::string body = pattern_bytes(20000);
  client.send(post_request("/echo", body, "application/octet-stream", headers));
  Response response = client.read_response();
  CHECK(response.status == 200);
  CHECK(response.body == body);
  client.send(get_request("/weather?count=50"));
  CHECK(json_array_size(client.read_response().body) == 50);
}

TEST_CASE("a client that pipelines without reading is paused, and every answer still arrives in order") {
  server::ServerOptions options;
  options.max_queued_output_bytes = 64 * 1024;
  TestServer server(options);
  RawClient client(server.port());
  // About 40 MB of answers against a 64 KiB queue: far more than the socket buffers of both ends
  // hold, so the server must stop reading while the client is not reading.
  constexpr int kRequests = 1000;
  const std::string expected = server::generate_body({server::Route::weather, server::Format::json, 1000}).bytes;
  std::string requests;
  for (int i = 0; i < kRequests; ++i) requests += get_request(i % 2 == 0 ? "/weather?count=1000" : "/plaintext");
  std::atomic<bool> sent{false};
  std::thread sender([&] {
    // Blocks once the server stops reading, until the reads below drain the answers.
    std::string_view rest = requests;
    while (!rest.empty()) {
      ssize_t n = ::send(client.fd(), rest.data(), rest.size(), MSG_NOSIGNAL);
      if (n <= 0) break;
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
    sent = rest.empty();
  });
  // Reading starts late, so the server must have paused the connection meanwhile.
  std::this_thread::sleep_for(500ms);
  int good = 0;
  for (int i = 0; i < kRequests; ++i) {
    Response response = client.read_response();
    const bool weather = i % 2 == 0;
    good += response.status == 200 && response.body == (weather ? expected : "Hello, World!") ? 1 : 0;
  }
  sender.join();
  CHECK(sent);
  CHECK(good == kRequests);
  auto stats = server.stop();
  CHECK(stats.read_pauses >= 1);
  CHECK(stats.requests == kRequests);
}

TEST_CASE("one connection serves many requests while kept alive") {
  TestServer server;
  RawClient client(server.port());
  const std::string request = get_request("/weather?count=10");
  const std::string expected = server::generate_body({server::Route::weather, server::Format::json, 10}).bytes;
  int good = 0;
  for (int i = 0; i < 2000; ++i) {
    client.send(request);
    Response response = client.read_response();
    good += response.status == 200 && response.body == expected ? 1 : 0;
  }
  CHECK(good == 2000);
  auto stats = server.stop();
  CHECK(stats.accepted == 1);
  CHECK(stats.requests == 2000);
  CHECK(stats.cache_misses == 1);
  CHECK(stats.cache_hits == 1999);
}

TEST_CASE("many connections at once, each pipelining, are all answered") {
  TestServer server(with_threads(2));
  constexpr int kClients = 40;
  constexpr int kRounds = 10;
  std::vector<int> good(kClients, 0);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      // No doctest macros off the main thread: results are counted and checked after the join.
      try {
        RawClient client(server.port());
        const std::string body = pattern_bytes(static_cast<std::size_t>(100 + c), static_cast<unsigned>(c));
        const std::string batch = get_request("/weather?count=2") + post_request("/echo", body, "x/y");
        for (int r = 0; r < kRounds; ++r) {
          client.send(batch);
          Response weather = client.read_response();
          Response echo = client.read_response();
          if (weather.status == 200 && json_array_size(weather.body) == 2 && echo.body == body) ++good[c];
        }
      } catch (...) {
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int c = 0; c < kClients; ++c) {
    INFO("client ", c);
    CHECK(good[c] == kRounds);
  }
  auto stats = server.stop();
  CHECK(stats.accepted == stats.closed);
}
