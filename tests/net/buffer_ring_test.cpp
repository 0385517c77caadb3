#include "ringlab/net/buffer_ring.hpp"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <string_view>

#include "ringlab/net/ring.hpp"
#include "ringlab/net/socket.hpp"
#include "../support/net.hpp"

using namespace ringlab::net;
using namespace ringlab::net::testing;

TEST_CASE("BufferRing refuses counts the kernel would refuse") {
  auto ring = make_ring();
  for (unsigned count : {0u, 3u, 100u, 65536u}) {
    INFO("count ", count);
    auto buffers = BufferRing::create(*ring, 1, count, 1024);
    REQUIRE_FALSE(buffers);
    CHECK(buffers.error().code == EINVAL);
  }
  auto zero_size = BufferRing::create(*ring, 1, 8, 0);
  REQUIRE_FALSE(zero_size);
  CHECK(zero_size.error().code == EINVAL);
}

TEST_CASE("BufferRing buffers are distinct, full-sized and indexed by id" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  auto setup = ring_with_buffers(has_provided_buffer_ring, 7, 16, 512);
  if (!setup) return;
  auto& buffers = setup->buffers;
  CHECK(buffers->group_id() == 7);
  CHECK(buffers->count() == 16);
  CHECK(buffers->buffer_size() == 512);
  std::set<const char*> starts;
  for (uint16_t bid = 0; bid < 16; ++bid) {
    auto bytes = buffers->buffer(bid);
    CHECK(bytes.size() == 512);
    std::memset(bytes.data(), bid, bytes.size());  // every byte writable (ASan checks)
    starts.insert(bytes.data());
    if (bid > 0) CHECK(bytes.data() == buffers->buffer(static_cast<uint16_t>(bid - 1)).data() + 512);
  }
  CHECK(starts.size() == 16);
  CHECK(buffers->buffer(16).empty());
}

TEST_CASE("BufferRing::buffer_id decodes the id a CQE carries") {
  struct Row {
    uint32_t flags;
    uint16_t bid;
  };
  const Row rows[] = {{IORING_CQE_F_BUFFER, 0},
                      {IORING_CQE_F_BUFFER | IORING_CQE_F_MORE | (5u << IORING_CQE_BUFFER_SHIFT), 5},
                      {IORING_CQE_F_BUFFER | (32767u << IORING_CQE_BUFFER_SHIFT), 32767},
                      {IORING_CQE_F_BUFFER | (65535u << IORING_CQE_BUFFER_SHIFT), 65535}};
  for (const Row& row : rows) {
    INFO("flags ", row.flags);
    CHECK(BufferRing::buffer_id(row.flags) == row.bid);
  }
}

TEST_CASE("Two BufferRings cannot share a group id on one ring" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  auto ring = make_ring();
  if (!has_provided_buffer_ring(*ring)) return;
  auto first = BufferRing::create(*ring, 3, 4, 256);
  REQUIRE(first);
  auto second = BufferRing::create(*ring, 3, 4, 256);
  REQUIRE_FALSE(second);
  CHECK(second.error().code == EEXIST);
  auto other_group = BufferRing::create(*ring, 4, 4, 256);
  CHECK(other_group);
}

TEST_CASE("The kernel picks a BufferRing buffer for a recv and takes it back after recycle" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  auto setup = ring_with_buffers(has_provided_receive, 1, 2, 64);
  if (!setup) return;
  auto& [ring, buffers] = *setup;
  auto [a, b] = socket_pair();

  // Three single recvs with buffer selection on a ring of two: the third only works if recycle()
  // really gave a buffer back.
  std::set<uint16_t> seen;
  for (int round = 0; round < 3; ++round) {
    INFO("round ", round);
    const std::string message = "message " + std::to_string(round);
    REQUIRE(::write(b.get(), message.data(), message.size()) == static_cast<ssize_t>(message.size()));
    Recorder recorder;
    ring->prep_recv_select(a.get(), *buffers, recorder);
    REQUIRE(ring->run_until([&] { return recorder.calls_ > 0; }));
    REQUIRE(recorder.res_ == static_cast<int>(message.size()));
    REQUIRE((recorder.flags_ & IORING_CQE_F_BUFFER) != 0);
    CHECK((recorder.flags_ & IORING_CQE_F_MORE) == 0);  // one buffer per arm: the recv has ended
    const uint16_t bid = BufferRing::buffer_id(recorder.flags_);
    CHECK(bid < 2);
    seen.insert(bid);
    CHECK(std::string_view(buffers->buffer(bid).data(), message.size()) == message);
    buffers->recycle(bid);
  }
  CHECK(seen.size() == 2);
}

