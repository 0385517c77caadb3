// The server's body strategies (ServerOptions::body_strategy): every one answers the bytes the
// default (writev) answers, over real sockets, and the zero-copy ones count their sends.
#include <doctest/doctest.h>
#include <sys/socket.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"

using namespace ringlab;
using namespace ringlab::e2e;

namespace {

using server::BodyStrategy;

constexpr BodyStrategy kStrategies[] = {BodyStrategy::copy, BodyStrategy::send_zc, BodyStrategy::fixed,
                                        BodyStrategy::sendfile};

server::ServerOptions options_for(BodyStrategy strategy, std::size_t inline_body_bytes) {
  server::ServerOptions options;
  options.body_strategy = strategy;
  options.inline_body_bytes = inline_body_bytes;
  options.fixed_body_bytes = 16u << 20;
  // Small enough that the pipelined burst below stops reading while its answers go out.
  options.max_queued_output_bytes = 256u << 10;
  return options;
}

std::string whole(const Response& response) {
  CHECK_FALSE(response.chunked);
  return response.head + response.body;
}

// What `port` answers to a fixed set of requests, every response's bytes in order. `answers` counts
// the answers whose body went out (not HEAD).
std::vector<std::string> script(uint16_t port, unsigned& answers) {
  std::vector<std::string> out;
  answers = 0;
  RawClient client(port);
  for (const char* target : {"/weather?count=10", "/weather?count=1000", "/weather?count=10000", "/repos?count=200",
                             "/github?count=100", "/weather?count=1000"}) {
    client.send(get_request(target));
    out.push_back(whole(client.read_response()));
    ++answers;
  }
  // HEAD of a cached body: its Content-Length, no body.
  client.send("HEAD /weather?count=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  out.push_back(client.read_response(true).head);
  // A body that misses the cache (cache=0: generated for this request alone).
  client.send(get_request("/weather?count=700&cache=0"));
  out.push_back(whole(client.read_response()));
  ++answers;
  // Two pipelined requests in one send: both answers in one batch.
  client.send(get_request("/weather?count=1000") + get_request("/weather?count=10"));
  out.push_back(whole(client.read_response()));
  out.push_back(whole(client.read_response()));
  answers += 2;
  // A burst beyond max_queued_output: the connection pauses and resumes; answers stay in order.
  std::string burst;
  for (int i = 0; i < 24; ++i) burst += get_request(i % 2 == 0 ? "/weather?count=1000" : "/repos?count=200");
  client.send(burst);
  for (int i = 0; i < 24; ++i) out.push_back(whole(client.read_response()));
  answers += 24;
  // An HTTP/1.0 request without keep-alive: the answer, then the server closes.
  RawClient closing(port);
  closing.send("GET /weather?count=1000 HTTP/1.0\r\n\r\n");
  out.push_back(closing.read_until_close());
  ++answers;
  return out;
}

}  // namespace

TEST_CASE("every body strategy answers the bytes writev answers") {
  for (const std::size_t inline_bytes : {std::size_t{1024}, std::size_t{0}}) {
    std::vector<std::string> expected;
    unsigned answers = 0;
    uint64_t reference_sends = 0;
    {
      TestServer reference(options_for(BodyStrategy::writev, inline_bytes));
      expected = script(reference.port(), answers);
      reference_sends = reference.stop().sends;
    }
    REQUIRE(expected.size() == 35);
    for (const BodyStrategy strategy : kStrategies) {
      INFO("strategy ", server::body_strategy_name(strategy), ", inline body bytes ", inline_bytes);
      TestServer tested(options_for(strategy, inline_bytes));
      const std::vector<std::string> got = script(tested.port(), answers);
      REQUIRE(got.size() == expected.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("response ", i);
        CHECK(got[i].size() == expected[i].size());
        CHECK(got[i] == expected[i]);
      }
      const server::ServerStats stats = tested.stop();
      CHECK(stats.connection_errors == 0);
      // The bodies took their own operations: a send_zc or a pair of splices each, after the heads.
      if (strategy != BodyStrategy::copy) CHECK(stats.sends > reference_sends + answers / 2);
      if (strategy == BodyStrategy::send_zc) {
        // On loopback the kernel usually copies: either count will do. Every answer's body above
        // the inline size went by at least one zero-copy send.
        CHECK(stats.zc_sends + stats.zc_copied >= answers - (inline_bytes > 0 ? 2u : 0u));
      }
      if (strategy == BodyStrategy::fixed) {
        CHECK(stats.zc_sends + stats.zc_copied >= answers - (inline_bytes > 0 ? 2u : 0u));
        CHECK(stats.fixed_fallbacks == 1);  // the uncached body
      }
      if (strategy == BodyStrategy::sendfile) CHECK(stats.file_fallbacks == 1);  // the uncached body
    }
  }
}

TEST_CASE("fixed: a body that does not fit the registered area goes by send_zc, with the same bytes") {
  server::ServerOptions options = options_for(BodyStrategy::fixed, 1024);
  options.fixed_body_bytes = 64u << 10;  // /weather?count=1000 is larger
  TestServer reference(options_for(BodyStrategy::writev, 1024));
  TestServer tested(options);
  RawClient expected_client(reference.port());
  RawClient client(tested.port());
  for (const char* target : {"/weather?count=1000", "/weather?count=1000", "/weather?count=100"}) {
    INFO(target);
    expected_client.send(get_request(target));
    client.send(get_request(target));
    CHECK(whole(client.read_response()) == whole(expected_client.read_response()));
  }
  const server::ServerStats stats = tested.stop();
  CHECK(stats.fixed_fallbacks >= 2);
  CHECK(stats.zc_sends + stats.zc_copied >= 3);
}

TEST_CASE("body strategies: names, /env, and a peer that goes away mid-answer") {
  for (const BodyStrategy strategy : {BodyStrategy::writev, BodyStrategy::copy, BodyStrategy::send_zc,
                                      BodyStrategy::fixed, BodyStrategy::sendfile}) {
    const std::string_view name = server::body_strategy_name(strategy);
    INFO(name);
    CHECK(server::parse_body_strategy(name) == strategy);
    TestServer tested(options_for(strategy, 1024));
    {
      RawClient client(tested.port());
      const Response env = client.get("/env");
      CHECK(env.body.find("\"body_strategy\":\"" + std::string(name) + "\"") != std::string::npos);
    }
    {
      // A large answer to a client that resets at once: the server closes that connection and goes on.
      RawClient leaving(tested.port());
      leaving.send(get_request("/weather?count=20000") + get_request("/weather?count=20000"));
      leaving.reset();
      RawClient next(tested.port());
      CHECK(next.get("/weather?count=1000").status == 200);
    }
  }
  CHECK_FALSE(server::parse_body_strategy("sendfile2").has_value());
  CHECK_FALSE(server::parse_body_strategy("").has_value());
}

TEST_CASE("body strategies: a client that stops reading mid-body does not hold the server's stop") {
  for (const BodyStrategy strategy : {BodyStrategy::copy, BodyStrategy::send_zc, BodyStrategy::fixed,
                                      BodyStrategy::sendfile}) {
    INFO(server::body_strategy_name(strategy));
    server::ServerOptions options = options_for(strategy, 1024);
    options.fixed_body_bytes = 64u << 20;
    options.shutdown_timeout = 300ms;
    TestServer tested(options);
    RawClient stalled(tested.port());
    // Megabytes that the socket buffers cannot hold: the body's operation waits on the socket.
    stalled.send(get_request("/weather?count=100000"));
    std::this_thread::sleep_for(300ms);
    const auto before = std::chrono::steady_clock::now();
    const server::ServerStats stats = tested.stop();
    CHECK(std::chrono::steady_clock::now() - before < 5s);
    CHECK(stats.idle_closed >= 1);  // closed by the shutdown timeout
  }
}

TEST_CASE("body strategies: bodies evicted from the cache while their answers go out keep their bytes") {
  // One cache entry: every request below evicts the body of the one before, whose answer may still
  // be queued or in flight (its registered range or file is given back only after it went out).
  auto run = [](BodyStrategy strategy) {
    server::ServerOptions options = options_for(strategy, 1024);
    options.cache_entries = 1;
    options.fixed_body_bytes = 1u << 20;
    TestServer tested(options);
    RawClient client(tested.port());
    std::string burst;
    const char* targets[] = {"/weather?count=1000", "/repos?count=300", "/weather?count=3000", "/github?count=50"};
    for (int i = 0; i < 16; ++i) burst += get_request(targets[i % 4]);
    client.send(burst);
    std::vector<std::string> out;
    for (int i = 0; i < 16; ++i) out.push_back(whole(client.read_response()));
    CHECK(tested.stop().connection_errors == 0);
    return out;
  };
  const std::vector<std::string> expected = run(BodyStrategy::writev);
  for (const BodyStrategy strategy : kStrategies) {
    INFO(server::body_strategy_name(strategy));
    CHECK(run(strategy) == expected);
  }
}

TEST_CASE("body strategies: a client that half-closes after its requests still reads every answer whole") {
  auto run = [](BodyStrategy strategy) {
    TestServer tested(options_for(strategy, 1024));
    RawClient client(tested.port());
    client.send(get_request("/weather?count=1000") + get_request("/weather?count=20000"));
    REQUIRE(::shutdown(client.fd(), SHUT_WR) == 0);
    std::string all = client.read_until_close();
    CHECK(tested.stop().connection_errors == 0);
    return all;
  };
  const std::string expected = run(BodyStrategy::writev);
  CHECK(expected.size() > 1'500'000);
  for (const BodyStrategy strategy : kStrategies) {
    INFO(server::body_strategy_name(strategy));
    const std::string got = run(strategy);
    CHECK(got.size() == expected.size());
    CHECK(got == expected);
  }
}

TEST_CASE("GET /stats: every counter by name, summed over the threads, current while the server runs") {
  server::ServerOptions options = options_for(BodyStrategy::send_zc, 0);
  options.threads = 2;
  TestServer tested(options);
  // Several connections, so that both threads are likely to serve some (reuseport spreads them);
  // the sum is checked either way.
  constexpr unsigned kConnections = 6;
  constexpr unsigned kPerConnection = 3;
  for (unsigned c = 0; c < kConnections; ++c) {
    RawClient client(tested.port());
    for (unsigned i = 0; i < kPerConnection; ++i) {
      client.send(get_request("/weather?count=100"));
      CHECK(client.read_response().status == 200);
    }
  }
  const auto read_stats = [&] {
    RawClient client(tested.port());
    client.send(get_request("/stats"));
    const Response response = client.read_response();
    REQUIRE(response.status == 200);
    auto parsed = nlohmann::json::parse(response.body, nullptr, false);
    REQUIRE(parsed.is_object());
    return parsed;
  };
  const auto zero_copy = [](const nlohmann::json& stats) {
    return stats["zc_sends"].get<uint64_t>() + stats["zc_copied"].get<uint64_t>();
  };
  // Another thread's figures are those it published last (at its latest tick when it is quiet, at
  // most 1 s ago), and a zero-copy send is counted at its notification, which may come after the
  // client has the bytes: read again until they show, for at most 5 s.
  const auto read_stats_until = [&](auto done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    auto stats = read_stats();
    while (!done(stats) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      stats = read_stats();
    }
    return stats;
  };
  const unsigned answers = kConnections * kPerConnection;
  const auto first = read_stats_until([&](const nlohmann::json& stats) { return zero_copy(stats) >= answers; });
  CHECK(first.size() == server::kServerCounters.size());
  for (const server::ServerCounter& counter : server::kServerCounters) {
    INFO(counter.name);
    REQUIRE(first.contains(std::string(counter.name)));
    CHECK(first[std::string(counter.name)].is_number_unsigned());
  }
  CHECK(first["requests"].get<uint64_t>() >= answers);
  CHECK(first["accepted"].get<uint64_t>() >= kConnections + 1);
  // send_zc with no inline bodies: every /weather body went by a zero-copy send, which the kernel
  // either sent from our pages or copied (as it does on loopback).
  CHECK(zero_copy(first) >= answers);
  CHECK(first["connection_errors"].get<uint64_t>() == 0);

  // Counted as it goes: one more answer shows in the next reading, and Server::stats() agrees
  // while the server runs.
  {
    RawClient client(tested.port());
    client.send(get_request("/weather?count=100"));
    CHECK(client.read_response().status == 200);
  }
  const auto second = read_stats_until([&](const nlohmann::json& stats) { return zero_copy(stats) > zero_copy(first); });
  CHECK(second["requests"].get<uint64_t>() >= first["requests"].get<uint64_t>() + 2);  // the answer and /stats
  CHECK(zero_copy(second) > zero_copy(first));
  const server::ServerStats running = tested.get().stats();
  CHECK(running.requests >= second["requests"].get<uint64_t>());
  const server::ServerStats final_stats = tested.stop();
  CHECK(final_stats.requests >= running.requests);
  CHECK(final_stats.zc_sends + final_stats.zc_copied >= answers + 1);
}

TEST_CASE("ServerStats: += adds every counter, and stats_json names each one once") {
  server::ServerStats a;
  server::ServerStats b;
  uint64_t value = 1;
  for (const server::ServerCounter& counter : server::kServerCounters) {
    a.*counter.field = value;
    b.*counter.field = 100 * value;
    ++value;
  }
  a += b;
  value = 1;
  for (const server::ServerCounter& counter : server::kServerCounters) {
    INFO(counter.name);
    CHECK(a.*counter.field == 101 * value);
    ++value;
  }
  const auto parsed = nlohmann::json::parse(server::stats_json(a), nullptr, false);
  REQUIRE(parsed.is_object());
  CHECK(parsed.size() == server::kServerCounters.size());
  CHECK(parsed["accepted"].get<uint64_t>() == 101);
  // The last counter of the table carries the largest value: every one is named in its place.
  CHECK(parsed[std::string(server::kServerCounters.back().name)].get<uint64_t>() ==
        101 * server::kServerCounters.size());
}
