#pragma once
// What the two files of Stream tests share: a reset peer, many-part requests, and the checks of a
// timed-out receive and a peer that is gone. Each test file includes it once.
#include <doctest/doctest.h>
#include <sys/socket.h>

#include <cerrno>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../support/net.hpp"
#include "ringlab/net/stream.hpp"

namespace ringlab::net::testing {


// Closes with an RST instead of a FIN.
inline void reset(Fd& fd) {
  linger option{.l_onoff = 1, .l_linger = 0};
  REQUIRE(::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &option, sizeof(option)) == 0);
  fd.reset();
}

inline std::string_view view(const std::vector<char>& bytes) { return {bytes.data(), bytes.size()}; }

// Twenty parts of pattern() bytes (part i seeded with i, `size_of(i)` bytes long), as iovecs, and
// all of them in order. The iovecs point into `parts`, whose buffers stay put when this is moved.
struct ManyParts {
  std::vector<std::vector<char>> parts;
  std::vector<iovec> iovecs;
  std::string joined;
};

template <class SizeOf>
inline ManyParts many_parts(SizeOf size_of) {
  ManyParts out;
  for (unsigned i = 0; i < 20; ++i) out.parts.push_back(pattern(size_of(i), i));
  for (auto& part : out.parts) {
    out.iovecs.push_back(iovec{part.data(), part.size()});
    out.joined.append(part.data(), part.size());
  }
  return out;
}

// send_all_and_receive of `request` as one iovec.
inline Result<std::size_t> send_and_receive(Stream& stream, std::string_view request, std::span<char> into,
                                     std::optional<Duration> timeout) {
  const iovec part{const_cast<char*>(request.data()), request.size()};
  return stream.send_all_and_receive(std::span<const iovec>(&part, 1), into, timeout);
}

// A receive on `pair`'s client ended with `error` at its deadline; the timed-out recv is gone: new
// bytes go to the next receive, not to the cancelled one.
inline void check_timed_out_and_usable(Pair& pair, const Error& error) {
  CHECK(error.code == ETIMEDOUT);
  CHECK(std::string_view(error.op) == "recv");
  REQUIRE(write_all(pair.server.get(), "late", 4) == 4);
  char bytes[16];
  auto next = pair.client.receive(bytes, kTestTimeout);
  REQUIRE(next);
  CHECK(std::string_view(bytes, *next) == "late");
}

// The peer is gone: EPIPE or ECONNRESET, whichever the kernel reports first.
inline void check_peer_gone(const Error& error) {
  INFO(error.message());
  CHECK((error.code == EPIPE || error.code == ECONNRESET));
}


}  // namespace ringlab::net::testing