TEST_CASE("prep_recv_select takes one buffer of a larger message and leaves the rest in the socket" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  auto setup = ring_with_buffers(has_provided_receive, 2, 4, 64);
  if (!setup) return;
  auto& [ring, buffers] = *setup;
  auto [a, b] = socket_pair();
  std::string message(200, 'm');
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<char>('a' + i % 26);
  REQUIRE(::write(b.get(), message.data(), message.size()) == static_cast<ssize_t>(message.size()));

  // Each arm gives exactly one completion of at most one buffer; the bytes arrive in order.
  std::string received;
  while (received.size() < message.size()) {
    Recorder recorder;
    ring->prep_recv_select(a.get(), *buffers, recorder);
    REQUIRE(ring->run_until([&] { return recorder.calls_ > 0; }));
    REQUIRE(recorder.res_ > 0);
    CHECK(recorder.res_ <= 64);
    CHECK(recorder.calls_ == 1);
    CHECK((recorder.flags_ & IORING_CQE_F_MORE) == 0);
    const uint16_t bid = BufferRing::buffer_id(recorder.flags_);
    received.append(buffers->buffer(bid).data(), static_cast<std::size_t>(recorder.res_));
    buffers->recycle(bid);
  }
  CHECK(received == message);
}

TEST_CASE("prep_recv_select with poll_first waits for data, and takes data already there at once" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  auto setup = ring_with_buffers(has_provided_receive, 5, 2, 64);
  if (!setup) return;
  auto& [ring, buffers] = *setup;
  auto [a, b] = socket_pair();

  // An empty socket: the recv waits (no EAGAIN completion), then takes what arrives.
  Recorder waiting;
  ring->prep_recv_select(a.get(), *buffers, waiting, /*poll_first=*/true);
  REQUIRE(ring->run_once(std::chrono::milliseconds(50)));
  CHECK(waiting.calls_ == 0);
  const std::string later = "arrived later";
  REQUIRE(::write(b.get(), later.data(), later.size()) == static_cast<ssize_t>(later.size()));
  REQUIRE(ring->run_until([&] { return waiting.calls_ > 0; }));
  REQUIRE(waiting.res_ == static_cast<int>(later.size()));
  REQUIRE((waiting.flags_ & IORING_CQE_F_BUFFER) != 0);
  const uint16_t first = BufferRing::buffer_id(waiting.flags_);
  CHECK(std::string_view(buffers->buffer(first).data(), later.size()) == later);
  buffers->recycle(first);

  // The hint is only a hint: bytes already queued are received as without it.
  const std::string queued = "already queued";
  REQUIRE(::write(b.get(), queued.data(), queued.size()) == static_cast<ssize_t>(queued.size()));
  Recorder ready;
  ring->prep_recv_select(a.get(), *buffers, ready, /*poll_first=*/true);
  REQUIRE(ring->run_until([&] { return ready.calls_ > 0; }));
  REQUIRE(ready.res_ == static_cast<int>(queued.size()));
  const uint16_t second = BufferRing::buffer_id(ready.flags_);
  CHECK(std::string_view(buffers->buffer(second).data(), queued.size()) == queued);
  buffers->recycle(second);
}

