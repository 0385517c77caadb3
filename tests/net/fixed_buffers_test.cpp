#include "ringlab/net/fixed_buffers.hpp"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/net/socket.hpp"
#include "../support/net.hpp"

using namespace ringlab::net;
using namespace ringlab::net::testing;
using ringlab::base::kPadding;

TEST_CASE("FixedBuffers registers count buffers of the asked size, each followed by padding") {
  auto ring = make_ring();
  auto buffers = FixedBuffers::create(*ring, 4, 1000);
  REQUIRE_MESSAGE(buffers, (buffers ? "" : buffers.error().message()));
  CHECK((*buffers)->count() == 4);
  CHECK((*buffers)->buffer_size() == 1000);
  for (unsigned i = 0; i < 4; ++i) {
    INFO("buffer ", i);
    auto bytes = (*buffers)->buffer(i);
    CHECK(bytes.size() == 1000);
    CHECK(reinterpret_cast<std::uintptr_t>(bytes.data()) % 64 == 0);
    // The padding is readable and zero; the next buffer starts after it.
    for (std::size_t p = 0; p < kPadding; ++p) REQUIRE(bytes.data()[bytes.size() + p] == 0);
    if (i > 0) CHECK(bytes.data() >= (*buffers)->buffer(i - 1).data() + 1000 + kPadding);
  }
  CHECK((*buffers)->buffer(4).empty());
}

TEST_CASE("FixedBuffers: a ring holds one registration at a time, and destruction releases it") {
  auto ring = make_ring();
  {
    auto first = FixedBuffers::create(*ring, 2, 4096);
    REQUIRE(first);
    auto second = FixedBuffers::create(*ring, 2, 4096);
    REQUIRE_FALSE(second);
    CHECK(second.error().code == EBUSY);
    CHECK(std::string_view(second.error().op) == "io_uring_register_buffers");
  }
  auto again = FixedBuffers::create(*ring, 2, 4096);
  CHECK_MESSAGE(again, (again ? "" : again.error().message()));
}

TEST_CASE("FixedBuffers refuses empty registrations") {
  auto ring = make_ring();
  auto none = FixedBuffers::create(*ring, 0, 4096);
  REQUIRE_FALSE(none);
  CHECK(none.error().code == EINVAL);
  auto empty = FixedBuffers::create(*ring, 1, 0);
  REQUIRE_FALSE(empty);
  CHECK(empty.error().code == EINVAL);
}

namespace {

// The result of a read_fixed into `target`, said to be in registered buffer `index`, of what the peer
// end of a socket pair wrote: `sent`.
int read_fixed_of(Ring& ring, std::span<char> target, int index, std::string_view sent) {
  auto [a, b] = socket_pair();
  REQUIRE(::write(b.get(), sent.data(), sent.size()) == static_cast<ssize_t>(sent.size()));
  Recorder recorder;
  ring.prep_read_fixed(a.get(), target, index, recorder);
  REQUIRE(ring.run_until([&] { return recorder.done_; }));
  return recorder.res_;
}

}  // namespace

TEST_CASE("A read_fixed from a socket lands inside the registered buffer") {
  auto ring = make_ring();
  auto buffers = FixedBuffers::create(*ring, 2, 4096);
  REQUIRE(buffers);
  const std::string_view message = "registered bytes";
  auto target = (*buffers)->buffer(1).subspan(100);
  REQUIRE(read_fixed_of(*ring, target, 1, message) == static_cast<int>(message.size()));
  CHECK(std::string_view(target.data(), message.size()) == message);
}

TEST_CASE("A read_fixed outside the registered buffer is refused by the kernel") {
  auto ring = make_ring();
  auto buffers = FixedBuffers::create(*ring, 1, 4096);
  REQUIRE(buffers);
  char elsewhere[64];
  CHECK(read_fixed_of(*ring, std::span<char>(elsewhere, sizeof(elsewhere)), 0, "x") == -EFAULT);
}
