// Stream::send_all_and_receive: a request and its reply in one io_uring_enter, and its errors.
#include "ringlab/net/stream.hpp"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../support/net.hpp"
#include "stream_fixtures.hpp"
#include "ringlab/net/buffer_ring.hpp"
#include "ringlab/net/fixed_buffers.hpp"

using namespace ringlab::net;
using namespace ringlab::net::testing;
using namespace std::chrono_literals;

namespace {

// A request of `parts` and a reply, over send_all_and_receive: what the server read, what the client
// received in its one receive, and the io_uring_enter calls the exchange took.
struct Exchanged {
  Result<std::size_t> received;
  std::string server_got;
  std::string reply;
  uint64_t enters = 0;
};

Exchanged exchange(Ring& ring, Pair& pair, std::span<const iovec> parts, std::string_view reply) {
  std::size_t request_bytes = 0;
  for (const iovec& part : parts) request_bytes += part.iov_len;
  Exchanged out{std::size_t{0}, {}, std::string(64 * 1024, '\0'), 0};
  std::thread server([&] {
    const std::vector<char> got = read_exactly(pair.server.get(), request_bytes);
    out.server_got.assign(got.data(), got.size());
    write_all(pair.server.get(), reply.data(), reply.size());
  });
  const uint64_t before = ring.stats().enters;
  out.received = pair.client.send_all_and_receive(parts, std::span<char>(out.reply), kTestTimeout);
  out.enters = ring.stats().enters - before;
  server.join();
  if (out.received) out.reply.resize(*out.received);
  return out;
}

}  // namespace

TEST_CASE("send_all_and_receive sends and receives in one io_uring_enter when the reply fits one receive") {
  auto ring = make_ring();
  Pair pair = connected_pair(*ring);
  std::string head = "GET / HTTP/1.1\r\n";
  std::string tail = "Host: x\r\n\r\n";
  const iovec parts[] = {{head.data(), head.size()}, {tail.data(), tail.size()}};
  for (int i = 0; i < 3; ++i) {
    INFO("exchange ", i);
    Exchanged done = exchange(*ring, pair, parts, "reply " + std::to_string(i));
    REQUIRE_MESSAGE(done.received, (done.received ? "" : done.received.error().message()));
    CHECK(done.server_got == head + tail);
    CHECK(done.reply == "reply " + std::to_string(i));
    // The first exchange may also reap what the connect left behind (its linked timeout's CQE).
    if (i > 0) CHECK(done.enters == 1);
  }
}

TEST_CASE("send_all_and_receive continues a short send while the receive waits behind it") {
  auto ring = make_ring();
  Pair pair = connected_pair(*ring);
  // 16 MiB in 20 parts: far more than the socket buffer takes at once, so the first sendmsg is short.
  const ManyParts request =
      many_parts([](unsigned i) -> std::size_t { return i % 5 == 0 ? 0 : (i % 2 == 0 ? 2u << 20 : 100 + i); });
  Exchanged done = exchange(*ring, pair, request.iovecs, "all of it");
  REQUIRE_MESSAGE(done.received, (done.received ? "" : done.received.error().message()));
  CHECK(done.server_got.size() == request.joined.size());
  CHECK(done.server_got == request.joined);
  CHECK(done.reply == "all of it");
  MESSAGE("16 MiB request and its reply took ", done.enters, " io_uring_enter calls");
}

TEST_CASE("send_all_and_receive: the kernel continues a short send of one batch itself, in the same enter") {
  auto ring = make_ring();
  Pair pair = connected_pair(*ring);
  // 16 MiB in two iovecs (one sendmsg): far more than the socket buffer takes at once.
  std::vector<char> head = pattern(100, 1);
  std::vector<char> body = pattern(16u << 20, 2);
  const iovec parts[] = {{head.data(), head.size()}, {body.data(), body.size()}};
  Exchanged warm = exchange(*ring, pair, std::span<const iovec>(parts, 1), "warm");  // what the connect left
  REQUIRE(warm.received);
  Exchanged done = exchange(*ring, pair, parts, "all of it");
  REQUIRE_MESSAGE(done.received, (done.received ? "" : done.received.error().message()));
  CHECK(done.server_got == std::string(head.data(), head.size()) + std::string(body.data(), body.size()));
  CHECK(done.reply == "all of it");
  CHECK(done.enters == 1);
}

TEST_CASE("send_all_and_receive: a peer that resets while a large request goes out is an error, not a hang") {
  auto ring = make_ring();
  Pair pair = connected_pair(*ring);
  const std::vector<char> body = pattern(16u << 20, 3);
  std::thread server([&] {
    (void)read_exactly(pair.server.get(), 64 * 1024);
    reset(pair.server);
  });
  char bytes[16];
  auto result = send_and_receive(pair.client, view(body), bytes, kTestTimeout);
  server.join();
  REQUIRE_FALSE(result);
  check_peer_gone(result.error());
}

TEST_CASE("send_all_and_receive to a reset peer is an error, not a hang") {
  auto ring = make_ring();
  Pair pair = connected_pair(*ring);
  reset(pair.server);
  char bytes[16];
  auto result = send_and_receive(pair.client, "ping", bytes, kTestTimeout);
  REQUIRE_FALSE(result);
  check_peer_gone(result.error());
}

TEST_CASE("send_all_and_receive into an empty buffer is EINVAL, and sends nothing") {
  auto ring = make_ring();
  Pair pair = connected_pair(*ring);
  auto result = send_and_receive(pair.client, "ping", std::span<char>(), kTestTimeout);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == EINVAL);
}
