// /proxy: the server fetches /weather from its upstream with http::Client, pooled or fresh.
#include <doctest/doctest.h>

#include <thread>

#include "ringlab/server/body_cache.hpp"
#include "support.hpp"

using namespace ringlab;
using namespace ringlab::e2e;

namespace {

std::string weather(uint32_t count) {
  return server::generate_body({server::Route::weather, server::Format::json, count}).bytes;
}

}  // namespace

TEST_CASE("/proxy through the built-in upstream returns the upstream's /weather bytes, pooled and fresh") {
  TestServer server;
  CHECK(server.get().upstream().rfind("http://127.0.0.1:", 0) == 0);
  CHECK(server.get().upstream() != server.url(""));
  RawClient client(server.port());
  for (std::string conn : {"pooled", "fresh"}) {
    for (uint32_t count : {0u, 1u, 10u, 2000u}) {
      for (std::string chunked : {"", "&chunked=1&chunk=100"}) {
        const std::string target = "/proxy?count=" + std::to_string(count) + "&conn=" + conn + chunked;
        INFO(target);
        client.send(get_request(target));
        Response response = client.read_response();
        CHECK(response.status == 200);
        CHECK(response.header("Content-Type") == "application/json");
        CHECK(response.chunked == !chunked.empty());
        CHECK(response.body == weather(count));
      }
    }
  }
}

TEST_CASE("/proxy retries once when the upstream closed the pooled connection while it was idle") {
  server::ServerOptions upstream_options;
  upstream_options.idle_timeout = 100ms;  // closes kept-alive connections between our requests
  TestServer upstream(upstream_options);
  server::ServerOptions options;
  options.upstream = upstream.url("");
  TestServer server(options);
  RawClient client(server.port());
  for (int i = 0; i < 3; ++i) {
    client.send(get_request("/proxy?count=2&conn=pooled"));
    Response response = client.read_response();
    CHECK(response.status == 200);
    CHECK(response.body == weather(2));
    std::this_thread::sleep_for(400ms);  // the upstream closes the pooled connection meanwhile
  }
  auto stats = server.stop();
  CHECK(stats.upstream_errors == 0);
  CHECK(stats.upstream_retries >= 1);
}

TEST_CASE("/proxy fetches from an explicit --upstream") {
  TestServer upstream;
  server::ServerOptions options;
  options.upstream = upstream.url("");
  TestServer server(options);
  CHECK(server.get().upstream() == options.upstream);
  RawClient client(server.port());
  for (int i = 0; i < 5; ++i) {
    client.send(get_request("/proxy?count=3&conn=pooled"));
    CHECK(client.read_response().body == weather(3));
    client.send(get_request("/proxy?count=3&conn=fresh"));
    CHECK(client.read_response().body == weather(3));
  }
  auto upstream_stats = upstream.stop();
  // Pooled fetches share a connection; every fresh one opens its own.
  CHECK(upstream_stats.requests == 10);
  CHECK(upstream_stats.accepted == 1 + 5);
}

TEST_CASE("an upstream that refuses gives 502 with a JSON error, and the server keeps serving") {
  server::ServerOptions options;
  options.upstream = "http://127.0.0.1:" + std::to_string(unused_port());
  TestServer server(options);
  RawClient client(server.port());
  client.send(get_request("/proxy?count=1"));
  Response response = client.read_response();
  CHECK(response.status == 502);
  auto message = json_error(response.body);
  REQUIRE(message.has_value());
  CHECK(message->find("upstream") != std::string::npos);
  client.send(get_request("/health"));
  CHECK(client.read_response().status == 200);
  CHECK(server.stop().upstream_errors == 1);
}

TEST_CASE("an upstream that never answers gives 504 after --upstream-timeout") {
  SilentListener silent;  // completes handshakes, never answers
  server::ServerOptions options;
  options.upstream = "http://127.0.0.1:" + std::to_string(silent.port());
  options.upstream_timeout = 300ms;
  TestServer server(options);
  RawClient client(server.port());
  client.send(get_request("/proxy?count=1&conn=fresh"));
  Response response = client.read_response();
  CHECK(response.status == 504);
  CHECK(json_error(response.body).has_value());
  client.send(get_request("/plaintext"));
  CHECK(client.read_response().status == 200);
}

TEST_CASE("the built-in upstream does not proxy itself") {
  TestServer server;
  // Reach the upstream worker directly, as only someone who read upstream() could.
  const std::string upstream = server.get().upstream();
  const auto port = static_cast<uint16_t>(std::stoi(upstream.substr(upstream.rfind(':') + 1)));
  RawClient client(port);
  client.send(get_request("/proxy?count=1"));
  CHECK(client.read_response().status == 502);
  client.send(get_request("/weather?count=2"));
  CHECK(client.read_response().body == weather(2));
}
