// /proxy: the server fetches /weather from its upstream on the worker's ring, pooled or fresh.
#include <doctest/doctest.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "ringlab/server/body_cache.hpp"
#include "support.hpp"
#include "../support/net.hpp"

using namespace ringlab;
using namespace ringlab::e2e;

namespace {

std::string weather(uint32_t count) {
  return server::generate_body({server::Route::weather, server::Format::json, count}).bytes;
}

// Two pooled GETs of /proxy?count=2 on one client connection, each answered with weather(2), with
// `pause` after each.
void proxy_twice_pooled(TestServer& server, std::chrono::milliseconds pause) {
  RawClient client(server.port());
  for (int i = 0; i < 2; ++i) {
    Response response = client.get("/proxy?count=2&conn=pooled");
    CHECK(response.status == 200);
    CHECK(response.body == weather(2));
    std::this_thread::sleep_for(pause);
  }
}

// A scripted upstream on loopback, one thread: for the i-th connection it accepts, steps[i] says
// what it does. Every wait is bounded (5 s), so a test that goes wrong fails instead of hanging.
class ScriptedUpstream {
 public:
  enum class Step {
    answer,                     // answers one request with the body, then waits for the close
    answer_then_close_on_next,  // answers one request, reads the next one and closes unanswered
  };

  ScriptedUpstream(std::vector<Step> steps, std::string body)
      : listener_(net::testing::listen_loopback()), steps_(std::move(steps)), body_(std::move(body)) {
    net::testing::bound_blocking_io(listener_.fd.get());  // accept() waits at most that long too
    thread_ = std::thread([this] { run(); });
  }
  ~ScriptedUpstream() { (void)finish(); }

  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(listener_.endpoint.port()); }
  // Waits for the script to end; the connections accepted.
  int finish() {
    if (thread_.joinable()) thread_.join();
    return accepted_;
  }

