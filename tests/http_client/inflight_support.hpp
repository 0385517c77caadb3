#pragma once
// What the InflightClient tests share: short deadlines, a server whose every body names the server
// connection and the request it answers, and a rig (a ring, a client, one string sink per
// connection, or one sink per connection over a registered buffer) that checks each round's bodies
// byte for byte and that every sink stays bound to one connection from round to round.
//
// Threads: the test's thread, except the server handlers (test_server.hpp), which run on their own.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <memory_resource>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../support/feature_gate.hpp"
#include "../support/net.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/http/inflight_client.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/net/fixed_buffers.hpp"
#include "test_server.hpp"

namespace ringlab::http::testing {

using namespace std::chrono_literals;
// The feature probes and the gated suite's name, for the test files that include this one.
using ringlab::net::testing::has_fixed_buffers;
using ringlab::net::testing::has_provided_buffer_ring;
using ringlab::testing::kFeatureGated;

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

// A body received into registered buffer `index`'s memory: a PaddedBuffer carved out of it under a
// PresizedSink with fixed index `index`, so that the client receives what follows the head by
// READ_FIXED (a test may give an index that is not the buffer's, to see the kernel refuse). Counts the
// body bytes that arrived at the buffer's write cursor (received in place: by READ_FIXED) and those
// copied there from the head's receive.
struct FixedSlot final : BodySink {
  FixedSlot(std::span<char> region, int index)
      : arena(region.data(), region.size() + base::kPadding, std::pmr::null_memory_resource()),
        buffer(region.size(), &arena),
        inner(buffer, index) {}
  Status begin(const ResponseHead& head) override { return inner.begin(head); }
  ReceiveWindow receive_window() override { return inner.receive_window(); }
  Status on_body(std::string_view bytes) override {
    (bytes.data() == buffer.data() + buffer.size() ? in_place : copied) += bytes.size();
    return inner.on_body(bytes);
  }
  Status end() override { return inner.end(); }

  std::pmr::monotonic_buffer_resource arena;  // the registered buffer, handed out once
  base::PaddedBuffer buffer;
  PresizedSink inner;
  std::size_t in_place = 0;
  std::size_t copied = 0;
};

// A client on its own ring with one string sink per connection, or, with fixed_buffer_bytes, one
// FixedSlot per connection: connect() registers one buffer of that size per connection (buffer k-1
// is connection k's), and every round copies the buffers' bodies into `bodies` for the checks.
class InflightRig {
 public:
  explicit InflightRig(const InflightOptions& options, const net::RingOptions& ring_options = {},
                       std::size_t fixed_buffer_bytes = 0)
      : ring(net::testing::make_ring(ring_options)), client(*ring, options), fixed_buffer_bytes_(fixed_buffer_bytes) {}

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
    if (fixed_buffer_bytes_ > 0) {
      // A ring has one registration at a time: the last connect()'s buffers go first.
      fixed_slots.clear();
      fixed.reset();
      auto registered = net::FixedBuffers::create(*ring, static_cast<unsigned>(connections), fixed_buffer_bytes_);
      REQUIRE_MESSAGE(registered, (registered ? "" : registered.error().message()));
      fixed = std::move(*registered);
      sinks.clear();
      for (std::size_t i = 0; i < connections; ++i) {
        const auto index = static_cast<unsigned>(i);
        fixed_slots.push_back(std::make_unique<FixedSlot>(fixed->buffer(index), static_cast<int>(index)));
        sinks.push_back(fixed_slots.back().get());
      }
    }
    bound_.assign(connections, -1);
    return client.connect(*url, connections);
  }

  Result<RoundInfo> round(std::string_view target = "/") {
    auto info = client.round(target, sinks);
    for (std::size_t i = 0; i < fixed_slots.size() && i < bodies.size(); ++i) {
      bodies[i].assign(fixed_slots[i]->buffer.view());
    }
    return info;
  }

  // FixedSlot mode: the body bytes received in place (by READ_FIXED), over every connection and round.
  [[nodiscard]] std::size_t received_in_place() const {
    std::size_t bytes = 0;
    for (const auto& slot : fixed_slots) bytes += slot->in_place;
    return bytes;
  }

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
  std::unique_ptr<net::FixedBuffers> fixed;            // FixedSlot mode: destroyed before the ring
  std::vector<std::unique_ptr<FixedSlot>> fixed_slots;  // over `fixed`'s buffers: destroyed before them

 private:
  std::size_t fixed_buffer_bytes_ = 0;
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
