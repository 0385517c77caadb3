// InflightClient when something goes wrong: a connection whose server sends garbage, closes or
// resets mid-body, or never answers; connects refused or left unanswered; calls out of order. The
// error names the connection, the others of the round still finish, the failed one is closed, and
// nothing is retried: the client opens connections again only when connect() is called.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include "../support/feature_gate.hpp"
#include "inflight_support.hpp"
#include "ringlab/net/socket.hpp"

using namespace ringlab;
using namespace ringlab::http;
using namespace ringlab::http::testing;

namespace {

using Clock = std::chrono::steady_clock;

std::size_t small_size(int) { return 2000; }

constexpr std::size_t kConnections = 3;  // of the tests where one connection of them fails

struct Misbehaviour {
  const char* what;
  TestServer::Handler serve;
  Errc expected;
};

// Every connection of the rig but the failed one (1-based `named`) got its own whole body, and stays open.
void others_complete(const InflightRig& rig, std::size_t named) {
  for (std::size_t i = 0; i < kConnections; ++i) {
    if (i + 1 == named) continue;
    const int served_by = connection_of(rig.bodies[i]);
    CHECK(served_by >= 1);
    CHECK(rig.bodies[i] == numbered_body(served_by, 0, small_size(served_by)));
  }
  CHECK(rig.client.open_connections() == kConnections - 1);
}

// Each reads the request, then does what its name says; none says how long the body really is.
std::vector<Misbehaviour> misbehaviours() {
  return {
      {"garbage", [](ServerConnection& c, TestServer&) {
         if (!c.read_request()) return;
         c.write("garbage\r\n\r\n");
         c.wait_for_close();
       }, Errc::malformed},
      {"closes mid-body", [](ServerConnection& c, TestServer&) {
         if (!c.read_request()) return;
         c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + std::string(500, 'x'));
         c.close();
       }, Errc::truncated},
      {"resets mid-body", [](ServerConnection& c, TestServer&) {
         if (!c.read_request()) return;
         c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + std::string(1000, 'x'));
         std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the bytes arrive before the RST
         c.reset();
       }, Errc::reset},
      {"never answers", [](ServerConnection& c, TestServer&) {
         if (!c.read_request()) return;
         c.wait_for_close();
       }, Errc::timeout},
  };
}

// Three connections, the first the server accepts misbehaving: the round fails with that
// connection's error, the other two responses arrive whole, the failed connection is closed, the
// next round is refused, and connect() makes the client whole again. With fixed_buffer_bytes, every
// body is received into a registered buffer (the rig's FixedSlot mode): what follows the head, the
// close or the reset included, comes by READ_FIXED.
void one_connection_fails(const InflightOptions& base, std::size_t fixed_buffer_bytes = 0) {
  for (const Misbehaviour& row : misbehaviours()) {
    INFO(row.what);
    InflightOptions options = base;
    options.io_timeout = std::chrono::milliseconds(500);
    TestServer server(numbered_server(numbered_answers(small_size), row.serve));
    InflightRig rig(options, {}, fixed_buffer_bytes);
    REQUIRE(rig.connect(server, kConnections));

    const auto started = Clock::now();
    const Error error = round_failed(rig.round());
    CHECK(Clock::now() - started < std::chrono::seconds(3));
    INFO(error.message());
    CHECK(error.code == row.expected);
    CHECK(error.peer == "127.0.0.1:" + std::to_string(server.port()));
    const std::size_t named = connection_named(error, kConnections);
    REQUIRE(named >= 1);
    CHECK(error.detail.find("connections failed") == std::string::npos);  // only the one
    others_complete(rig, named);
    CHECK(rig.client.stats().connections_closed == 1);
    CHECK(rig.client.stats().failed_rounds == 1);

    // Nothing reopens the failed connection behind the caller's back.
    const Error refused = round_failed(rig.round());
    CHECK(refused.code == Errc::io);
    CHECK(refused.detail.find("connection " + std::to_string(named) + " of 3 was closed by an earlier error") !=
          std::string::npos);
    CHECK(server.accepted() == static_cast<int>(kConnections));

    REQUIRE(rig.connect(server, kConnections));  // new connections, all well-behaved
    rig.forget_bindings();
    rig.checked_round(0, small_size);
    CHECK(server.accepted() == static_cast<int>(2 * kConnections));
  }
}

