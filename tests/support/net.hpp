#pragma once
// What the tests of net/ and above share: a ring that fails the test when it cannot be made, a
// completion handler that records what it got, connected loopback TCP pairs (one end a net::Stream,
// the other a plain blocking socket the test drives by hand or from a std::thread), byte patterns,
// and the feature probes of feature-gated cases (feature_gate.hpp).
//
// Every blocking socket gets SO_RCVTIMEO/SO_SNDTIMEO, so a peer thread cannot hang a failing test.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "feature_gate.hpp"
#include "ringlab/net/buffer_ring.hpp"
#include "ringlab/net/endpoint.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/net/socket.hpp"
#include "ringlab/net/stream.hpp"

namespace ringlab::net::testing {

inline constexpr auto kTestTimeout = std::chrono::seconds(5);

// A ring with `options`; fails the test (REQUIRE) with the error when it cannot be made.
inline std::unique_ptr<Ring> make_ring(const RingOptions& options = {}) {
  auto ring = Ring::create(options);
  REQUIRE_MESSAGE(ring, (ring ? "" : ring.error().message()));
  return std::move(*ring);
}

// Records the last completion it was given, and how many it got. Must outlive its operations.
class Recorder final : public CompletionHandler {
 public:
  void on_completion(int res, uint32_t flags) override {
    res_ = res;
    flags_ = flags;
    ++calls_;
    done_ = true;
  }
  int res_ = 0;
  uint32_t flags_ = 0;
  int calls_ = 0;
  bool done_ = false;
};

// Feature probes for feature-gated cases: true when the ring has what the case needs; otherwise the
// case is recorded as skipped and the caller returns.
inline bool has_provided_buffer_ring(const Ring& ring) {
  return ringlab::testing::feature_available("provided_buffer_ring", ring.features().provided_buffer_ring,
                                             "the kernel has no provided buffer rings");
}
inline bool has_recv_multishot(const Ring& ring) {
  return ringlab::testing::feature_available("recv_multishot", ring.features().recv_multishot,
                                             "the kernel has no multishot recv");
}
inline bool has_fixed_buffers(const Ring& ring) {
  return ringlab::testing::feature_available("fixed_buffers", ring.features().fixed_buffers,
                                             "the kernel has no registered buffers (IORING_OP_READ_FIXED)");
}
// Multishot recv into a provided buffer ring: what Stream::receive_provided needs.
inline bool has_provided_receive(const Ring& ring) { return has_recv_multishot(ring) && has_provided_buffer_ring(ring); }
// Receive bundles (IORING_RECVSEND_BUNDLE, Linux 6.10) on a provided buffer ring.
inline bool has_recv_bundles(const Ring& ring) {
  return has_provided_buffer_ring(ring) &&
         ringlab::testing::feature_available("recv_bundle", ring.features().recv_bundle,
                                             "the kernel has no bundle receives (IORING_RECVSEND_BUNDLE)");
}
// Incremental buffer rings (IOU_PBUF_RING_INC, Linux 6.12).
inline bool has_incremental_rings(const Ring& ring) {
  return has_provided_buffer_ring(ring) &&
         ringlab::testing::feature_available("provided_buffer_ring_incremental",
                                             ring.features().provided_buffer_ring_incremental,
                                             "the kernel has no incremental buffer rings (IOU_PBUF_RING_INC)");
}

// For the feature-gated cases over provided buffers: a ring with a BufferRing (`group`, `count` buffers
// of `size` bytes), or nullopt when `available` (one of the probes above) finds the kernel lacks what
// the case needs; the case is then recorded as skipped and returns.
struct RingWithBuffers {
  std::unique_ptr<Ring> ring;
  std::unique_ptr<BufferRing> buffers;  // declared after the ring: destroyed before it
};

inline std::optional<RingWithBuffers> ring_with_buffers(bool (*available)(const Ring&), uint16_t group,
                                                        unsigned count, unsigned size, bool incremental = false) {
  auto ring = make_ring();
  if (!available(*ring)) return std::nullopt;
  auto buffers = BufferRing::create(*ring, group, count, size, incremental);
  REQUIRE_MESSAGE(buffers, (buffers ? "" : buffers.error().message()));
  return RingWithBuffers{std::move(ring), std::move(*buffers)};
}

inline void bound_blocking_io(int fd) {
  timeval tv{.tv_sec = 5, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

struct Listener {
  Fd fd;
  Endpoint endpoint;
};

inline Listener listen_loopback(const char* host = "127.0.0.1") {
  auto where = Endpoint::parse(host, 0);
  REQUIRE(where);
  auto fd = listen_tcp(*where, ListenOptions{.backlog = 16, .reuse_port = false});
  REQUIRE_MESSAGE(fd, (fd ? "" : fd.error().message()));
  auto local = Endpoint::local_of(fd->get());
  REQUIRE(local);
  return Listener{std::move(*fd), *local};
}

// Blocking accept: the connection is already in the backlog once connect() completed.
inline Fd accept_one(const Listener& listener) {
  Fd fd(::accept4(listener.fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
  REQUIRE(fd.valid());
  bound_blocking_io(fd.get());
  return fd;
}

struct Pair {
  Stream client;
  Fd server;
};

inline Pair connected_pair(Ring& ring, const char* host = "127.0.0.1") {
  Listener listener = listen_loopback(host);
  auto stream = Stream::connect(ring, listener.endpoint, kTestTimeout);
  REQUIRE_MESSAGE(stream, (stream ? "" : stream.error().message()));
  Fd server = accept_one(listener);
  return Pair{std::move(*stream), std::move(server)};
}

// Two connected ends of an AF_UNIX stream socket pair: a peer for a ring operation, without a network.
struct SocketPair {
  Fd a;
  Fd b;
};

inline SocketPair socket_pair() {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  return SocketPair{Fd(fds[0]), Fd(fds[1])};
}

// Deterministic bytes that differ at every offset modulo a prime, so a shifted or repeated chunk
// does not compare equal.
inline std::vector<char> pattern(std::size_t size, unsigned seed = 0) {
  std::vector<char> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131 + seed) % 251);
  return bytes;
}

// Blocking helpers for the plain end; they return how many bytes they moved (short on error/EOF).
inline std::size_t write_all(int fd, const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::send(fd, data + done, size - done, MSG_NOSIGNAL);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

inline std::vector<char> read_exactly(int fd, std::size_t size) {
  std::vector<char> bytes(size);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::recv(fd, bytes.data() + done, size - done, 0);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

}  // namespace ringlab::net::testing