// A bundle takes consecutive ring slots; after buffers went back in another order than they were taken,
// those slots hold other buffer ids than their index, and the bytes must still come out in order.
TEST_CASE("prep_recv_select with bundle: one completion of several buffers, walked in ring order after recycles "
          "out of order" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  auto setup = ring_with_buffers(has_provided_receive, 6, 8, 64);
  if (!setup) return;
  auto& [ring, buffers] = *setup;
  if (!has_recv_bundles(*ring)) return;
  auto [a, b] = socket_pair();
  std::string message(5 * 64 + 17, 'm');  // five full buffers and a part
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<char>('a' + i * 7 % 26);

  // Shuffle the ring: take three single buffers and give them back in reverse.
  const std::string small = "abc";
  uint16_t taken[3];
  for (uint16_t& bid : taken) {
    REQUIRE(::write(b.get(), small.data(), small.size()) == static_cast<ssize_t>(small.size()));
    Recorder one;
    ring->prep_recv_select(a.get(), *buffers, one);
    REQUIRE(ring->run_until([&] { return one.calls_ > 0; }));
    REQUIRE(one.res_ == 3);
    bid = BufferRing::buffer_id(one.flags_);
  }
  for (int i = 2; i >= 0; --i) buffers->recycle(taken[i]);

  // Twice round the ring of 8, so that the bundle's slots wrap and hold recycled ids.
  for (int pass = 0; pass < 2; ++pass) {
    INFO("pass ", pass);
    REQUIRE(::write(b.get(), message.data(), message.size()) == static_cast<ssize_t>(message.size()));
    std::string received;
    std::set<uint16_t> used;
    unsigned completions = 0;
    while (received.size() < message.size()) {
      Recorder bundle;
      ring->prep_recv_select(a.get(), *buffers, bundle, /*poll_first=*/false, /*bundle=*/true);
      REQUIRE(ring->run_until([&] { return bundle.calls_ > 0; }));
      REQUIRE(bundle.res_ > 0);
      REQUIRE((bundle.flags_ & IORING_CQE_F_BUFFER) != 0);
      ++completions;
      const unsigned pieces = buffers->take_pieces(BufferRing::buffer_id(bundle.flags_),
                                                   static_cast<std::size_t>(bundle.res_), [&](std::string_view piece) {
                                                     used.insert(static_cast<uint16_t>(
                                                         (piece.data() - buffers->buffer(0).data()) / 64));
                                                     received.append(piece);
                                                     return true;
                                                   });
      CHECK(pieces == (static_cast<unsigned>(bundle.res_) + 63) / 64);
    }
    CHECK(received == message);
    CHECK(used.size() == 6);  // six distinct buffers
    MESSAGE("pass ", pass, ": ", message.size(), " bytes in ", completions, " completion(s)");
    CHECK(completions < 6);  // at least one completion carried several buffers
  }
}

// What an incremental ring (IOU_PBUF_RING_INC) does when two connections share it: every receive continues
// in the one buffer at the ring's head where the last receive left it, whichever socket that was for, so
// two responses received at once lie interleaved in it. A body is contiguous there only while no other
// connection receives into the same ring: contiguity needs a ring per connection.
TEST_CASE("An incremental ring shared by two sockets interleaves their receives in one buffer" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  auto ring = make_ring();
  if (!has_incremental_rings(*ring)) return;
  auto buffers = BufferRing::create(*ring, 9, 1, 4096, /*incremental=*/true);
  REQUIRE_MESSAGE(buffers, (buffers ? "" : buffers.error().message()));
  auto [first, first_peer] = socket_pair();
  auto [second, second_peer] = socket_pair();
  constexpr uint32_t kBufferMore = 1U << 4;  // IORING_CQE_F_BUF_MORE (6.12), newer than liburing 2.3's header

  const struct {
    int socket;
    int peer;
    std::string_view bytes;
  } receives[] = {{first.get(), first_peer.get(), "first:1 "},
                  {second.get(), second_peer.get(), "second:1 "},
                  {first.get(), first_peer.get(), "first:2 "}};
  std::string expected;
  for (const auto& receive : receives) {
    INFO(receive.bytes);
    REQUIRE(::write(receive.peer, receive.bytes.data(), receive.bytes.size()) ==
            static_cast<ssize_t>(receive.bytes.size()));
    Recorder recorder;
    ring->prep_recv_select(receive.socket, **buffers, recorder);
    REQUIRE(ring->run_until([&] { return recorder.calls_ > 0; }));
    REQUIRE(recorder.res_ == static_cast<int>(receive.bytes.size()));
    REQUIRE((recorder.flags_ & IORING_CQE_F_BUFFER) != 0);
    CHECK(BufferRing::buffer_id(recorder.flags_) == 0);  // the one buffer, every time
    CHECK((recorder.flags_ & kBufferMore) != 0);         // still room in it: the kernel keeps it
    expected += receive.bytes;
  }
  // The first socket's two pieces are not adjacent: the second socket's piece lies between them.
  CHECK(std::string_view((*buffers)->buffer(0).data(), expected.size()) == expected);
}