InflightOptions provided_small() {
  InflightOptions options = inflight_options(ReceiveMode::provided_buffers);
  options.provided_buffer_count = 4;
  options.provided_buffer_bytes = 4096;
  return options;
}

}  // namespace

TEST_CASE("own_buffer: garbage, a close or a reset mid-body, silence: the round fails naming the connection") {
  one_connection_fails(inflight_options());
}

TEST_CASE("provided_buffers: garbage, a close or a reset mid-body, silence: the round fails naming the connection" *
          doctest::test_suite(kFeatureGated)) {
  if (!has_provided_buffer_ring(*net::testing::make_ring())) return;
  one_connection_fails(provided_small());
}

TEST_CASE("registered buffers: garbage, a close or a reset mid-body, silence: the round fails naming the connection" *
          doctest::test_suite(kFeatureGated)) {
  if (!has_fixed_buffers(*net::testing::make_ring())) return;
  one_connection_fails(inflight_options(), 1 << 20);  // room for the reset's announced megabyte
}

TEST_CASE("registered buffers: a body larger than its buffer, or a window the kernel refuses, fails its connection" *
          doctest::test_suite(kFeatureGated)) {
  if (!has_fixed_buffers(*net::testing::make_ring())) return;
  constexpr std::size_t kBufferBytes = 8192;
  SUBCASE("a body larger than the buffer: body_too_large, at the head, before any byte of it lands") {
    // The first connection the server accepts answers 10,000 bytes; the others 2,000.
    const SizeFor size_for = [](int connection) {
      return connection == 0 ? std::size_t{10'000} : small_size(connection);
    };
    TestServer server(numbered_server(numbered_answers(size_for)));
    InflightRig rig(inflight_options(), {}, kBufferBytes);
    REQUIRE(rig.connect(server, kConnections));
    const Error error = round_failed(rig.round());
    INFO(error.message());
    CHECK(error.code == Errc::body_too_large);
    CHECK(error.detail.find("exceeds the fixed buffer") != std::string::npos);
    const std::size_t named = connection_named(error, kConnections);
    REQUIRE(named >= 1);
    others_complete(rig, named);
  }
  SUBCASE("an index the ring has no buffer for, or a window outside the buffer its index names: the read fails") {
    for (const bool unknown_index : {true, false}) {
      INFO((unknown_index ? "index 7 of 3 buffers" : "buffer 1's memory under index 0"));
      TestServer server(numbered_server(numbered_answers(small_size)));
      InflightOptions options = inflight_options();
      options.receive_buffer_bytes = 16;  // the head alone: the body is asked of the sink's window
      InflightRig rig(options, {}, kBufferBytes);
      REQUIRE(rig.connect(server, kConnections));
      FixedSlot wrong(rig.fixed->buffer(1), unknown_index ? 7 : 0);
      rig.sinks[1] = &wrong;
      const Error error = round_failed(rig.round());
      INFO(error.message());
      CHECK(error.detail.find("connection 2 of 3: read_fixed") != std::string::npos);
      CHECK(error.detail.find("connections failed") == std::string::npos);  // only the one
      CHECK(rig.client.open_connections() == kConnections - 1);
      for (const std::size_t i : {std::size_t{0}, std::size_t{2}}) {
        const int served_by = connection_of(rig.bodies[i]);
        CHECK(rig.bodies[i] == numbered_body(served_by, 0, small_size(served_by)));
      }
    }
  }
}

TEST_CASE("Two silent connections of four: the lowest is named, both counted, the others complete") {
  TestServer server(numbered_server(numbered_answers(small_size), misbehaviours()[3].serve, 2));
  InflightOptions options = inflight_options();
  options.io_timeout = std::chrono::milliseconds(300);
  InflightRig rig(options);
  REQUIRE(rig.connect(server, 4));
  const Error error = round_failed(rig.round());
  INFO(error.message());
  CHECK(error.code == Errc::timeout);
  CHECK(error.detail.find("no complete response within io_timeout (300 ms)") != std::string::npos);
  CHECK(error.detail.find("(2 of 4 connections failed)") != std::string::npos);
  const std::size_t named = connection_named(error, 4);
  REQUIRE(named >= 1);
  for (std::size_t i = 0; i + 1 < named; ++i) CHECK(connection_of(rig.bodies[i]) >= 2);  // the lowest failed
  CHECK(rig.client.open_connections() == 2);
}

TEST_CASE("A refused connect fails connect(), naming the connection, and leaves no connection open") {
  uint16_t port;
  {
    TestServer closed(respond_with(""));
    port = closed.port();
  }
  InflightRig rig(inflight_options());
  const std::string text = "http://127.0.0.1:" + std::to_string(port) + "/";  // the Url's views point into it
  auto url = Url::parse(text);
  REQUIRE(url);
  auto connected = rig.client.connect(*url, 2);
  REQUIRE_FALSE(connected);
  INFO(connected.error().message());
  CHECK(connected.error().code == Errc::refused);
  CHECK(connection_named(connected.error(), 2) >= 1);
  CHECK(connected.error().peer == "127.0.0.1:" + std::to_string(port));
  CHECK(rig.client.connections() == 0);
  CHECK(round_failed(rig.client.round("/", {})).code == Errc::io);  // round() before a connect()
}

TEST_CASE("connect_timeout: connects a listener never takes fail together within it") {
  // Backlog 0, never accepted: once the accept queue holds one connection, the kernel drops every
  // further SYN, so those connects wait for a SYN-ACK that does not come.
  auto where = net::Endpoint::parse("127.0.0.1", 0);
  REQUIRE(where);
  auto listener = net::listen_tcp(*where, net::ListenOptions{.backlog = 0, .reuse_port = false});
  REQUIRE(listener);
  auto local = net::Endpoint::local_of(listener->get());
  REQUIRE(local);
  InflightOptions options = inflight_options();
  options.connect_timeout = std::chrono::milliseconds(300);
  InflightRig rig(options);
  const std::string text = "http://" + local->to_string() + "/";
  auto url = Url::parse(text);
  REQUIRE(url);
  const auto started = Clock::now();
  auto connected = rig.client.connect(*url, 4);
  const auto took = Clock::now() - started;
  REQUIRE_FALSE(connected);
  INFO(connected.error().message());
  CHECK(connected.error().code == Errc::timeout);
  CHECK(connected.error().detail.find("not connected within connect_timeout (300 ms)") != std::string::npos);
  CHECK(took >= std::chrono::milliseconds(300));
  CHECK(took < std::chrono::seconds(3));
  CHECK(rig.client.connections() == 0);
}

TEST_CASE("round() with a sink count other than the connections', or a host name, is refused") {
  TestServer server(numbered_server(numbered_answers(small_size)));
  InflightRig rig(inflight_options());
  REQUIRE(rig.connect(server, 2));
  std::string one;
  StringSink sink(one);
  BodySink* sinks[] = {&sink};
  const Error error = round_failed(rig.client.round("/", sinks));
  CHECK(error.code == Errc::io);
  CHECK(error.detail.find("1 sinks for 2 connections") != std::string::npos);
  rig.checked_round(0, small_size);  // nothing was sent: the connections are as they were

  auto name = Url::parse("http://example.invalid/");
  REQUIRE(name);
  CHECK(rig.client.connect(*name, 1).error().code == Errc::unsupported);
}

TEST_CASE("A retired connection that cannot be reopened fails the next round before anything is sent") {
  InflightRig rig(inflight_options());
  {
    TestServer server([](ServerConnection& c, TestServer&) {
      if (c.read_request()) c.write(with_length("bye", "Connection: close\r\n"));
    });  // and closes, as it said
    REQUIRE(rig.connect(server, 2));
    auto info = rig.round();
    REQUIRE_MESSAGE(info, (info ? "" : info.error().message()));
    CHECK(info->retired == 2);
    CHECK(rig.bodies[0] == "bye");
  }  // the server is gone: its port refuses
  const Error error = round_failed(rig.round());
  INFO(error.message());
  CHECK(error.code == Errc::refused);
  CHECK(connection_named(error, 2) >= 1);
  CHECK(error.detail.find("(2 of 2 connections failed)") != std::string::npos);
  CHECK(rig.client.open_connections() == 0);
  CHECK(rig.client.stats().connections_reopened == 0);
  CHECK(round_failed(rig.round()).code == Errc::io);  // closed by that error: connect() is the way back
}
