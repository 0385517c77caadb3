#include "ringlab/net/ring.hpp"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <new>
#include <string_view>

#include "../support/allocation_counter.hpp"
#include "../support/net.hpp"
#include "ringlab/net/socket.hpp"
#include "ringlab/net/user_data.hpp"

using namespace ringlab::net;
using namespace ringlab::net::testing;
using namespace std::chrono_literals;

using ringlab::testing::allocations_on_this_thread;

namespace {

void prep_nop(Ring& ring, CompletionHandler& handler) {
  io_uring_sqe* sqe = ring.sqe();
  io_uring_prep_nop(sqe);
  Ring::set_handler(sqe, &handler);
}

bool kernel_at_least(int major, int minor) {
  utsname name{};
  REQUIRE(::uname(&name) == 0);
  int ma = 0, mi = 0;
  std::sscanf(name.release, "%d.%d", &ma, &mi);
  return ma > major || (ma == major && mi >= minor);
}

}  // namespace

TEST_CASE("Ring::create grants SINGLE_ISSUER and DEFER_TASKRUN where the kernel has them") {
  auto ring = make_ring();
  const RingFeatures& f = ring->features();
  CHECK(f.ext_arg);
  if (f.defer_taskrun) CHECK(f.single_issuer);  // the kernel's own rule
  if (kernel_at_least(6, 1)) {
    CHECK(f.single_issuer);
    CHECK(f.defer_taskrun);
  }
  if (kernel_at_least(6, 0)) {
    CHECK(f.recv_multishot);
    CHECK(f.send_zc);
  }
  if (kernel_at_least(6, 2)) CHECK(f.send_zc_report_usage);
  if (kernel_at_least(5, 19)) {
    CHECK(f.accept_multishot);
    CHECK(f.provided_buffer_ring);
  }
  CHECK(f.fixed_buffers);
  // The features newer than Debian 12's headers, each where its kernel release brought it.
  CHECK(f.recv_bundle == kernel_at_least(6, 10));
  CHECK(f.provided_buffer_ring_incremental == kernel_at_least(6, 12));
  CHECK(ring->stats().enters == 0);
}

TEST_CASE("Ring::create without single_issuer leaves SINGLE_ISSUER and DEFER_TASKRUN off") {
  auto ring = make_ring(RingOptions{.entries = 8, .single_issuer = false, .coop_taskrun = false});
  CHECK_FALSE(ring->features().single_issuer);
  CHECK_FALSE(ring->features().defer_taskrun);
  CHECK_FALSE(ring->features().coop_taskrun);
  // Still a working ring.
  Recorder nop;
  prep_nop(*ring, nop);
  REQUIRE(ring->run_until([&] { return nop.calls_ == 1; }));
  CHECK(nop.res_ == 0);
}

TEST_CASE("Ring::create reports what io_uring_queue_init refused") {
  auto ring = Ring::create(RingOptions{.entries = 1u << 20});  // above IORING_MAX_ENTRIES
  REQUIRE_FALSE(ring);
  CHECK(std::string_view(ring.error().op) == "io_uring_queue_init");
  CHECK(ring.error().code == EINVAL);
}

TEST_CASE("A nop round trip reaches its handler and is counted: one enter, one SQE, one CQE") {
  auto ring = make_ring();
  Recorder nop;
  prep_nop(*ring, nop);
  auto dispatched = ring->run_once();
  REQUIRE(dispatched);
  CHECK(*dispatched == 1);
  CHECK(nop.calls_ == 1);
  CHECK(nop.res_ == 0);
  CHECK(ring->stats().enters == 1);
  CHECK(ring->stats().sqes_submitted == 1);
  CHECK(ring->stats().cqes_reaped == 1);
}

TEST_CASE("Queued SQEs go to the kernel in one enter") {
  auto ring = make_ring();
  Recorder nops[3];
  for (Recorder& nop : nops) prep_nop(*ring, nop);
  REQUIRE(ring->run_until([&] { return nops[0].calls_ + nops[1].calls_ + nops[2].calls_ == 3; }));
  // Nops complete inline, so the first wait already finds all three CQEs.
  CHECK(ring->stats().enters == 1);
  CHECK(ring->stats().sqes_submitted == 3);
  CHECK(ring->stats().cqes_reaped == 3);
}

