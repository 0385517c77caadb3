// Every route, plain and chunked, over raw sockets: status, headers and the exact bytes.
#include <doctest/doctest.h>

#include <simdjson.h>

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "ringlab/base/cpus.hpp"
#include "ringlab/server/body_cache.hpp"
#include "support.hpp"
#include "routes_fixtures.hpp"
#include "../support/feature_gate.hpp"

using namespace ringlab;
using namespace ringlab::e2e;

TEST_CASE("GET routes answer the expected bytes, plain and chunked, on one kept-alive connection") {
  TestServer server;
  RawClient client(server.port());
  struct Row {
    std::string target;
    std::string content_type;
    std::string body;
  };
  using server::Format;
  using server::Route;
  std::vector<Row> rows = {
      {"/weather?count=0", "application/json", "[]"},
      {"/weather?count=1", "application/json", expected_body(Route::weather, Format::json, 1)},
      {"/weather?count=10", "application/json", expected_body(Route::weather, Format::json, 10)},
      {"/weather?count=1000", "application/json", expected_body(Route::weather, Format::json, 1000)},
      {"/weather", "application/json", expected_body(Route::weather, Format::json, 10)},
      {"/weather?count=7&format=ndjson", "application/x-ndjson", expected_body(Route::weather, Format::ndjson, 7)},
      {"/repos?count=5", "application/json", expected_body(Route::repos, Format::json, 5)},
      {"/repos?count=200", "application/json", expected_body(Route::repos, Format::json, 200)},
      {"/repos?count=3&format=ndjson", "application/x-ndjson", expected_body(Route::repos, Format::ndjson, 3)},
      {"/github?count=1", "application/json", expected_body(Route::github, Format::json, 1)},
      {"/github?count=100", "application/json", expected_body(Route::github, Format::json, 100)},
      {"/github?count=4&format=ndjson", "application/x-ndjson", expected_body(Route::github, Format::ndjson, 4)},
      {"/profiles?count=1", "application/json", expected_body(Route::profiles, Format::json, 1)},
      {"/profiles?count=100", "application/json", expected_body(Route::profiles, Format::json, 100)},
      {"/profiles?count=100&cache=0", "application/json", expected_body(Route::profiles, Format::json, 100)},
      {"/weather?count=3000&cache=0", "application/json", expected_body(Route::weather, Format::json, 3000)},
      {"/weather?count=0&cache=0", "application/json", "[]"},
      {"/weather?count=0&cache=0&format=ndjson", "application/x-ndjson", ""},
      {"/repos?count=40&cache=0&format=ndjson", "application/x-ndjson", expected_body(Route::repos, Format::ndjson, 40)},
      {"/github?count=50&cache=0", "application/json", expected_body(Route::github, Format::json, 50)},
      {"/profiles?count=3&format=ndjson", "application/x-ndjson", expected_body(Route::profiles, Format::ndjson, 3)},
      {"/plaintext", "text/plain", "Hello, World!"},
      {"/health", "application/json", "{\"status\":\"ok\"}"},
      {"/proxy?count=4", "application/json", expected_body(Route::weather, Format::json, 4)},
      {"/proxy?count=4&conn=fresh", "application/json", expected_body(Route::weather, Format::json, 4)},
  };
  for (const Row& row : rows) {
    for (std::string suffix : {"", "chunked=1", "chunked=1&chunk=7", "chunked=1&chunk=1", "chunked=0"}) {
      std::string target = row.target;
      if (!suffix.empty()) target += (target.find('?') == std::string::npos ? "?" : "&") + suffix;
      INFO("GET ", target);
      client.send(get_request(target));
      Response response = client.read_response();
      CHECK(response.status == 200);
      CHECK(response.header("Content-Type") == row.content_type);
      CHECK(response.header("Server") == "ringlab");
      CHECK_FALSE(response.header("Connection").has_value());
      const bool chunked = suffix.find("chunked=1") != std::string::npos;
      CHECK(response.chunked == chunked);
      if (chunked && row.target.find("cache=0") != std::string::npos) {
        // Serialized as it is sent (ServerOptions::serializer_buffer_bytes, 16 KiB by default): a chunk
        // goes out once the buffer is 90 % full, after the record that filled it; chunk= does not apply.
        CHECK_FALSE(response.header("Content-Length").has_value());
        const std::size_t flush_at = server::ServerOptions{}.serializer_buffer_bytes * 9 / 10;
        std::size_t wrong = 0;
        for (std::size_t i = 0; i + 1 < response.chunk_sizes.size(); ++i) {
          const std::size_t size = response.chunk_sizes[i];
          if (size < flush_at || size > flush_at + server::kMaxRepoRecordBytes) ++wrong;
        }
        CHECK(wrong == 0);
        // A body beyond one buffer is more than one chunk: it went out while it was being serialized.
        if (row.body.size() > flush_at + server::kMaxRepoRecordBytes) CHECK(response.chunk_sizes.size() > 1);
      } else if (chunked) {
        CHECK_FALSE(response.header("Content-Length").has_value());
        const std::size_t limit = suffix.find("chunk=7") != std::string::npos   ? 7
                                  : suffix.find("chunk=1") != std::string::npos ? 1
                                                                                 : 4096;
        // Every chunk but the last has exactly the asked size; the last at most that.
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < response.chunk_sizes.size(); ++i) {
          const bool last = i + 1 == response.chunk_sizes.size();
          if (last ? response.chunk_sizes[i] > limit : response.chunk_sizes[i] != limit) ++wrong;
        }
        CHECK(wrong == 0);
      } else {
        CHECK(response.header("Content-Length") == std::to_string(row.body.size()));
      }
      CHECK(response.body == row.body);
    }
  }
  CHECK(json_array_size(expected_body(server::Route::weather, server::Format::json, 1000)) == 1000);
  // The rows cover every GET route of the server's table whose answer is fixed bytes; /env and
  // /stats, which describe the server, have cases of their own below.
  for (const server::RouteEntry& entry : server::route_table()) {
    if (!entry.is_get || entry.route == Route::env || entry.route == Route::stats) continue;
    INFO(entry.path);
    CHECK(std::ranges::any_of(rows, [&](const Row& row) {
      return row.target.substr(0, row.target.find('?')) == entry.path;
    }));
  }
}

