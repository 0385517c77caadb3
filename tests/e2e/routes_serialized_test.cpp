// A body serialized per request goes out as it is serialized: a buffer at a time, or whole with
// --serializer-buffer 0.
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

namespace {

// Reads from `fd` until `bytes` holds at least `size` bytes; fails the test on a close or after
// kIoTimeout.
void read_at_least(int fd, std::string& bytes, std::size_t size) {
  const auto deadline = std::chrono::steady_clock::now() + kIoTimeout;
  char buffer[65536];
  while (bytes.size() < size) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    pollfd ready{.fd = fd, .events = POLLIN, .revents = 0};
    if (::poll(&ready, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    REQUIRE(n > 0);
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
}

uint64_t stats_counter(uint16_t port, const char* name) {
  RawClient client(port);
  simdjson::dom::parser parser;
  const simdjson::dom::object stats = get_json_object(client, "/stats", parser);
  uint64_t value = 0;
  REQUIRE(stats[name].get(value) == simdjson::SUCCESS);
  return value;
}

// The third field of /proc/sys/net/ipv4/tcp_wmem: the most a TCP socket's send buffer grows to.
std::size_t tcp_send_buffer_max() {
  const std::string text = read_file("/proc/sys/net/ipv4/tcp_wmem");
  std::size_t low = 0, initial = 0, max = 0;
  REQUIRE(std::sscanf(text.c_str(), "%zu %zu %zu", &low, &initial, &max) == 3);
  return max;
}

}  // namespace

TEST_CASE("a body serialized per request (cache=0, chunked) goes out a buffer at a time, before it is all serialized") {
  server::ServerOptions options;
  options.serializer_buffer_bytes = 1024;  // a chunk every 921 bytes or so: a dozen weather records
  TestServer server(options);
  const std::size_t flush_at = options.serializer_buffer_bytes * 9 / 10;

  SUBCASE("the client reads the first chunk while most records are still to be serialized") {
    // The server serializes a chunk only when the previous one went out, so while this client reads
    // nothing, what the server can have serialized is bounded by what the kernel holds for the
    // connection: its send buffer (at most tcp_wmem's maximum), our receive buffer (set small here,
    // before any byte arrives) and the chunk whose send waits. The body is made four times that.
    RawClient client(server.port());
    const int receive_buffer = 64 << 10;
    REQUIRE(::setsockopt(client.fd(), SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer) == 0);
    const std::size_t held = tcp_send_buffer_max() + 4 * static_cast<std::size_t>(receive_buffer) + 2 * 1024;
    const std::size_t count = 4 * held / 77 + 1;  // weather records are 77 bytes or more
    if (count > 524'288) {
      MESSAGE("skipped: tcp_wmem's maximum is too large for a /weather body to exceed it four times");
      return;
    }
    const std::string whole = expected_body(server::Route::weather, server::Format::json, static_cast<uint32_t>(count));
    REQUIRE(whole.size() > 4 * held);
    client.send(get_request("/weather?count=" + std::to_string(count) + "&cache=0&chunked=1"));

    std::string bytes;
    read_at_least(client.fd(), bytes, 1);
    std::size_t head_end = std::string::npos;
    while ((head_end = bytes.find("\r\n\r\n")) == std::string::npos) read_at_least(client.fd(), bytes, bytes.size() + 1);
    CHECK(bytes.starts_with("HTTP/1.1 200 OK\r\n"));
    CHECK(bytes.substr(0, head_end).find("Transfer-Encoding: chunked") != std::string::npos);
    const std::size_t line_start = head_end + 4;
    std::size_t line_end = std::string::npos;
    while ((line_end = bytes.find("\r\n", line_start)) == std::string::npos) {
      read_at_least(client.fd(), bytes, bytes.size() + 1);
    }
    const std::size_t first_size = std::stoul(bytes.substr(line_start, line_end - line_start), nullptr, 16);
    CHECK(first_size >= flush_at);
    CHECK(first_size <= flush_at + server::kMaxWeatherRecordBytes);
    read_at_least(client.fd(), bytes, line_end + 2 + first_size);
    CHECK(bytes.compare(line_end + 2, first_size, whole, 0, first_size) == 0);

    // However long the server has had: every chunk it serialized is at most one buffer and one
    // record, and the kernel can hold only a quarter of the body.
    const uint64_t serialized = stats_counter(server.port(), "serialized_chunks");
    INFO("chunks serialized: ", serialized, ", body: ", whole.size(), " bytes");
    CHECK(serialized >= 1);
    CHECK(serialized * (flush_at + server::kMaxWeatherRecordBytes) < whole.size());

    // A client that goes away mid-body: the server drops the answer and the connection, and serves on.
    // (The reset fails the send waiting for room, or the armed receive: a connection error, which the
    // cleanly closed /stats connections never count.)
    const uint64_t errors_before = stats_counter(server.port(), "connection_errors");
    client.reset();
    const auto deadline = std::chrono::steady_clock::now() + kIoTimeout;
    while (stats_counter(server.port(), "connection_errors") == errors_before &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    CHECK(stats_counter(server.port(), "connection_errors") == errors_before + 1);
    RawClient next(server.port());
    CHECK(next.get("/weather?count=30&cache=0&chunked=1").body ==
          expected_body(server::Route::weather, server::Format::json, 30));
  }

  SUBCASE("the chunks are whole buffers of records, and the body is the one serialized whole") {
    RawClient client(server.port());
    for (std::string target : {"/weather?count=5000&cache=0&chunked=1", "/profiles?count=300&cache=0&chunked=1&format=ndjson"}) {
      INFO("GET ", target);
      const bool profiles = target.starts_with("/profiles");
      const Response response = client.get(target);
      CHECK(response.status == 200);
      CHECK(response.body == (profiles ? expected_body(server::Route::profiles, server::Format::ndjson, 300)
                                  : expected_body(server::Route::weather, server::Format::json, 5000)));
      const std::size_t record = profiles ? server::kMaxProfileRecordBytes : server::kMaxWeatherRecordBytes;
      std::size_t wrong = 0;
      for (std::size_t i = 0; i + 1 < response.chunk_sizes.size(); ++i) {
        if (response.chunk_sizes[i] < flush_at || response.chunk_sizes[i] > flush_at + record) ++wrong;
      }
      CHECK(wrong == 0);
      CHECK(response.chunk_sizes.size() > 1);
    }
    // The connection is kept and answers the next request.
    CHECK(client.get("/health").status == 200);
  }
}

TEST_CASE("--serializer-buffer 0 serializes the whole body first and frames it in chunks of chunk=") {
  server::ServerOptions options;
  options.serializer_buffer_bytes = 0;
  TestServer server(options);
  RawClient client(server.port());
  const Response response = client.get("/weather?count=500&cache=0&chunked=1&chunk=1000");
  CHECK(response.body == expected_body(server::Route::weather, server::Format::json, 500));
  REQUIRE(response.chunk_sizes.size() > 1);
  for (std::size_t i = 0; i + 1 < response.chunk_sizes.size(); ++i) CHECK(response.chunk_sizes[i] == 1000);
  CHECK(stats_counter(server.port(), "serialized_chunks") == 0);
}