TEST_CASE("submit() with nothing queued makes no system call; run_once() with CQEs ready makes none") {
  auto ring = make_ring();
  REQUIRE(ring->submit());
  CHECK(ring->stats().enters == 0);

  Recorder nop;
  prep_nop(*ring, nop);
  REQUIRE(ring->submit());
  CHECK(ring->stats().enters == 1);
  CHECK(ring->stats().sqes_submitted == 1);
  CHECK(nop.calls_ == 0);  // submitted, not yet dispatched: only run_once() dispatches

  // The rule of ring.hpp: completions already in the CQ ring are dispatched without a system call;
  // otherwise (the kernel deferred the completion) one enter collects it.
  const bool already_posted = io_uring_cq_ready(ring->raw()) > 0;
  auto dispatched = ring->run_once();
  REQUIRE(dispatched);
  CHECK(*dispatched == 1);
  CHECK(nop.calls_ == 1);
  CHECK(ring->stats().enters == (already_posted ? 1u : 2u));
  CHECK(ring->stats().cqes_reaped == 1);
}

TEST_CASE("A full SQ is submitted before more SQEs are handed out") {
  auto ring = make_ring(RingOptions{.entries = 4});
  constexpr int kCount = 10;
  Recorder nops[kCount];
  for (Recorder& nop : nops) prep_nop(*ring, nop);
  CHECK(ring->stats().enters >= 2);  // 10 SQEs through a 4-entry SQ
  REQUIRE(ring->run_until([&] {
    int total = 0;
    for (const Recorder& nop : nops) total += nop.calls_;
    return total == kCount;
  }));
  for (const Recorder& nop : nops) CHECK(nop.calls_ == 1);
  CHECK(ring->stats().sqes_submitted == kCount);
  CHECK(ring->stats().cqes_reaped == kCount);
}

TEST_CASE("A timeout operation completes with -ETIME") {
  auto ring = make_ring();
  Recorder timeout;
  ring->prep_timeout(10ms, timeout);
  REQUIRE(ring->run_until([&] { return timeout.calls_ == 1; }));
  CHECK(timeout.res_ == -ETIME);
}

TEST_CASE("run_once with a timeout returns 0 when nothing completes") {
  auto ring = make_ring();
  auto dispatched = ring->run_once(5ms);
  REQUIRE_MESSAGE(dispatched, (dispatched ? "" : dispatched.error().message()));
  CHECK(*dispatched == 0);
  CHECK(ring->stats().enters == 1);
}

TEST_CASE("A linked timeout cancels a recv on a silent socket; its own CQE is reaped silently") {
  auto ring = make_ring();
  auto [a, b] = socket_pair();
  char byte = 0;
  Recorder recv;
  ring->prep_recv(a.get(), std::span<char>(&byte, 1), recv);
  ring->link_timeout(20ms);
  REQUIRE(ring->run_until([&] { return recv.calls_ == 1; }));
  CHECK(recv.res_ == -ECANCELED);
  CHECK(ring->stats().sqes_submitted == 2);
  // The timeout's CQE (-ETIME) has no handler; it may come in the same batch or the next.
  for (int i = 0; i < 10 && ring->stats().cqes_reaped < 2; ++i) REQUIRE(ring->run_once(100ms));
  CHECK(ring->stats().cqes_reaped == 2);
  CHECK(recv.calls_ == 1);
}

TEST_CASE("A linked timeout that does not fire leaves the operation's result alone") {
  auto ring = make_ring();
  auto [a, b] = socket_pair();
  REQUIRE(::write(b.get(), "hi", 2) == 2);
  char bytes[8];
  Recorder recv;
  ring->prep_recv(a.get(), bytes, recv);
  ring->link_timeout(5s);
  REQUIRE(ring->run_until([&] { return recv.calls_ == 1; }));
  CHECK(recv.res_ == 2);
  CHECK(std::string_view(bytes, 2) == "hi");
}

TEST_CASE("prep_cancel cancels an operation by its handler") {
  auto ring = make_ring();
  auto [a, b] = socket_pair();
  char byte = 0;
  Recorder recv, cancel;
  ring->prep_recv(a.get(), std::span<char>(&byte, 1), recv);
  REQUIRE(ring->submit());
  ring->prep_cancel(recv, &cancel);
  REQUIRE(ring->run_until([&] { return recv.calls_ == 1 && cancel.calls_ == 1; }));
  CHECK(recv.res_ == -ECANCELED);
  CHECK(cancel.res_ == 0);
}

