#pragma once
// What the InflightClient tests share: short deadlines, a server whose every body names the server
// connection and the request it answers, and a rig (a ring, a client, one string sink per
// connection) that checks each round's bodies byte for byte and that every sink stays bound to one
// connection from round to round.
//
// Threads: the test's thread, except the server handlers (test_server.hpp), which run on their own.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "../support/net.hpp"
#include "ringlab/http/inflight_client.hpp"
#include "ringlab/http/sinks.hpp"
#include "test_server.hpp"

namespace ringlab::http::testing {

using namespace std::chrono_literals;

// Short deadlines: a failing test ends in seconds, never hangs.
inline InflightOptions inflight_options(ReceiveMode mode = ReceiveMode::own_buffer) {
  InflightOptions options;
  options.connect_timeout = 2s;
  options.io_timeout = 5s;
  options.receive = mode;
  return options;
}

// Body of the `round`th response (0-based) of server connection `connection` (numbered in accept
// order): a fixed-width line naming both, then `size` bytes that depend on both, so a body given to
// the wrong sink, from another round, or shifted, does not compare equal.
inline std::string numbered_body(int connection, int round, std::size_t size) {
  char line[64];
  std::snprintf(line, sizeof(line), "connection %04d round %05d\n", connection, round);
  // Byte i is '!' + (131 i + 7 connection + round) mod 89: a cycle of 89 bytes, appended whole.
  constexpr std::size_t kCycle = 89;
  char cycle[kCycle];
  const std::size_t offset = static_cast<std::size_t>(connection) * 7 + static_cast<std::size_t>(round);
  for (std::size_t i = 0; i < kCycle; ++i) cycle[i] = static_cast<char>('!' + (i * 131 + offset) % kCycle);
  std::string body(line);
  body.reserve(body.size() + size);
  for (std::size_t done = 0; done < size; done += kCycle) body.append(cycle, std::min(kCycle, size - done));
  return body;
}

// The server connection a numbered body came from, or -1.
inline int connection_of(std::string_view body) {
  int connection = -1;
  int round = -1;
  const std::string head(body.substr(0, 40));
  if (std::sscanf(head.c_str(), "connection %d round %d", &connection, &round) != 2) return -1;
  return connection;
}

using SizeFor = std::function<std::size_t(int connection)>;
// What server connection `connection` answers its `round`th request with, whole.
using Answer = std::function<std::string(int connection, int round)>;

inline Answer numbered_answers(SizeFor size_for) {
  return [size_for = std::move(size_for)](int connection, int round) {
    return with_length(numbered_body(connection, round, size_for(connection)));
  };
}

// Numbers its connections in accept order and answers each request with answer(connection, round),
// in one write. `misbehave`, when set, serves the first `misbehaving` server connections instead.
inline TestServer::Handler numbered_server(Answer answer, TestServer::Handler misbehave = nullptr,
                                           int misbehaving = 1) {
  auto next = std::make_shared<std::atomic<int>>(0);
  return [next, answer = std::move(answer), misbehave = std::move(misbehave), misbehaving](ServerConnection& c,
                                                                                           TestServer& server) {
    const int connection = (*next)++;
    if (connection < misbehaving && misbehave) {
      misbehave(c, server);
      return;
    }
    for (int round = 0;; ++round) {
      auto request = c.read_request();
      if (!request) return;
      server.record(std::move(*request));
      if (!c.write(answer(connection, round))) return;
    }
  };
}

// A client on its own ring with one string sink per connection.
class InflightRig {
 public:
  explicit InflightRig(const InflightOptions& options, const net::RingOptions& ring_options = {})
      : ring(net::testing::make_ring(ring_options)), client(*ring, options) {}

  Status connect(const TestServer& server, std::size_t connections) {
    url_text_ = server.url("/");
    auto url = Url::parse(url_text_);
    REQUIRE(url);
    bodies.assign(connections, std::string());
    string_sinks_.clear();
    string_sinks_.reserve(connections);
    sinks.clear();
    for (std::string& body : bodies) {
      body.reserve(1024);
      string_sinks_.emplace_back(body);
    }
    for (StringSink& sink : string_sinks_) sinks.push_back(&sink);
    bound_.assign(connections, -1);
    return client.connect(*url, connections);
  }

  Result<RoundInfo> round(std::string_view target = "/") { return client.round(target, sinks); }

  // A round that must succeed, every body numbered_body(k, round, size_for(k)) for the server
  // connection k the sink's connection has been bound to since its connect.
  RoundInfo checked_round(int round, const SizeFor& size_for, std::string_view target = "/") {
    auto info = this->round(target);
    REQUIRE_MESSAGE(info, (info ? "" : info.error().message()));
    CHECK(info->responses == bodies.size());
    uint64_t total = 0;
    std::set<int> seen;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      INFO("round ", round, ", sink ", i);
      const int connection = connection_of(bodies[i]);
      REQUIRE(connection >= 0);
      if (bound_[i] < 0) bound_[i] = connection;
      CHECK(connection == bound_[i]);
      seen.insert(connection);
      const std::string expected = numbered_body(connection, round, size_for(connection));
      CHECK(bodies[i].size() == expected.size());
      CHECK(bodies[i] == expected);
      CHECK(client.status(i) == 200);
      total += expected.size();
    }
    CHECK(seen.size() == bodies.size());  // every sink has a connection of its own
    CHECK(info->body_bytes == total);
    return *info;
  }

  // A round's sinks rebound: after the connections were opened again.
  void forget_bindings() { bound_.assign(bodies.size(), -1); }

  std::unique_ptr<net::Ring> ring;
  InflightClient client;
  std::vector<std::string> bodies;
  std::vector<BodySink*> sinks;

 private:
  std::string url_text_;
  std::vector<StringSink> string_sinks_;
  std::vector<int> bound_;
};

// The error of a round that must fail.
inline Error round_failed(const Result<RoundInfo>& info) {
  REQUIRE_FALSE(info);
  return info.error();
}

// The connection (1-based) an error's detail names ("connection 3 of 64: ..."), or 0.
inline std::size_t connection_named(const Error& error, std::size_t connections) {
  std::size_t named = 0;
  std::size_t of = 0;
  if (std::sscanf(error.detail.c_str(), "connection %zu of %zu:", &named, &of) != 2 || of != connections) return 0;
  return named;
}

}  // namespace ringlab::http::testing
