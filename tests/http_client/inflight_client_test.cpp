// InflightClient over real loopback sockets: N connections on one ring, each response into its own
// sink, in both receive modes; the limits and what the stats count. The failures are in
// inflight_client_errors_test.cpp.
#include "ringlab/http/inflight_client.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../support/allocation_counter.hpp"
#include "ringlab/net/buffer_ring.hpp"
#include "../support/feature_gate.hpp"
#include "inflight_support.hpp"

using namespace ringlab;
using namespace ringlab::http;
using namespace ringlab::http::testing;
using ringlab::testing::allocations_on_this_thread;

namespace {

// Bodies from a few bytes to several receive windows, different for every connection.
std::size_t mixed_size(int connection) { return 10 + static_cast<std::size_t>(connection) * 3001 % 70000; }

// Rounds over 1, 4 and 64 connections: every body byte for byte, the requests as sent, the counts.
// With fixed_buffer_bytes, each connection's sink lies in a registered buffer of that size (the rig's
// FixedSlot mode).
void every_body_arrives(const InflightOptions& options, std::size_t fixed_buffer_bytes = 0) {
  for (std::size_t n : {std::size_t{1}, std::size_t{4}, std::size_t{64}}) {
    INFO(n, " connections");
    TestServer server(numbered_server(numbered_answers(mixed_size)));
    InflightRig rig(options, {}, fixed_buffer_bytes);
    const auto connected = rig.connect(server, n);
    REQUIRE_MESSAGE(connected, (connected ? "" : connected.error().message()));
    CHECK(rig.client.connections() == n);
    CHECK(rig.client.open_connections() == n);
    constexpr int kRounds = 4;
    for (int round = 0; round < kRounds; ++round) {
      // Round 2 asks for another target: the request is serialized again, then kept again.
      const RoundInfo info = rig.checked_round(round, mixed_size, round == 2 ? "/other" : "/weather?count=10");
      CHECK(info.reopened == 0);
      CHECK(info.retired == 0);
      CHECK(info.ring.sqes_submitted >= 2 * n);  // a send and a receive at least, per connection
    }
    const InflightStats& stats = rig.client.stats();
    CHECK(stats.rounds == kRounds);
    CHECK(stats.connections_opened == n);
    CHECK(stats.connections_closed == 0);
    CHECK(server.accepted() == static_cast<int>(n));
    // The ring is this client's alone: what the client counted is all it did.
    CHECK(stats.ring.enters == rig.ring->stats().enters);
    CHECK(stats.ring.sqes_submitted == rig.ring->stats().sqes_submitted);
    CHECK(stats.ring.cqes_reaped == rig.ring->stats().cqes_reaped);
    MESSAGE(n, " connections: ", static_cast<double>(stats.ring.enters) / kRounds, " io_uring_enter per round (connect included)");
    const auto requests = server.requests();
    REQUIRE(requests.size() == n * kRounds);
    std::size_t other = 0;
    for (const std::string& request : requests) {
      const bool is_other = request.find("GET /other HTTP/1.1\r\n") == 0;
      other += is_other ? 1 : 0;
      CHECK((is_other || request.find("GET /weather?count=10 HTTP/1.1\r\n") == 0));
      CHECK(request.find("\r\nHost: 127.0.0.1:" + std::to_string(server.port()) + "\r\n") != std::string::npos);
    }
    CHECK(other == n);
    if (fixed_buffer_bytes > 0) {
      // A body longer than the head's receive buffer cannot come whole with the head: the rest was
      // received in place, by READ_FIXED (at 64 connections some bodies are). The registered buffers
      // are the caller's, not the client's receive memory.
      std::size_t long_bodies = 0;
      for (const auto& slot : rig.fixed_slots) {
        // Each connection's body has the same size at every round.
        CHECK(slot->in_place + slot->copied == static_cast<std::size_t>(kRounds) * slot->buffer.size());
        if (slot->buffer.size() > options.receive_buffer_bytes) {
          ++long_bodies;
          CHECK(slot->in_place > 0);
        }
      }
      if (n == 64) CHECK(long_bodies > 0);
      CHECK(rig.client.receive_memory_bytes() == n * options.receive_buffer_bytes);
    }
  }
}

// The page of entries a provided-buffer ring's kernel side reads its buffers from (receive_memory_bytes
// counts it): one page for up to 256 buffers.
constexpr std::size_t kEntriesPage = 4096;

InflightOptions provided(unsigned count, unsigned bytes, ReceiveMode mode = ReceiveMode::provided_buffers) {
  InflightOptions options = inflight_options(mode);
  options.provided_buffer_count = count;
  options.provided_buffer_bytes = bytes;
  return options;
}

// Whether the kernel has what `probe` (tests/support/net.hpp) checks; a case recorded as skipped otherwise.
bool kernel_has(bool (*probe)(const net::Ring&)) { return probe(*net::testing::make_ring()); }

// A small response written in two pieces, cut one byte later at every round, on two connections.
// With fixed_buffer_bytes, into registered buffers: a cut past the head sends the rest by READ_FIXED.
void split_at_every_byte(const InflightOptions& options, std::size_t fixed_buffer_bytes = 0) {
  const SizeFor size_for = [](int) { return std::size_t{40}; };
  const std::string sample = with_length(numbered_body(0, 0, size_for(0)));
  // numbered_server's numbering, each answer cut in two.
  auto next = std::make_shared<std::atomic<int>>(0);
  TestServer splitting([&, next](ServerConnection& c, TestServer&) {
    const int connection = (*next)++;
    for (int round = 0;; ++round) {
      if (!c.read_request()) return;
      const std::string response = with_length(numbered_body(connection, round, size_for(connection)));
      const std::size_t cut = 1 + static_cast<std::size_t>(round) % (response.size() - 1);
      c.write(std::string_view(response).substr(0, cut));
      std::this_thread::sleep_for(1ms);  // most often two receives
      if (!c.write(std::string_view(response).substr(cut))) return;
    }
  });
  InflightRig rig(options, {}, fixed_buffer_bytes);
  REQUIRE(rig.connect(splitting, 2));
  const int rounds = static_cast<int>(sample.size()) - 1;
  for (int round = 0; round < rounds; ++round) rig.checked_round(round, size_for);
  CHECK(rig.client.stats().connections_opened == 2);
  if (fixed_buffer_bytes > 0) CHECK(rig.received_in_place() > 0);
}

// After warm-up rounds, a round allocates nothing: presized sinks, the request serialized once.
void steady_rounds_allocate_nothing(const InflightOptions& options) {
  const std::string body = numbered_body(0, 0, 100 * 1024);
  TestServer server(respond_with(with_length(body)));
  InflightRig rig(options);
  constexpr std::size_t kConnections = 8;
  REQUIRE(rig.connect(server, kConnections));
  std::vector<base::PaddedBuffer> buffers(kConnections);
  std::vector<PresizedSink> presized;
  presized.reserve(kConnections);
  std::vector<BodySink*> sinks;
  for (auto& buffer : buffers) sinks.push_back(&presized.emplace_back(buffer));
  for (int warm = 0; warm < 2; ++warm) REQUIRE(rig.client.round("/x", sinks));
  const std::size_t before = allocations_on_this_thread();
  auto info = rig.client.round("/x", sinks);
  const std::size_t allocated = allocations_on_this_thread() - before;
  REQUIRE_MESSAGE(info, (info ? "" : info.error().message()));
  CHECK(allocated == 0);
  for (auto& buffer : buffers) CHECK(buffer.view() == body);
}

// Eight connections whose bodies (128 KiB) are 32 buffers long, on the few buffers of `options`' shared
// ring: three rounds, every body byte for byte. The client's stats after them.
InflightStats eight_bodies_on_a_small_ring(const InflightOptions& options) {
  const SizeFor size_for = [](int connection) {
    return std::size_t{128 * 1024} + static_cast<std::size_t>(connection);
  };
  TestServer server(numbered_server(numbered_answers(size_for)));
  InflightRig rig(options);
  REQUIRE(rig.connect(server, 8));
  for (int round = 0; round < 3; ++round) rig.checked_round(round, size_for);
  CHECK(rig.client.stats().connections_opened == 8);
  const std::size_t ring_bytes = std::size_t{options.provided_buffer_count} * options.provided_buffer_bytes;
  CHECK(rig.client.receive_memory_bytes() == ring_bytes + kEntriesPage);
  return rig.client.stats();
}

}  // namespace

