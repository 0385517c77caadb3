// Our own io_uring client (http::Client) against our server: every route, plain and chunked,
// pooled and fresh connections, every receive mode.
#include <doctest/doctest.h>

#include "ringlab/http/client.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/server/body_cache.hpp"
#include "../support/http.hpp"
#include "support.hpp"

using namespace ringlab;
using namespace ringlab::e2e;
using ringlab::testing::ClientConfiguration;
using ringlab::testing::every_client_configuration;
using ringlab::testing::fetch;
using ringlab::testing::Fetched;

namespace {

std::string generated(server::Route route, server::Format format, uint32_t count) {
  return server::generate_body({route, format, count}).bytes;
}

}  // namespace

TEST_CASE("http::Client gets every route's bytes from the server, plain and chunked") {
  TestServer server;
  auto ring = net::Ring::create();
  REQUIRE_MESSAGE(ring.has_value(), (ring ? std::string() : ring.error().message()));

  using server::Format;
  using server::Route;
  struct Row {
    std::string target;
    std::string body;
  };
  const std::vector<Row> rows = {
      {"/weather?count=10", generated(Route::weather, Format::json, 10)},
      {"/weather?count=5000", generated(Route::weather, Format::json, 5000)},
      {"/weather?count=4&format=ndjson", generated(Route::weather, Format::ndjson, 4)},
      {"/repos?count=50", generated(Route::repos, Format::json, 50)},
      {"/repos?count=2&format=ndjson", generated(Route::repos, Format::ndjson, 2)},
      {"/plaintext", "Hello, World!"},
      {"/health", "{\"status\":\"ok\"}"},
      {"/proxy?count=7", generated(Route::weather, Format::json, 7)},
      {"/proxy?count=7&conn=fresh", generated(Route::weather, Format::json, 7)},
  };
  for (const ClientConfiguration& configuration : every_client_configuration()) {
    http::Client client(**ring, configuration.options);
    for (const Row& row : rows) {
      for (std::string suffix : {"", "chunked=1", "chunked=1&chunk=3"}) {
        std::string url_text = server.url(row.target);
        if (!suffix.empty()) url_text += (row.target.find('?') == std::string::npos ? "?" : "&") + suffix;
        INFO(url_text, " ", configuration.label);
        const Fetched fetched = fetch(client, url_text);
        CHECK(fetched.status == 200);
        CHECK(fetched.body == row.body);
      }
    }
  }
}

TEST_CASE("http::Client posts to /echo and gets the body back, for every send mode") {
  TestServer server;
  auto ring = net::Ring::create();
  REQUIRE_MESSAGE(ring.has_value(), (ring ? std::string() : ring.error().message()));
  http::Client client(**ring);
  const std::string url_text = server.url("/echo");  // the Url views into it
  auto url = http::Url::parse(url_text);
  REQUIRE(url.has_value());
  for (auto send : {http::SendMode::copy, http::SendMode::writev, http::SendMode::zero_copy}) {
    for (std::size_t size : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20}) {
      INFO("send mode ", static_cast<int>(send), ", ", size, " bytes");
      const std::string payload = pattern_bytes(size, static_cast<unsigned>(size));
      std::string body;
      http::StringSink sink(body);
      http::Request request;
      request.method = "POST";
      request.body = payload;
      request.content_type = "application/octet-stream";
      request.send = send;
      auto response = client.request(*url, request, sink);
      REQUIRE_MESSAGE(response.has_value(), (response ? std::string() : response.error().message()));
      CHECK(response->status == 200);
      CHECK(body == payload);
    }
  }
}

TEST_CASE("http::Client sees the server's error statuses as answers, not failures") {
  TestServer server;
  auto ring = net::Ring::create();
  REQUIRE(ring.has_value());
  http::Client client(**ring);
  struct Row {
    std::string target;
    int status;
  };
  const Row rows[] = {{"/nothing", 404}, {"/weather?count=abc", 400}, {"/echo", 405}, {"/weather?count=1", 200}};
  for (const Row& row : rows) {
    INFO(row.target);
    const Fetched fetched = fetch(client, server.url(row.target));
    CHECK(fetched.status == row.status);
    if (row.status != 200) CHECK(json_error(fetched.body).has_value());
  }
  // All on one kept-alive connection.
  CHECK(client.stats().connections_opened == 1);
}