TEST_CASE("prep_close closes through the ring, with or without a handler") {
  auto ring = make_ring();
  auto pair = socket_pair();
  const int fds[2] = {pair.a.release(), pair.b.release()};  // the ring closes them
  Recorder close;
  ring->prep_close(fds[0], &close);
  ring->prep_close(fds[1], nullptr);
  REQUIRE(ring->run_until([&] { return close.calls_ == 1; }));
  CHECK(close.res_ == 0);
  for (int i = 0; i < 10 && ring->stats().cqes_reaped < 2; ++i) REQUIRE(ring->run_once(100ms));
  CHECK(ring->stats().cqes_reaped == 2);
  CHECK(::fcntl(fds[0], F_GETFD) == -1);
  CHECK(::fcntl(fds[1], F_GETFD) == -1);
}

TEST_CASE("Multishot accept delivers each connection with F_MORE" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  auto ring = make_ring();
  if (!ringlab::testing::feature_available("accept_multishot", ring->features().accept_multishot, "the kernel has no multishot accept")) return;
  auto listener = testing::listen_loopback();
  class Acceptor final : public CompletionHandler {
   public:
    void on_completion(int res, uint32_t flags) override {
      if (res >= 0) accepted.emplace_back(res);
      more = (flags & IORING_CQE_F_MORE) != 0;
      last_res = res;
    }
    std::vector<Fd> accepted;
    bool more = false;
    int last_res = 0;
  } acceptor;
  acceptor.accepted.reserve(2);
  ring->prep_accept_multishot(listener.fd.get(), acceptor);
  REQUIRE(ring->submit());
  Fd c1(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)), c2(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(::connect(c1.get(), listener.endpoint.addr(), listener.endpoint.length) == 0);
  REQUIRE(::connect(c2.get(), listener.endpoint.addr(), listener.endpoint.length) == 0);
  for (int i = 0; i < 20 && acceptor.accepted.size() < 2; ++i) REQUIRE(ring->run_once(100ms));
  CHECK(acceptor.accepted.size() == 2);
  CHECK(acceptor.more);
  // Disarm before the handler goes out of scope.
  ring->prep_cancel(acceptor, nullptr);
  for (int i = 0; i < 20 && acceptor.more; ++i) REQUIRE(ring->run_once(100ms));
  CHECK_FALSE(acceptor.more);
  CHECK(acceptor.last_res == -ECANCELED);
}

TEST_CASE("Dispatching completions allocates nothing") {
  auto ring = make_ring();
  auto [a, b] = socket_pair();
  Recorder nops[16];
  Recorder recv, timeout;
  char bytes[4];
  // Warm-up outside the measured stretch: lazy set-up in libraries is not what is measured.
  prep_nop(*ring, nops[0]);
  REQUIRE(ring->run_until([&] { return nops[0].calls_ == 1; }));

  const std::size_t before = allocations_on_this_thread();
  for (Recorder& nop : nops) prep_nop(*ring, nop);
  ring->prep_timeout(1ms, timeout);
  REQUIRE(::write(b.get(), "abcd", 4) == 4);
  ring->prep_recv(a.get(), bytes, recv);
  ring->link_timeout(5s);
  auto done = ring->run_until([&] { return recv.calls_ == 1 && timeout.calls_ == 1 && nops[15].calls_ == 1; });
  const std::size_t after = allocations_on_this_thread();
  REQUIRE(done);
  CHECK(after - before == 0);
  CHECK(recv.res_ == 4);
}

TEST_CASE("user_data encodes a handler's address and decodes the ignored marker to null") {
  Recorder handler;
  CHECK(decode_user_data(encode_user_data(&handler)) == &handler);
  CHECK(encode_user_data(nullptr) == kIgnoredUserData);
  CHECK(decode_user_data(kIgnoredUserData) == nullptr);
}

TEST_CASE("link_timeout with nothing queued to link to is reported by the next run_once") {
  auto ring = make_ring();
  Recorder nop;
  prep_nop(*ring, nop);
  REQUIRE(ring->submit());  // the nop is gone to the kernel: nothing left to link to
  ring->link_timeout(1s);
  auto ran = ring->run_once(100ms);
  REQUIRE_FALSE(ran);
  CHECK(ran.error().code == EINVAL);
  CHECK(std::string_view(ran.error().op).find("link_timeout") == 0);
  // The error is reported once; the ring goes on.
  REQUIRE(ring->run_until([&] { return nop.calls_ == 1; }));
  CHECK(ring->stats().sqes_submitted == 1);
}