TEST_CASE("every route of the server's table answers 200 to its method, and a GET route its head to HEAD") {
  TestServer server;
  RawClient client(server.port());
  for (const server::RouteEntry& entry : server::route_table()) {
    const std::string path(entry.path);
    INFO(server::route_method(entry), " ", path);
    if (!entry.is_get) {
      client.send(post_request(path, "{}", "application/json"));
      CHECK(client.read_response().status == 200);
      continue;
    }
    const Response full = client.get(path);
    CHECK(full.status == 200);
    CHECK_FALSE(full.body.empty());
    client.send("HEAD " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
    const Response head = client.read_response(true);
    CHECK(head.status == 200);
    CHECK(head.body.empty());
    CHECK(head.header("Content-Type") == full.header("Content-Type"));
  }
}

TEST_CASE("POST /echo returns the body byte for byte with its Content-Type, plain and chunked") {
  TestServer server;
  RawClient client(server.port());
  const std::size_t sizes[] = {0, 1, 13, 1024, 1025, 65536, 300000};
  for (std::size_t size : sizes) {
    const std::string body = pattern_bytes(size, static_cast<unsigned>(size));
    for (std::string target : {"/echo", "/echo?chunked=1", "/echo?chunked=1&chunk=100"}) {
      INFO("POST ", target, " with ", size, " bytes");
      client.send(post_request(target, body, "application/x-test; charset=binary"));
      Response response = client.read_response();
      CHECK(response.status == 200);
      CHECK(response.header("Content-Type") == "application/x-test; charset=binary");
      CHECK(response.chunked == (target.find("chunked=1") != std::string::npos));
      CHECK(response.body.size() == body.size());
      CHECK(response.body == body);
    }
  }
}

TEST_CASE("POST /echo without Content-Type answers without one") {
  TestServer server;
  RawClient client(server.port());
  client.send(post_request("/echo", "abc", ""));
  Response response = client.read_response();
  CHECK(response.status == 200);
  CHECK_FALSE(response.header("Content-Type").has_value());
  CHECK(response.body == "abc");
}

TEST_CASE("POST /echo accepts a chunked request body, with extensions and trailers") {
  TestServer server;
  RawClient client(server.port());
  const std::string request =
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n"
      "1;ext=1\r\n,\r\n"
      "6\r\n world\r\n"
      "0\r\nX-Trailer: yes\r\n\r\n";
  client.send(request);
  Response response = client.read_response();
  CHECK(response.status == 200);
  CHECK(response.body == "hello, world");
  CHECK(response.header("Content-Type") == "text/plain");
  // The connection stays usable.
  CHECK(client.get("/health").status == 200);
}

TEST_CASE("HEAD answers the head of GET without a body, and generates none") {
  TestServer server;
  RawClient client(server.port());
  for (std::string target : {"/weather?count=3", "/health", "/plaintext", "/repos?count=2&chunked=1"}) {
    INFO("HEAD ", target);
    const bool generated = target.find("count=") != std::string::npos;
    if (generated) {
      // Not generated yet: the head has no length (RFC 9110 9.3.2), and the body is not made for it.
      client.send("HEAD " + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
      Response before = client.read_response(true);
      CHECK(before.status == 200);
      CHECK(before.body.empty());
      CHECK_FALSE(before.header("Content-Length").has_value());
    }
    client.send(get_request(target));
    Response full = client.read_response();
    client.send("HEAD " + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
    Response response = client.read_response(true);
    CHECK(response.status == 200);
    CHECK(response.body.empty());
    CHECK(response.header("Content-Type") == full.header("Content-Type"));
    if (target.find("chunked=1") == std::string::npos) {
      CHECK(response.header("Content-Length") == std::to_string(full.body.size()));
    } else {
      CHECK(response.header("Transfer-Encoding") == "chunked");
    }
  }
  auto stats = server.stop();
  CHECK(stats.cache_misses == 2);  // the two GETs; no HEAD generated a body
}

TEST_CASE("HTTP/1.0 is answered and closed unless it asks for keep-alive, and never chunked") {
  TestServer server;
  SUBCASE("without keep-alive the server closes after the answer") {
    RawClient client(server.port());
    client.send("GET /weather?count=2&chunked=1 HTTP/1.0\r\n\r\n");
    Response response = client.read_response();
    CHECK(response.status == 200);
    CHECK_FALSE(response.chunked);
    CHECK(response.header("Content-Length") == std::to_string(response.body.size()));
    CHECK(json_array_size(response.body) == 2);
    CHECK(client.closed_by_peer());
  }
  SUBCASE("with keep-alive it says so and serves the next request") {
    RawClient client(server.port());
    for (int i = 0; i < 3; ++i) {
      client.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
      Response response = client.read_response();
      CHECK(response.status == 200);
      CHECK(response.header("Connection") == "keep-alive");
    }
  }
}

TEST_CASE("Connection: close is honoured after the answer") {
  TestServer server;
  RawClient client(server.port());
  client.send(get_request("/plaintext", "Connection: close\r\n"));
  Response response = client.read_response();
  CHECK(response.status == 200);
  CHECK(response.header("Connection") == "close");
  CHECK(response.body == "Hello, World!");
  CHECK(client.closed_by_peer());
}

TEST_CASE("Expect: 100-continue gets an interim 100 before the body is sent") {
  TestServer server;
  RawClient client(server.port());
  const std::string body = pattern_bytes(5000);
  client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n");
  Response interim = client.read_response();
  CHECK(interim.status == 100);
  client.send(body);
  Response response = client.read_response();
  CHECK(response.status == 200);
  CHECK(response.body == body);
}

TEST_CASE("count=0 gives an empty array and an empty NDJSON body") {
  TestServer server;
  RawClient client(server.port());
  Response json = client.get("/repos?count=0");
  CHECK(json.body == "[]");
  Response lines = client.get("/weather?count=0&format=ndjson");
  CHECK(lines.status == 200);
  CHECK(lines.body.empty());
  CHECK(lines.header("Content-Length") == "0");
}

TEST_CASE("several server threads all serve, and every connection is closed at stop") {
  TestServer server(with_threads(3));
  for (int i = 0; i < 30; ++i) {
    RawClient client(server.port());
    Response response = client.get("/weather?count=3");
    CHECK(response.status == 200);
    CHECK(json_array_size(response.body) == 3);
  }
  auto stats = server.stop();
  CHECK(stats.accepted >= 30);
  CHECK(stats.accepted == stats.closed);
  CHECK(stats.requests >= 30);
}

TEST_CASE("GET /env answers the server's environment as one flat JSON object of strings") {
  TestServer server(with_threads(2));
  RawClient client(server.port());
  simdjson::dom::parser parser;
  const simdjson::dom::object object = get_json_object(client, "/env", parser);
  std::size_t fields = 0;
  for (const auto field : object) {
    INFO(field.key);
    CHECK(field.value.is_string());
    ++fields;
  }
  CHECK(fields >= 15);
  std::string_view value;
  REQUIRE(object["program"].get(value) == simdjson::SUCCESS);
  CHECK(value == "ringlab server");
  REQUIRE(object["threads"].get(value) == simdjson::SUCCESS);
  CHECK(value == "2");
  REQUIRE(object["bind"].get(value) == simdjson::SUCCESS);
  CHECK(value == "127.0.0.1");
  REQUIRE(object["kernel"].get(value) == simdjson::SUCCESS);
  CHECK_FALSE(value.empty());
  // Not pinned: the CPUs this process may use (the server runs in it).
  std::string allowed_text;
  for (int cpu : base::allowed_cpus()) allowed_text += (allowed_text.empty() ? "" : ",") + std::to_string(cpu);
  REQUIRE(object["worker_cpus"].get(value) == simdjson::SUCCESS);
  CHECK(value == allowed_text);
  // HEAD: the same head, no body.
  client.send("HEAD /env HTTP/1.1\r\nHost: x\r\n\r\n");
  const Response head = client.read_response(true);
  CHECK(head.status == 200);
  CHECK(head.body.empty());
}

TEST_CASE("GET /stats answers the server's counters as one flat JSON object of numbers") {
  TestServer server;
  RawClient client(server.port());
  CHECK(client.get("/health").status == 200);
  simdjson::dom::parser parser;
  const simdjson::dom::object object = get_json_object(client, "/stats", parser);
  for (const auto field : object) {
    INFO(field.key);
    CHECK(field.value.is_number());
  }
  uint64_t requests = 0;
  REQUIRE(object["requests"].get(requests) == simdjson::SUCCESS);
  CHECK(requests >= 1);  // the /health before it (the thread that answers publishes its own first)
}

TEST_CASE("worker_cpu: worker i on CPU (cpu + i) modulo the CPUs") {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  server::ServerOptions options;
  CHECK(server::worker_cpu(options, 0) == -1);
  options.cpu = static_cast<int>(cpus - 1);
  CHECK(server::worker_cpu(options, 0) == static_cast<int>(cpus - 1));
  CHECK(server::worker_cpu(options, 1) == 0);  // wraps
  CHECK(server::worker_cpu(options, cpus) == static_cast<int>(cpus - 1));
}

TEST_CASE("a server with more threads than CPUs pins them round the CPUs; /env lists each CPU once" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  // A real server pinned to the first CPU this process may use, with one more thread than there
  // are CPUs: each CPU is listed once, in worker order.
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  const std::vector<int> allowed = base::allowed_cpus();
  REQUIRE_FALSE(allowed.empty());
  const int first = allowed.front();
  // Were some CPU of the wrap-around not ours to pin to (a cpuset), the server could not start.
  if (!ringlab::testing::feature_available("all_cpus", allowed.size() >= cpus,
                                           "this process may use only some of the CPUs (a cpuset)")) {
    return;
  }
  server::ServerOptions options;
  options.cpu = first;
  options.threads = cpus + 1;
  TestServer server(options);
  RawClient client(server.port());
  const Response response = client.get("/env");
  REQUIRE(response.status == 200);
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  REQUIRE(parser.parse(response.body).get(object) == simdjson::SUCCESS);
  std::string_view value;
  REQUIRE(object["worker_cpus"].get(value) == simdjson::SUCCESS);
  std::string expected;
  for (unsigned i = 0; i < cpus; ++i) {
    expected += (i == 0 ? "" : ",") + std::to_string((static_cast<unsigned>(first) + i) % cpus);
  }
  CHECK(value == expected);
}