// take_increment on an incremental ring of two 16-byte buffers: each piece found where the kernel put it
// (after the last receive's bytes in that buffer), the buffer given back when a receive fills it (no
// IORING_CQE_F_BUF_MORE), and a zero-length completion (a peer's close) giving nothing back and moving
// nothing: the next receive continues where the last bytes ended.
TEST_CASE("take_increment: pieces where the kernel put them, a full buffer given back, a zero-length completion "
          "giving nothing back" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  auto setup = ring_with_buffers(has_incremental_rings, 10, 2, 16, /*incremental=*/true);
  if (!setup) return;
  auto& ring = setup->ring;
  BufferRing& buffers = *setup->buffers;
  CHECK(buffers.incremental());
  auto [first, first_peer] = socket_pair();
  auto [second, second_peer] = socket_pair();

  struct Piece {
    int res = 0;
    uint32_t flags = 0;
    const char* at = nullptr;
    std::string bytes;
  };
  const auto receive = [&](int socket) {
    Recorder recorder;
    ring->prep_recv_select(socket, buffers, recorder);
    REQUIRE(ring->run_until([&] { return recorder.calls_ > 0; }));
    Piece piece{recorder.res_, recorder.flags_, nullptr, {}};
    if (piece.res > 0) {
      REQUIRE((piece.flags & IORING_CQE_F_BUFFER) != 0);
      const bool taken = buffers.take_increment(BufferRing::buffer_id(piece.flags), static_cast<std::size_t>(piece.res),
                                                piece.flags, [&](std::span<char> bytes) {
                                                  piece.at = bytes.data();
                                                  piece.bytes.assign(bytes.data(), bytes.size());
                                                });
      REQUIRE(taken);
    } else {
      buffers.give_back(piece.res, piece.flags, false);
    }
    return piece;
  };
  const auto send = [](int peer, std::string_view bytes) {
    REQUIRE(::write(peer, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  };

  send(first_peer.get(), "abcdefgh");
  const Piece one = receive(first.get());
  REQUIRE(one.bytes == "abcdefgh");
  CHECK((one.flags & BufferRing::kBufferMore) != 0);  // 8 of 16 bytes left: the kernel keeps it
  const uint16_t kept = BufferRing::buffer_id(one.flags);
  CHECK(one.at == buffers.buffer(kept).data());

  send(first_peer.get(), "ijklmnopqrstuv");
  const Piece two = receive(first.get());  // what is left of the buffer: 8 bytes
  REQUIRE(two.bytes == "ijklmnop");
  CHECK(BufferRing::buffer_id(two.flags) == kept);
  CHECK((two.flags & BufferRing::kBufferMore) == 0);  // full: the kernel is done with it, given back
  CHECK(two.at == buffers.buffer(kept).data() + 8);

  const Piece three = receive(first.get());  // the rest, at the start of the other buffer
  REQUIRE(three.bytes == "qrstuv");
  const uint16_t other = BufferRing::buffer_id(three.flags);
  CHECK(other != kept);
  CHECK(three.at == buffers.buffer(other).data());

  REQUIRE(::shutdown(first_peer.get(), SHUT_WR) == 0);
  const Piece closed = receive(first.get());
  CHECK(closed.res == 0);

  send(second_peer.get(), "wxyz");
  const Piece four = receive(second.get());  // after "qrstuv": the close moved nothing
  REQUIRE(four.bytes == "wxyz");
  CHECK(BufferRing::buffer_id(four.flags) == other);
  CHECK(four.at == buffers.buffer(other).data() + 6);

  // A completion claiming more than is left of its buffer is refused, nothing taken; so is any on a ring
  // that is not incremental.
  bool called = false;
  CHECK_FALSE(buffers.take_increment(other, 16, 0, [&](std::span<char>) { called = true; }));
  auto plain = BufferRing::create(*ring, 11, 2, 16);
  REQUIRE(plain);
  CHECK_FALSE((*plain)->take_increment(0, 1, 0, [&](std::span<char>) { called = true; }));
  CHECK_FALSE(called);
}

// An incremental ring of two pages. Its buffers are mapped twice, back to back: the ring's last bytes are
// also the bytes right before its first, so a piece at the ring's start can be seen where it follows a
// piece that ended at the ring's end (view_after), and writes through either view are the same bytes;
// overlaps() wraps the same way. A held buffer stays out of the ring once the kernel is done with it: the
// receives that follow land in the other buffer only, until release() gives it back.
TEST_CASE("An incremental ring's second view puts its end right before its start; a held buffer waits for release" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  auto setup = ring_with_buffers(has_incremental_rings, 12, 2, 4096, /*incremental=*/true);
  if (!setup) return;
  auto& ring = setup->ring;
  BufferRing& buffers = *setup->buffers;
  SUBCASE("the second view") {
    const std::span<char> first = buffers.buffer(0);
    const std::span<char> last = buffers.buffer(1);
    REQUIRE(last.data() == first.data() + 4096);
    std::memcpy(last.data() + 4096 - 3, "end", 3);
    const std::span<char> piece(first.data(), 10);
    std::memcpy(piece.data(), "start", 5);

    const std::span<char> seen = buffers.view_after(piece, last.data() + 4096).piece;
    REQUIRE(seen.data() != piece.data());
    CHECK(seen.size() == piece.size());
    CHECK(std::string_view(seen.data() - 3, 8) == "endstart");  // one contiguous run across the ring's end
    seen[0] = 'S';
    CHECK(piece[0] == 'S');  // the same bytes
    volatile char after = seen[seen.size() + BufferRing::kReadableAfter - 1];  // readable past the view
    (void)after;
    // The next piece in the ring, after that one: seen in the second view too, right after it.
    const std::span<char> next(first.data() + 10, 5);
    CHECK(buffers.view_after(next, seen.data() + seen.size()).piece.data() == seen.data() + seen.size());
    // A piece given in the second view, after one that ended in the first: seen in the first.
    CHECK(buffers.view_after(std::span<char>(seen.data(), 4), first.data()).piece.data() == first.data());
    // Round again: after bytes that ended at the second view's end, the piece at the ring's start is seen at
    // the second view's start, and the bytes before it are to be read a ring's length back.
    const BufferRing::Seen twice = buffers.view_after(piece, first.data() + 2 * 8192);
    CHECK(twice.piece.data() == first.data() + 8192);
    CHECK(twice.moved_by == -8192);
    CHECK(std::string_view(first.data() + 2 * 8192 - 3 + twice.moved_by, 3) == "end");
    // A piece that starts where the last one ended is seen where it is; one that follows nothing, too.
    CHECK(buffers.view_after(piece, piece.data()).piece.data() == piece.data());
    CHECK(buffers.view_after(piece, last.data() + 100).piece.data() == piece.data());
    CHECK(buffers.view_after(piece, last.data() + 100).moved_by == 0);

    CHECK(buffers.overlaps(1, last.data() + 4090, 6));
    CHECK_FALSE(buffers.overlaps(0, last.data() + 4090, 6));
    CHECK(buffers.overlaps(0, last.data() + 4090, 7));      // one byte past the ring's end: the first buffer's
    CHECK(buffers.overlaps(1, seen.data() - 3, 3));         // through the second view
    CHECK_FALSE(buffers.overlaps(1, seen.data(), 4096));    // the whole first buffer, seen from the second view
    CHECK_FALSE(buffers.overlaps(0, first.data(), 0));
  }
  SUBCASE("a held buffer") {
    auto [socket, peer] = socket_pair();
    const std::string page(4096, 'p');
    // Receives one full buffer (the kernel done with it), holding it or not; returns its id.
    const auto receive_full = [&](bool hold) {
      REQUIRE(::write(peer.get(), page.data(), page.size()) == static_cast<ssize_t>(page.size()));
      Recorder recorder;
      ring->prep_recv_select(socket.get(), buffers, recorder);
      REQUIRE(ring->run_until([&] { return recorder.calls_ > 0; }));
      REQUIRE(recorder.res_ == 4096);
      CHECK((recorder.flags_ & BufferRing::kBufferMore) == 0);
      const uint16_t bid = BufferRing::buffer_id(recorder.flags_);
      REQUIRE(buffers.take_increment(bid, 4096, recorder.flags_, [&](std::span<char>) { return hold; }));
      return bid;
    };
    const uint16_t held = receive_full(true);
    CHECK(buffers.held() == 1);
    CHECK(buffers.held_out_of_ring() == 1);
    const uint16_t other = receive_full(false);
    CHECK(other != held);
    CHECK(receive_full(false) == other);  // the held one is not the kernel's
    CHECK(receive_full(false) == other);
    buffers.release(held);
    CHECK(buffers.held() == 0);
    CHECK(buffers.held_out_of_ring() == 0);
    buffers.release(held);  // not held: nothing
    CHECK(buffers.held() == 0);
    // Back in the ring, after the other one (the ring's order): the receive after next takes it.
    CHECK(receive_full(false) == other);
    CHECK(receive_full(false) == held);
  }
}
