// MappedRegion over real loopback TCP connections: a body sent from page-aligned memory with MSG_ZEROCOPY
// to a receiver whose TCP_MAXSEG is a page of payload maps whole pages, byte for byte the bytes sent; the
// tail comes by copy; a plain send maps nothing and the bytes arrive by copy after copy_from(); a second
// body of the same size reuses the layout (no mmap); the end of the stream after the peer's close is an
// answer, not an error; bad offsets and a region laid out for a closed
// socket give errors with the operation's name. Every wait is bounded (SO_RCVTIMEO, poll timeouts).
#include "ringlab/net/mapped_region.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <doctest/doctest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ringlab/net/socket.hpp"
#include "../support/feature_gate.hpp"

namespace ringlab::net {
namespace {

#ifndef SO_ZEROCOPY
constexpr int SO_ZEROCOPY = 60;
#endif
#ifndef MSG_ZEROCOPY
constexpr int MSG_ZEROCOPY = 0x4000000;
#endif

constexpr std::size_t kPage = 4096;
constexpr std::size_t kPadding = 64;

bool mapping_available() {
  const Status supported = MappedRegion::supported();
  return testing::feature_available("tcp_zerocopy_receive", supported.has_value(),
                                    supported ? "" : "kernel maps no TCP socket: " + supported.error().message());
}

// The receiver's buffer, fixed and larger than any body here (the kernel caps it at net.core.rmem_max, 208 KiB
// by default, and doubles it), so that the receive window never closes while a test reads: with the buffer
// autotuned from 128 KiB, a receiver slowed by the sanitizers let its queue fill, and a segment then ended
// mid-page (the sender filling what the window left, most likely), after which no page of the body was whole:
// one run of the file in 3 to 10 failed so; 40 of 40 pass with this buffer.
constexpr int kReceiveBuffer = 4 << 20;

// A connected pair on loopback: `receiver` with TCP_MAXSEG of a page of payload, `sender` accepted.
struct Pair {
  Fd sender;
  Fd receiver;
};

Pair connect_pair() {
  Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(listener.valid());
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  socklen_t length = sizeof(address);
  REQUIRE(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length) == 0);
  REQUIRE(::listen(listener.get(), 1) == 0);
  Pair pair{.sender = {}, .receiver = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0))};
  const int segment = static_cast<int>(kPage) + 12;
  const timeval deadline{.tv_sec = 5, .tv_usec = 0};
  REQUIRE(::setsockopt(pair.receiver.get(), IPPROTO_TCP, TCP_MAXSEG, &segment, sizeof(segment)) == 0);
  REQUIRE(::setsockopt(pair.receiver.get(), SOL_SOCKET, SO_RCVBUF, &kReceiveBuffer, sizeof(kReceiveBuffer)) == 0);
  REQUIRE(::setsockopt(pair.receiver.get(), SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof(deadline)) == 0);
  REQUIRE(::connect(pair.receiver.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  pair.sender = Fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  REQUIRE(pair.sender.valid());
  const int one = 1;
  REQUIRE(::setsockopt(pair.sender.get(), SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) == 0);
  REQUIRE(::setsockopt(pair.sender.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0);
  return pair;
}

// What the tests that receive stand on: a connected pair, and a region to receive into.
struct Connected {
  Pair pair = connect_pair();
  MappedRegion region;
};

// `bytes` bytes of a pattern that differs from page to page, at the start of a mapping of their own.
struct AlignedBody {
  explicit AlignedBody(std::size_t bytes) : size(bytes) {
    void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(at != MAP_FAILED);
    data = static_cast<char*>(at);
    for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<char>('a' + (i * 7 + i / kPage) % 26);
  }
  ~AlignedBody() { ::munmap(data, size); }
  AlignedBody(const AlignedBody&) = delete;
  AlignedBody& operator=(const AlignedBody&) = delete;
  char* data = nullptr;
  std::size_t size = 0;
};

// Sends every byte of `body` (zero-copy or not) from a thread of its own; joined by the destructor.
struct Sender {
  Sender(const Fd& socket, const AlignedBody& body, bool zero_copy)
      : thread([&socket, &body, zero_copy] {
          std::size_t sent = 0;
          while (sent < body.size) {
            const ssize_t n = ::send(socket.get(), body.data + sent, body.size - sent,
                                     MSG_NOSIGNAL | (zero_copy ? MSG_ZEROCOPY : 0));
            if (n < 0 && errno == ENOBUFS) continue;  // the notification queue is full: send again
            if (n <= 0) return;
            sent += static_cast<std::size_t>(n);
          }
        }) {}
  ~Sender() { thread.join(); }
  std::thread thread;
};

struct Received {
  std::size_t mapped = 0;
  std::size_t copied = 0;
};

// The next `bytes` bytes of `socket` into `region`, mapped where the kernel maps them, else copied (the rest
// of the body once a skip hint says the stream is not whole pages).
Received receive(MappedRegion& region, int socket, std::size_t bytes, std::size_t slots = 1) {
  Received got;
  REQUIRE(region.next_slot());
  REQUIRE(region.prepare(socket, bytes, kPadding, slots));
  std::size_t filled = 0;
  bool copying = false;
  int waits = 0;
  while (filled < bytes) {
    const std::size_t whole = (std::min(bytes, region.mappable_bytes()) - std::min(filled, region.mappable_bytes())) /
                              kPage * kPage;
    if (!copying && whole > 0) {
      auto mapped = region.map(filled, whole);
      REQUIRE(mapped.has_value());
      if (mapped->bytes > 0) {
        filled += mapped->bytes;
        got.mapped += mapped->bytes;
        continue;
      }
      if (mapped->queued >= kPage) {
        REQUIRE(region.copy_from(filled));
        copying = true;
        continue;
      }
      pollfd readable{.fd = socket, .events = POLLIN, .revents = 0};
      REQUIRE(::poll(&readable, 1, 5000) == 1);
      REQUIRE(++waits < 1'000'000);
      continue;
    }
    const ssize_t n = ::recv(socket, region.data() + filled, bytes - filled, 0);
    REQUIRE(n > 0);
    filled += static_cast<std::size_t>(n);
    got.copied += static_cast<std::size_t>(n);
  }
  return got;
}

// `body` sent (zero-copy or not) while `region` receives it; the sender is joined before this returns.
Received exchange(Pair& pair, const AlignedBody& body, bool zero_copy, MappedRegion& region, std::size_t slots = 1) {
  Sender sender(pair.sender, body, zero_copy);
  return receive(region, pair.receiver.get(), body.size, slots);
}

TEST_CASE_FIXTURE(Connected,
                  "a zero-copy send of page-aligned bytes maps whole pages, contiguous, the tail copied after them" *
                  doctest::test_suite(testing::kFeatureGated)) {
  if (!mapping_available()) return;
  for (std::size_t bytes : {std::size_t{256 * 1024 + 1000}, std::size_t{64 * 1024}, std::size_t{3 * kPage + 1}}) {
    INFO(bytes, " bytes");
    AlignedBody body(bytes);
    const Received got = exchange(pair, body, true, region);
    CHECK(std::memcmp(region.data(), body.data, bytes) == 0);
    CHECK(got.mapped + got.copied == bytes);
    CHECK(got.mapped % kPage == 0);
    // Every whole page maps: a zero-copy send of page-aligned memory to a page-sized segment.
    CHECK(got.mapped == bytes / kPage * kPage);
    // The padding after the body is readable (and the tail's anonymous page holds it).
    CHECK(region.laid_out_bytes() >= bytes + kPadding);
    volatile char past = region.data()[bytes + kPadding - 1];
    (void)past;
  }
}

TEST_CASE_FIXTURE(Connected, "a second body of the same size maps into the same layout, with no mmap" *
                  doctest::test_suite(testing::kFeatureGated)) {
  if (!mapping_available()) return;
  constexpr std::size_t kBytes = 40 * kPage + 123;
  AlignedBody first(kBytes);
  (void)exchange(pair, first, true, region);
  CHECK(std::memcmp(region.data(), first.data, kBytes) == 0);
  const uint64_t before = region.syscalls();
  AlignedBody second(kBytes);
  second.data[0] = '#';
  second.data[kBytes - 1] = '#';
  const Received got = exchange(pair, second, true, region);
  CHECK(std::memcmp(region.data(), second.data, kBytes) == 0);
  CHECK(got.mapped == 40 * kPage);
  // Only getsockopt calls: the layout was kept.
  CHECK(region.syscalls() - before >= 1);
  const uint64_t getsockopts_at_most = 40;  // at worst one page a call
  CHECK(region.syscalls() - before <= getsockopts_at_most);
}

TEST_CASE_FIXTURE(Connected, "with K slots, K bodies stay mapped side by side until the first slot comes round again" *
                  doctest::test_suite(testing::kFeatureGated)) {
  if (!mapping_available()) return;
  constexpr std::size_t kSlots = 3;
  constexpr std::size_t kBytes = 20 * kPage + 500;
  std::vector<std::unique_ptr<AlignedBody>> bodies;
  std::vector<const char*> where;
  for (std::size_t i = 0; i < kSlots; ++i) {
    bodies.push_back(std::make_unique<AlignedBody>(kBytes));
    bodies.back()->data[0] = static_cast<char>('0' + i);
    const Received got = exchange(pair, *bodies.back(), true, region, kSlots);
    CHECK(got.mapped == 20 * kPage);
    where.push_back(region.data());
  }
  CHECK(region.laid_out_bytes() >= kSlots * (kBytes + kPadding));
  // Every body is still where it landed, each in a slot of its own.
  for (std::size_t i = 0; i < kSlots; ++i) {
    INFO("slot ", i);
    CHECK(std::memcmp(where[i], bodies[i]->data, kBytes) == 0);
    if (i > 0) CHECK(where[i] == where[i - 1] + region.laid_out_bytes() / kSlots);
  }
  // The next body goes to the first slot again, after one madvise released all three.
  AlignedBody again(kBytes);
  again.data[0] = '#';
  const uint64_t before = region.syscalls();
  CHECK(exchange(pair, again, true, region, kSlots).mapped == 20 * kPage);
  CHECK(region.data() == where[0]);
  CHECK(std::memcmp(region.data(), again.data, kBytes) == 0);
  CHECK(region.syscalls() - before >= 2);  // the madvise and at least one getsockopt; no mmap
  CHECK(region.syscalls() - before <= 1 + 20);
}

TEST_CASE_FIXTURE(Connected, "a plain send maps nothing: the bytes arrive by copy after copy_from(), contiguous" *
                  doctest::test_suite(testing::kFeatureGated)) {
  if (!mapping_available()) return;
  constexpr std::size_t kBytes = 100 * kPage + 77;
  AlignedBody body(kBytes);
  const Received got = exchange(pair, body, false, region);
  CHECK(std::memcmp(region.data(), body.data, kBytes) == 0);
  CHECK(got.copied + got.mapped == kBytes);
  CHECK(got.copied > 0);
  // After copy_from() the next prepare() lays the socket part out again.
  CHECK(region.mappable_bytes() < kBytes / kPage * kPage);
  REQUIRE(region.prepare(pair.receiver.get(), kBytes, kPadding));
  CHECK(region.mappable_bytes() == kBytes / kPage * kPage);
}

TEST_CASE_FIXTURE(Connected,
                  "after the peer's close with nothing queued, map() answers that the stream ended, not an error" *
                  doctest::test_suite(testing::kFeatureGated)) {
  if (!mapping_available()) return;
  constexpr std::size_t kBytes = 8 * kPage + 10;
  AlignedBody body(2 * kPage);
  REQUIRE(region.prepare(pair.receiver.get(), kBytes, kPadding));
  {
    Sender sender(pair.sender, body, true);
  }
  REQUIRE(::shutdown(pair.sender.get(), SHUT_WR) == 0);
  pollfd closed{.fd = pair.receiver.get(), .events = POLLRDHUP, .revents = 0};
  REQUIRE(::poll(&closed, 1, 5000) == 1);
  // What was sent before the close still maps; then the end of the stream is an answer.
  std::size_t filled = 0;
  for (int call = 0; call < 8 && filled < 2 * kPage; ++call) {
    auto mapped = region.map(filled, region.mappable_bytes() - filled);
    REQUIRE(mapped.has_value());
    CHECK_FALSE(mapped->stream_ended);
    filled += mapped->bytes;
  }
  CHECK(filled == 2 * kPage);
  CHECK(std::memcmp(region.data(), body.data, 2 * kPage) == 0);
  auto ended = region.map(filled, region.mappable_bytes() - filled);
  REQUIRE(ended.has_value());
  CHECK(ended->stream_ended);
  CHECK(ended->bytes == 0);
  CHECK(ended->queued == 0);
}

TEST_CASE("map() on a socket that is not mapped, and prepare() on a descriptor that is not a TCP socket, fail "
          "with the operation named" * doctest::test_suite(testing::kFeatureGated)) {
  if (!mapping_available()) return;
  MappedRegion region;
  Fd not_tcp(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  auto refused = region.prepare(not_tcp.get(), 3 * kPage, kPadding);
  REQUIRE_FALSE(refused.has_value());
  CHECK(std::string(refused.error().op) == "mmap of the socket");
  // A small body needs no socket mapping at all: only the anonymous tail.
  REQUIRE(region.prepare(not_tcp.get(), 100, kPadding));
  CHECK(region.mappable_bytes() == 0);
  auto unmapped = region.map(0, kPage);
  REQUIRE_FALSE(unmapped.has_value());
  CHECK(std::string(unmapped.error().op) == "getsockopt TCP_ZEROCOPY_RECEIVE");
}

}  // namespace
}  // namespace ringlab::net