TEST_CASE("own_buffer: every connection's body arrives byte for byte, at 1, 4 and 64 connections") {
  InflightOptions options = inflight_options();
  options.receive_buffer_bytes = 16 * 1024;  // most bodies need several receives
  every_body_arrives(options);
}

TEST_CASE("provided_buffers: every connection's body arrives byte for byte, at 1, 4 and 64 connections" *
          doctest::test_suite(kFeatureGated)) {
  if (!has_provided_buffer_ring(*net::testing::make_ring())) return;
  every_body_arrives(provided(64, 16 * 1024));
}

TEST_CASE("provided_bundles: every connection's body arrives byte for byte, at 1, 4 and 64 connections; "
          "completions carry several buffers" *
          doctest::test_suite(kFeatureGated)) {
  if (!kernel_has(net::testing::has_recv_bundles)) return;
  every_body_arrives(provided(64, 4096, ReceiveMode::provided_bundles));
  // Bodies of 200 KB in 4 KiB buffers: completions of several of them, walked in ring order.
  const SizeFor size_for = [](int connection) { return std::size_t{200'000} + static_cast<std::size_t>(connection); };
  TestServer server(numbered_server(numbered_answers(size_for)));
  InflightRig rig(provided(64, 4096, ReceiveMode::provided_bundles));
  REQUIRE(rig.connect(server, 4));
  for (int round = 0; round < 3; ++round) rig.checked_round(round, size_for);
  MESSAGE(rig.client.stats().multi_buffer_receives, " completions of several buffers over 3 rounds of 4 x 200 KB");
  CHECK(rig.client.stats().multi_buffer_receives > 0);
  CHECK(rig.client.receive_memory_bytes() == 64 * 4096 + kEntriesPage);
}

TEST_CASE("provided_incremental: every connection's body arrives byte for byte, at 1, 4 and 64 connections" *
          doctest::test_suite(kFeatureGated)) {
  if (!kernel_has(net::testing::has_incremental_rings)) return;
  every_body_arrives(provided(64, 16 * 1024, ReceiveMode::provided_incremental));
  every_body_arrives(provided(4, 4096, ReceiveMode::provided_incremental));  // buffers given back and reused
}

TEST_CASE("provided_incremental: the pieces of concurrent bodies lie in the shared ring, writable and readable "
          "past their end, and every body arrives" *
          doctest::test_suite(kFeatureGated)) {
  if (!kernel_has(net::testing::has_incremental_rings)) return;
  const std::string body = numbered_body(0, 0, 200'000);
  TestServer server(respond_with(with_length(body)));
  constexpr unsigned kBuffers = 8;
  constexpr unsigned kBufferBytes = 64 * 1024;
  InflightRig rig(provided(kBuffers, kBufferBytes, ReceiveMode::provided_incremental));
  constexpr std::size_t kConnections = 4;
  REQUIRE(rig.connect(server, kConnections));

  // Keeps the body by copying each piece, after writing over the piece and putting it back (what a sink
  // that lends a parser brackets does) and reading the last byte the ring promises readable after it
  // (the sanitizers see a read outside the ring's memory).
  struct Spy final : BodySink {
    Status begin(const ResponseHead&) override {
      kept.clear();
      return {};
    }
    Status on_body(std::string_view bytes) override {
      char* piece = const_cast<char*>(bytes.data());  // NOLINT: the mode's contract, tested here
      for (std::size_t i = 0; i < bytes.size(); ++i) piece[i] = static_cast<char>(~piece[i]);
      for (std::size_t i = 0; i < bytes.size(); ++i) piece[i] = static_cast<char>(~piece[i]);
      const volatile char* after = piece + bytes.size();  // volatile: the read happens
      folded_after ^= after[net::BufferRing::kReadableAfter - 1];
      kept.append(bytes);
      ++pieces;
      return {};
    }
    Status end() override { return {}; }
    std::string kept;
    std::size_t pieces = 0;
    char folded_after = 0;
  };
  std::vector<Spy> spies(kConnections);
  std::vector<BodySink*> sinks;
  for (auto& spy : spies) sinks.push_back(&spy);
  for (int round = 0; round < 3; ++round) {
    auto info = rig.client.round("/x", sinks);
    REQUIRE_MESSAGE(info, (info ? "" : info.error().message()));
    for (std::size_t i = 0; i < kConnections; ++i) {
      INFO("round ", round, ", connection ", i + 1, ": ", spies[i].pieces, " pieces");
      CHECK(spies[i].kept == body);
      // 200,000 bytes cannot come in fewer pieces than 64 KiB buffers hold.
      CHECK(spies[i].pieces >= (body.size() + kBufferBytes - 1) / kBufferBytes);
    }
  }
  CHECK(rig.client.receive_memory_bytes() == kBuffers * kBufferBytes + kEntriesPage);
}

// A sink that keeps each piece's last bytes in place (BodySink::kept_in_place), as the piece sink keeps a
// cut record: at each next piece it checks whether the piece begins right after them (counted), and that
// they are still there, unchanged, where it left them; let_go() counts and forgets them.
struct KeepingSpy final : BodySink {
  static constexpr std::size_t kKeep = 7;
  Status begin(const ResponseHead&) override {
    received.clear();
    keep = 0;
    return {};
  }
  Status on_body(std::string_view bytes) override {
    if (keep > 0) {
      ++(bytes.data() == last_end ? following : apart);
      if (std::string_view(last_end - keep, keep) != std::string_view(kept_copy, keep)) ++changed;
    }
    received.append(bytes);
    ++pieces;
    keep = std::min(kKeep, bytes.size());
    last_end = bytes.data() + bytes.size();
    std::memcpy(kept_copy, last_end - keep, keep);
    return {};
  }
  Status end() override {
    keep = 0;
    return {};
  }
  [[nodiscard]] std::size_t kept_in_place() const noexcept override { return keep; }
  void let_go() override {
    keep = 0;
    ++let_go_calls;
  }
  void kept_moved(std::ptrdiff_t by) override { last_end += by; }
  std::string received;
  std::size_t keep = 0;
  const char* last_end = nullptr;
  char kept_copy[kKeep] = {};
  std::size_t pieces = 0, following = 0, apart = 0, changed = 0, let_go_calls = 0;
};

// Three rounds of 200 KB bodies on `connections` connections through `options`: every body whole, and the
// spies' counts summed.
KeepingSpy keeping_rounds(const InflightOptions& options, std::size_t connections) {
  const std::string body = numbered_body(0, 0, 200'000);
  TestServer server(respond_with(with_length(body)));
  InflightRig rig(options);
  REQUIRE(rig.connect(server, connections));
  std::vector<KeepingSpy> spies(connections);
  std::vector<BodySink*> sinks;
  for (auto& spy : spies) sinks.push_back(&spy);
  KeepingSpy sum;
  for (int round = 0; round < 3; ++round) {
    auto info = rig.client.round("/x", sinks);
    REQUIRE_MESSAGE(info, (info ? "" : info.error().message()));
    for (auto& spy : spies) CHECK(spy.received == body);
  }
  for (const auto& spy : spies) {
    sum.pieces += spy.pieces;
    sum.following += spy.following;
    sum.apart += spy.apart;
    sum.changed += spy.changed;
    sum.let_go_calls += spy.let_go_calls;
  }
  return sum;
}

TEST_CASE("provided_incremental: a connection alone on its ring gets each piece right after the bytes its sink "
          "kept in place, across the ring's end; connections sharing one make their sinks let go" *
          doctest::test_suite(kFeatureGated)) {
  if (!kernel_has(net::testing::has_incremental_rings)) return;
  // One connection, a ring of 8 x 16 KiB: three 200 KB bodies go round it more than four times.
  const KeepingSpy alone = keeping_rounds(provided(8, 16 * 1024, ReceiveMode::provided_incremental), 1);
  INFO("alone: " << alone.pieces << " pieces, " << alone.following << " following, " << alone.apart << " apart");
  CHECK(alone.pieces >= 3 * 200'000 / (16 * 1024));
  CHECK(alone.following > 0);
  CHECK(alone.changed == 0);
  CHECK(alone.let_go_calls == 0);
  CHECK(alone.apart == 0);  // across the ring's end, however many times round

  // Four connections, each with a ring of its own (2 x 8 KiB): every piece after the first follows.
  InflightOptions own = provided(2, 8 * 1024, ReceiveMode::provided_incremental);
  own.ring_per_connection = true;
  const KeepingSpy owning = keeping_rounds(own, 4);
  INFO("own rings: " << owning.pieces << " pieces, " << owning.following << " following, " << owning.apart << " apart");
  CHECK(owning.pieces >= 4 * 3 * 200'000 / (8 * 1024));
  CHECK(owning.changed == 0);
  CHECK(owning.let_go_calls == 0);
  CHECK(owning.apart == 0);  // a body goes round its connection's 16 KiB ring a dozen times

  // Four connections on one ring: nothing kept past a piece.
  const KeepingSpy shared = keeping_rounds(provided(8, 16 * 1024, ReceiveMode::provided_incremental), 4);
  CHECK(shared.let_go_calls == shared.pieces - 4 * 3);  // all but each body's last piece, which ends it
  CHECK(shared.following + shared.apart == 0);
}

TEST_CASE("ring_per_connection: every body arrives byte for byte at 1, 4 and 64 connections, each with its ring" *
          doctest::test_suite(kFeatureGated)) {
  if (!kernel_has(net::testing::has_incremental_rings)) return;
  InflightOptions own = provided(2, 4096, ReceiveMode::provided_incremental);
  own.ring_per_connection = true;
  every_body_arrives(own);
  const std::string body = numbered_body(0, 0, 1000);
  TestServer server(respond_with(with_length(body)));
  InflightRig rig(own);
  REQUIRE(rig.connect(server, 16));
  CHECK(rig.client.receive_memory_bytes() == 16 * (2 * 4096 + kEntriesPage));
  // Only for incremental rings.
  InflightOptions wrong = provided(2, 4096, ReceiveMode::provided_buffers);
  wrong.ring_per_connection = true;
  InflightRig refused(wrong);
  const auto connected = refused.connect(server, 1);
  REQUIRE_FALSE(connected);
  CHECK(connected.error().code == Errc::io);
  CHECK(connected.error().message().find("ring_per_connection") != std::string::npos);
}

TEST_CASE("registered buffers: every body arrives by READ_FIXED into its connection's buffer, at 1, 4 and 64 "
          "connections" *
          doctest::test_suite(kFeatureGated)) {
  if (!has_fixed_buffers(*net::testing::make_ring())) return;
  InflightOptions options = inflight_options();
  options.receive_buffer_bytes = 16 * 1024;  // most bodies arrive mostly by READ_FIXED
  every_body_arrives(options, 72 * 1024);     // mixed_size's largest body, and its first line
}

TEST_CASE("own_buffer: a small response cut at every byte boundary, on two connections") {
  split_at_every_byte(inflight_options());
}

TEST_CASE("provided_buffers: a small response cut at every byte boundary, on two connections" *
          doctest::test_suite(kFeatureGated)) {
  if (!has_provided_buffer_ring(*net::testing::make_ring())) return;
  split_at_every_byte(provided(8, 4096));
}

TEST_CASE("provided_bundles: a small response cut at every byte boundary, on two connections" *
          doctest::test_suite(kFeatureGated)) {
  if (!kernel_has(net::testing::has_recv_bundles)) return;
  split_at_every_byte(provided(8, 16, ReceiveMode::provided_bundles));  // 16-byte buffers: bundles of several
}

TEST_CASE("provided_incremental: a small response cut at every byte boundary, on two connections" *
          doctest::test_suite(kFeatureGated)) {
  if (!kernel_has(net::testing::has_incremental_rings)) return;
  split_at_every_byte(provided(8, 4096, ReceiveMode::provided_incremental));
  split_at_every_byte(provided(2, 32, ReceiveMode::provided_incremental));  // buffers filled and given back often
}

TEST_CASE("registered buffers: a small response cut at every byte boundary, on two connections" *
          doctest::test_suite(kFeatureGated)) {
  if (!has_fixed_buffers(*net::testing::make_ring())) return;
  split_at_every_byte(inflight_options(), 4096);
  InflightOptions tiny = inflight_options();
  tiny.receive_buffer_bytes = 16;  // heads over many receives; nearly every body byte by READ_FIXED
  split_at_every_byte(tiny, 4096);
}

TEST_CASE("own_buffer: a round in steady state allocates nothing") { steady_rounds_allocate_nothing(inflight_options()); }

TEST_CASE("provided_buffers: a round in steady state allocates nothing" * doctest::test_suite(kFeatureGated)) {
  if (!has_provided_buffer_ring(*net::testing::make_ring())) return;
  steady_rounds_allocate_nothing(provided(16, 16 * 1024));
}

TEST_CASE("provided_bundles: a round in steady state allocates nothing" * doctest::test_suite(kFeatureGated)) {
  if (!kernel_has(net::testing::has_recv_bundles)) return;
  steady_rounds_allocate_nothing(provided(16, 4096, ReceiveMode::provided_bundles));
}

TEST_CASE("provided_incremental: a round in steady state allocates nothing" * doctest::test_suite(kFeatureGated)) {
  if (!kernel_has(net::testing::has_incremental_rings)) return;
  steady_rounds_allocate_nothing(provided(16, 16 * 1024, ReceiveMode::provided_incremental));
}

TEST_CASE("own_buffer: a PresizedSink receives its body in place, only the head's receive copied") {
  const std::string body = numbered_body(0, 0, 512 * 1024);
  TestServer server(respond_with(with_length(body)));
  InflightOptions options = inflight_options();
  options.receive_buffer_bytes = 8 * 1024;
  InflightRig rig(options);
  constexpr std::size_t kConnections = 4;
  REQUIRE(rig.connect(server, kConnections));

  // Counts the body bytes that arrived at the sink's write cursor (received there) and the others.
  struct Spy final : BodySink {
    explicit Spy(base::PaddedBuffer& b) : buffer(&b), inner(b) {}
    Status begin(const ResponseHead& head) override { return inner.begin(head); }
    ReceiveWindow receive_window() override { return inner.receive_window(); }
    Status on_body(std::string_view bytes) override {
      (bytes.data() == buffer->data() + buffer->size() ? in_place : copied) += bytes.size();
      return inner.on_body(bytes);
    }
    Status end() override { return inner.end(); }
    base::PaddedBuffer* buffer;
    PresizedSink inner;
    std::size_t in_place = 0;
    std::size_t copied = 0;
  };
  std::vector<base::PaddedBuffer> buffers(kConnections);
  std::vector<Spy> spies;
  spies.reserve(kConnections);
  std::vector<BodySink*> sinks;
  for (auto& buffer : buffers) sinks.push_back(&spies.emplace_back(buffer));
  REQUIRE(rig.client.round("/", sinks));
  for (std::size_t i = 0; i < kConnections; ++i) {
    INFO("connection ", i + 1, ": in place ", spies[i].in_place, ", copied ", spies[i].copied);
    CHECK(buffers[i].view() == body);
    CHECK(spies[i].copied <= options.receive_buffer_bytes);  // what shared the head's receive
    CHECK(spies[i].in_place + spies[i].copied == body.size());
  }
}

TEST_CASE("provided_buffers: a shared ring smaller than the connections runs dry, is counted, and every body arrives" *
          doctest::test_suite(kFeatureGated)) {
  if (!has_provided_buffer_ring(*net::testing::make_ring())) return;
  const InflightStats stats = eight_bodies_on_a_small_ring(provided(2, 4096));  // 2 buffers for 8 connections
  MESSAGE("the 2-buffer ring ran dry ", stats.provided_ring_dry, " times over 3 rounds of 8 x 128 KiB");
  CHECK(stats.provided_ring_dry > 0);
}

TEST_CASE("provided_bundles: a shared ring smaller than the connections runs dry, is counted, and every body arrives" *
          doctest::test_suite(kFeatureGated)) {
  if (!kernel_has(net::testing::has_recv_bundles)) return;
  const InflightStats stats = eight_bodies_on_a_small_ring(provided(4, 4096, ReceiveMode::provided_bundles));
  MESSAGE("the 4-buffer ring ran dry ", stats.provided_ring_dry, " times over 3 rounds of 8 x 128 KiB, ",
          stats.multi_buffer_receives, " completions of several buffers");
  CHECK(stats.provided_ring_dry > 0);
}

TEST_CASE("provided_incremental: a shared ring smaller than the connections runs dry or not, and every body arrives" *
          doctest::test_suite(kFeatureGated)) {
  if (!kernel_has(net::testing::has_incremental_rings)) return;
  const InflightStats stats = eight_bodies_on_a_small_ring(provided(2, 4096, ReceiveMode::provided_incremental));
  MESSAGE("the 2-buffer incremental ring ran dry ", stats.provided_ring_dry, " times over 3 rounds of 8 x 128 KiB");
}

TEST_CASE("A response with Connection: close, or close-delimited, retires its connection; the next round reopens it") {
  const SizeFor size_for = [](int) { return std::size_t{3000}; };
  const struct {
    const char* what;
    Answer answer;
  } rows[] = {
      {"Connection: close",
       [&](int k, int r) { return with_length(numbered_body(k, r, size_for(k)), "Connection: close\r\n"); }},
      {"close-delimited", [&](int k, int r) { return "HTTP/1.1 200 OK\r\n\r\n" + numbered_body(k, r, size_for(k)); }},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    // Each server connection answers once and closes; the client numbers rounds, the server its connections.
    auto next = std::make_shared<std::atomic<int>>(0);
    std::atomic<int> round_now{0};
    TestServer server([&, next](ServerConnection& c, TestServer&) {
      const int connection = (*next)++;
      if (!c.read_request()) return;
      c.write(row.answer(connection, round_now.load()));
      c.close();
    });
    InflightRig rig(inflight_options());
    constexpr std::size_t kConnections = 4;
    REQUIRE(rig.connect(server, kConnections));
    for (int round = 0; round < 3; ++round) {
      round_now = round;
      rig.forget_bindings();  // new connections every round
      const RoundInfo info = rig.checked_round(round, size_for);
      CHECK(info.retired == kConnections);
      CHECK(info.reopened == (round == 0 ? 0 : kConnections));
      CHECK(rig.client.open_connections() == 0);
    }
    const InflightStats& stats = rig.client.stats();
    CHECK(stats.connections_opened == 3 * kConnections);
    CHECK(stats.connections_reopened == 2 * kConnections);
    CHECK(stats.connections_closed == 3 * kConnections);
    CHECK(server.accepted() == static_cast<int>(3 * kConnections));
  }
}

TEST_CASE("A submission queue smaller than a round's operations: submitted in several enters, every body whole") {
  TestServer server(numbered_server(numbered_answers(mixed_size)));
  InflightRig rig(inflight_options(), net::RingOptions{.entries = 4});
  REQUIRE(rig.connect(server, 16));  // 16 connects, 32 sends and receives, into 4 SQ slots
  for (int round = 0; round < 3; ++round) {
    const RoundInfo info = rig.checked_round(round, mixed_size);
    CHECK(info.ring.enters >= 32 / 4);
  }
}

// ---- limits: each has a default, an option, and a case

TEST_CASE("max_connections: more connections than allowed, or none, are refused before any connect") {
  TestServer server(numbered_server(numbered_answers(mixed_size)));
  InflightOptions options = inflight_options();
  options.max_connections = 4;
  InflightRig rig(options);
  for (std::size_t n : {std::size_t{5}, std::size_t{0}}) {
    INFO(n, " connections");
    auto refused = rig.connect(server, n);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == Errc::io);
    CHECK(refused.error().detail.find("max_connections is 4") != std::string::npos);
    CHECK(rig.client.connections() == 0);
  }
  CHECK(rig.client.stats().connections_opened == 0);
  REQUIRE(rig.connect(server, 4));
  rig.checked_round(0, mixed_size);
  CHECK(server.accepted() == 4);
}

TEST_CASE("receive_buffer_bytes: 0 is refused; a tiny buffer still receives every head and body whole") {
  TestServer server(numbered_server(numbered_answers(mixed_size)));
  InflightOptions options = inflight_options();
  options.receive_buffer_bytes = 0;
  {
    InflightRig rig(options);
    auto refused = rig.connect(server, 2);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == Errc::io);
    CHECK(rig.client.stats().connections_opened == 0);
  }
  options.receive_buffer_bytes = 16;  // heads span many receives
  InflightRig rig(options);
  REQUIRE(rig.connect(server, 3));
  for (int round = 0; round < 2; ++round) rig.checked_round(round, mixed_size);
  CHECK(rig.client.receive_memory_bytes() == 3 * 16);
}

TEST_CASE("provided_buffer_count and provided_buffer_bytes: a count that is no power of two is refused; tiny buffers work" *
          doctest::test_suite(kFeatureGated)) {
  if (!has_provided_buffer_ring(*net::testing::make_ring())) return;
  TestServer server(numbered_server(numbered_answers(mixed_size)));
  {
    InflightRig rig(provided(3, 4096));
    auto refused = rig.connect(server, 2);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == Errc::io);
    CHECK(refused.error().detail.find("power of two") != std::string::npos);
  }
  InflightRig rig(provided(16, 64));  // heads span several buffers, detached between them
  REQUIRE(rig.connect(server, 3));
  for (int round = 0; round < 2; ++round) rig.checked_round(round, mixed_size);
  CHECK(rig.client.receive_memory_bytes() == 16 * 64 + kEntriesPage);
}