 private:
  void run() {
    for (Step step : steps_) {
      net::Fd fd(::accept4(listener_.fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!fd.valid()) return;
      ++accepted_;
      net::testing::bound_blocking_io(fd.get());
      if (!read_request(fd.get())) return;
      const std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                 std::to_string(body_.size()) + "\r\n\r\n" + body_;
      if (::send(fd.get(), answer.data(), answer.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(answer.size())) return;
      if (step == Step::answer_then_close_on_next) {
        (void)read_request(fd.get());
        continue;  // closed unanswered
      }
      char byte = 0;
      while (::recv(fd.get(), &byte, 1, 0) > 0) {
      }
    }
  }
  // Reads up to the end of a head (the proxy's GETs have no body).
  static bool read_request(int fd) {
    std::string head;
    char chunk[1024];
    while (head.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return false;
      head.append(chunk, static_cast<std::size_t>(n));
    }
    return true;
  }

  net::testing::Listener listener_;
  std::vector<Step> steps_;
  std::string body_;
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

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

TEST_CASE("/proxy?answer=status fetches from the upstream and answers its status alone, with no body") {
  TestServer server;
  RawClient client(server.port());
  for (std::string conn : {"pooled", "fresh"}) {
    for (std::string chunked : {"", "&chunked=1"}) {
      const std::string target = "/proxy?count=10&answer=status&conn=" + conn + chunked;
      INFO(target);
      client.send(get_request(target));
      const Response response = client.read_response();
      CHECK(response.status == 200);
      CHECK(response.body.empty());
    }
  }
  CHECK(server.get().stats().upstream_errors == 0);
}

TEST_CASE("/proxy?client=typed answers as client=manual does, over the same pool of upstream connections") {
  TestServer upstream;
  TestServer server(proxying_to(upstream.url("")));
  RawClient client(server.port());
  int pooled = 0;
  int fresh = 0;
  for (std::string conn : {"pooled", "fresh"}) {
    for (std::string answer : {"status", "body"}) {
      // Alternating, so that a pooled typed fetch reuses the connection a manual one left idle.
      for (std::string path : {"typed", "manual", "typed"}) {
        const std::string target = "/proxy?count=3&conn=" + conn + "&answer=" + answer + "&client=" + path;
        INFO(target);
        client.send(get_request(target));
        const Response response = client.read_response();
        CHECK(response.status == 200);
        CHECK(response.body == (answer == "body" ? weather(3) : std::string()));
        ++(conn == "pooled" ? pooled : fresh);
      }
    }
  }
  CHECK(server.stop().upstream_errors == 0);
  const auto upstream_stats = upstream.stop();
  CHECK(upstream_stats.requests == static_cast<uint64_t>(pooled + fresh));
  // Every pooled fetch, typed or manual, on the one kept-alive connection; every fresh one on its own.
  CHECK(upstream_stats.accepted == static_cast<uint64_t>(1 + fresh));
}

TEST_CASE("/proxy?client=typed turns an upstream's failure into a status as client=manual does") {
  // An upstream whose limit is 2 records answers count=3 with 400; one that refuses connections cannot
  // answer at all. Either is a 502 with a JSON error, and the server goes on serving.
  server::ServerOptions limited;
  limited.max_count = 2;
  TestServer upstream(limited);
  TestServer refusing_proxy(proxying_to("http://127.0.0.1:" + std::to_string(unused_port())));
  TestServer server(proxying_to(upstream.url("")));
  RawClient refused(refusing_proxy.port());
  RawClient client(server.port());
  for (std::string path : {"manual", "typed"}) {
    for (std::string conn : {"pooled", "fresh"}) {
      const std::string query = "&conn=" + conn + "&answer=status&client=" + path;
      INFO(query);
      CHECK(error_answer(client, "/proxy?count=3" + query, 502).find("answered status 400") != std::string::npos);
      CHECK(client.get("/proxy?count=2" + query).status == 200);
      CHECK(error_answer(refused, "/proxy?count=1" + query, 502).find("upstream") != std::string::npos);
    }
  }
  CHECK(refused.get("/health").status == 200);
  CHECK(server.stop().upstream_errors == 4);
  CHECK(refusing_proxy.stop().upstream_errors == 4);
}

TEST_CASE("/proxy retries once when the upstream closes a reused connection before answering") {
  // The upstream answers the first request, then closes that connection when the next request
  // arrives on it, as an upstream whose idle timeout fires just then does; a new connection is
  // answered. Deterministic: the close comes after the reuse, so no sweep can have seen it.
  ScriptedUpstream upstream({ScriptedUpstream::Step::answer_then_close_on_next, ScriptedUpstream::Step::answer},
                            weather(2));
  TestServer server(proxying_to(upstream.url()));
  proxy_twice_pooled(server, 0ms);
  auto stats = server.stop();
  CHECK(stats.upstream_errors == 0);
  CHECK(stats.upstream_retries == 1);
  CHECK(upstream.finish() == 2);  // connections it accepted
}

TEST_CASE("/proxy closes pooled connections that the upstream closed while they were idle") {
  server::ServerOptions upstream_options;
  upstream_options.idle_timeout = 100ms;  // closes kept-alive connections between our requests
  TestServer upstream(upstream_options);
  server::ServerOptions options = proxying_to(upstream.url(""));
  options.idle_timeout = 2s;  // the worker ticks every 250 ms
  TestServer server(options);
  proxy_twice_pooled(server, 1s);  // meanwhile the upstream closes the idle connection; a tick drops it
  auto stats = server.stop();
  CHECK(stats.upstream_errors == 0);
  CHECK(stats.upstream_idle_dropped == 2);
  CHECK(stats.upstream_retries == 0);  // nothing stale was reused
}

TEST_CASE("/proxy fetches from an explicit --upstream") {
  TestServer upstream;
  server::ServerOptions options = proxying_to(upstream.url(""));
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
  TestServer server(proxying_to("http://127.0.0.1:" + std::to_string(unused_port())));
  RawClient client(server.port());
  CHECK(error_answer(client, "/proxy?count=1", 502).find("upstream") != std::string::npos);
  CHECK(client.get("/health").status == 200);
  CHECK(server.stop().upstream_errors == 1);
}

TEST_CASE("an upstream that never answers gives 504 after --upstream-timeout") {
  SilentListener silent;  // completes handshakes, never answers
  server::ServerOptions options = proxying_to("http://127.0.0.1:" + std::to_string(silent.port()));
  options.upstream_timeout = 300ms;
  TestServer server(options);
  RawClient client(server.port());
  Response response = client.get("/proxy?count=1&conn=fresh");
  CHECK(response.status == 504);
  CHECK(json_error(response.body).has_value());
  CHECK(client.get("/plaintext").status == 200);
}

TEST_CASE("the built-in upstream does not proxy itself") {
  TestServer server;
  // Reach the upstream worker directly, as only someone who read upstream() could.
  const std::string upstream = server.get().upstream();
  const auto port = static_cast<uint16_t>(std::stoi(upstream.substr(upstream.rfind(':') + 1)));
  RawClient client(port);
  CHECK(client.get("/proxy?count=1").status == 502);
  client.send(get_request("/weather?count=2"));
  CHECK(client.read_response().body == weather(2));
}

TEST_CASE("while /proxy waits for its upstream, the same worker answers other connections") {
  SilentListener silent;  // the fetch waits until --upstream-timeout
  server::ServerOptions options;
  options.threads = 1;
  options.upstream = "http://127.0.0.1:" + std::to_string(silent.port());
  options.upstream_timeout = 1500ms;
  TestServer server(options);
  RawClient waiting(server.port());
  waiting.send(get_request("/proxy?count=1&conn=fresh"));
  std::this_thread::sleep_for(100ms);  // the fetch is in flight
  RawClient other(server.port());
  const auto before = std::chrono::steady_clock::now();
  CHECK(other.get("/health").status == 200);
  other.send(get_request("/weather?count=2"));
  CHECK(other.read_response().body == weather(2));
  // Far below the upstream timeout: the worker was not blocked by the fetch.
  CHECK(std::chrono::steady_clock::now() - before < 1000ms);
  CHECK(waiting.read_response().status == 504);
}

TEST_CASE("requests pipelined behind /proxy are answered after it, in order") {
  TestServer server;
  RawClient client(server.port());
  client.send(get_request("/proxy?count=3") + get_request("/health") + get_request("/proxy?count=1&conn=fresh") +
              get_request("/weather?count=2") + get_request("/proxy?count=0&chunked=1"));
  Response first = client.read_response();
  CHECK(first.status == 200);
  CHECK(first.body == weather(3));
  CHECK(client.read_response().body == R"({"status":"ok"})");
  CHECK(client.read_response().body == weather(1));
  CHECK(client.read_response().body == weather(2));
  Response last = client.read_response();
  CHECK(last.chunked);
  CHECK(last.body == weather(0));
}

TEST_CASE("a client that leaves while its /proxy fetch is in flight costs the worker nothing") {
  SilentListener silent;
  server::ServerOptions options;
  options.threads = 1;
  options.upstream = "http://127.0.0.1:" + std::to_string(silent.port());
  options.upstream_timeout = 5s;
  TestServer server(options);
  for (int i = 0; i < 20; ++i) {
    RawClient leaving(server.port());
    leaving.send(get_request(i % 2 == 0 ? "/proxy?count=1&conn=fresh" : "/proxy?count=1"));
    if (i % 3 == 0) {
      leaving.reset();
    }  // else closed normally by its destructor
  }
  RawClient client(server.port());
  CHECK(client.get("/plaintext").status == 200);
  // The abandoned fetches were cancelled: the stop does not wait for the 5 s upstream timeout.
  const auto before = std::chrono::steady_clock::now();
  auto stats = server.stop();
  CHECK(std::chrono::steady_clock::now() - before < 3s);
  CHECK(stats.requests == 21);
}
