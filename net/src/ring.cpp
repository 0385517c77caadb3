#include "ringlab/net/ring.hpp"

#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

#include "ringlab/net/buffer_ring.hpp"
#include "ringlab/net/user_data.hpp"

// liburing 2.3 ships a uapi header older than the kernels it runs on; these are stable kernel ABI
// values (include/uapi/linux/io_uring.h, 6.2).
#ifndef IORING_SEND_ZC_REPORT_USAGE
#define IORING_SEND_ZC_REPORT_USAGE (1U << 3)
#endif
// 6.10
#ifndef IORING_FEAT_RECVSEND_BUNDLE
#define IORING_FEAT_RECVSEND_BUNDLE (1U << 14)
#endif
#ifndef IORING_RECVSEND_BUNDLE
#define IORING_RECVSEND_BUNDLE (1U << 4)
#endif

namespace ringlab::net {
namespace {

struct KernelVersion {
  int major = 0;
  int minor = 0;
};

// Features the opcode probe cannot show (flags of an opcode) are known by the kernel release that
// brought them. uname() is read once per Ring, at set-up.
KernelVersion running_kernel() {
  utsname name{};
  if (::uname(&name) != 0) return {};
  std::string_view release(name.release);
  KernelVersion version;
  const char* end = release.data() + release.size();
  auto [after_major, e1] = std::from_chars(release.data(), end, version.major);
  if (e1 != std::errc{} || after_major == end || *after_major != '.') return {};
  std::from_chars(after_major + 1, end, version.minor);
  return version;
}

bool at_least(KernelVersion v, int major, int minor) {
  return v.major > major || (v.major == major && v.minor >= minor);
}

__kernel_timespec to_timespec(Duration d) {
  if (d < Duration::zero()) d = Duration::zero();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(d);
  return __kernel_timespec{.tv_sec = seconds.count(), .tv_nsec = (d - seconds).count()};
}

}  // namespace

Result<std::unique_ptr<Ring>> Ring::create(const RingOptions& options) {
  std::unique_ptr<Ring> ring(new Ring());

  // Most wanted first; each EINVAL drops the flag the oldest kernels lack. DEFER_TASKRUN (6.1)
  // requires SINGLE_ISSUER (6.0), so it goes first; SUBMIT_ALL (5.18) keeps one bad SQE from
  // stranding the ones queued behind it.
  unsigned flags = IORING_SETUP_SUBMIT_ALL;
  if (options.coop_taskrun) flags |= IORING_SETUP_COOP_TASKRUN;
  if (options.single_issuer) flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  const unsigned drop_order[] = {IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_SINGLE_ISSUER,
                                 IORING_SETUP_COOP_TASKRUN, IORING_SETUP_SUBMIT_ALL};
  int rc = 0;
  for (unsigned step = 0;; ++step) {
    io_uring_params params{};
    params.flags = flags;
    rc = io_uring_queue_init_params(options.entries, &ring->ring_, &params);
    while (step < std::size(drop_order) && (flags & drop_order[step]) == 0) ++step;
    if (rc != -EINVAL || step == std::size(drop_order)) break;
    flags &= ~drop_order[step];
  }
  if (rc < 0) return fail("io_uring_queue_init", -rc);
  ring->initialized_ = true;

  // From here on the destructor tears the ring down.
  RingFeatures& f = ring->features_;
  f.single_issuer = (flags & IORING_SETUP_SINGLE_ISSUER) != 0;
  f.defer_taskrun = (flags & IORING_SETUP_DEFER_TASKRUN) != 0;
  f.coop_taskrun = (flags & IORING_SETUP_COOP_TASKRUN) != 0;
  f.ext_arg = (ring->ring_.features & IORING_FEAT_EXT_ARG) != 0;

  if (io_uring_probe* probe = io_uring_get_probe_ring(&ring->ring_)) {
    f.send_zc = io_uring_opcode_supported(probe, IORING_OP_SEND_ZC) != 0;
    f.fixed_buffers = io_uring_opcode_supported(probe, IORING_OP_READ_FIXED) != 0;
    io_uring_free_probe(probe);
  }
  const KernelVersion kernel = running_kernel();
  f.send_zc_report_usage = f.send_zc && at_least(kernel, 6, 2);
  f.recv_multishot = at_least(kernel, 6, 0);
  f.accept_multishot = at_least(kernel, 5, 19);
  f.provided_buffer_ring = at_least(kernel, 5, 19);
  f.recv_bundle = (ring->ring_.features & IORING_FEAT_RECVSEND_BUNDLE) != 0;
  // The kernel does not change under a process: probed with the first ring, not at every set-up (a fresh
  // client makes a ring per op).
  // A one-buffer ring registered with the flag under a group id no caller uses, then dropped: an older kernel
  // refuses the flag.
  constexpr uint16_t kProbeGroup = 0xffff;
  static const bool incremental =
      f.provided_buffer_ring && BufferRing::create(*ring, kProbeGroup, 1, 64, /*incremental=*/true).has_value();
  f.provided_buffer_ring_incremental = incremental;

  // The SQ index array maps ring slot i to SQE i for good: then publishing the tail is all a submit
  // has to do, whatever the liburing release does at init. A ring set up without one (a liburing
  // newer than net/CMakeLists.txt allows) cannot be driven this way: see ring.hpp.
  if (ring->ring_.sq.array == nullptr) return fail("io_uring_queue_init (ring without an SQ index array)", ENOTSUP);
  for (unsigned i = 0; i < ring->ring_.sq.ring_entries; ++i) ring->ring_.sq.array[i] = i;

  // A registered ring fd spares the kernel an fget/fput per io_uring_enter (5.18).
  ring->enter_fd_ = ring->ring_.ring_fd;
  if (io_uring_register_ring_fd(&ring->ring_) == 1) {
    ring->enter_fd_ = ring->ring_.enter_ring_fd;
    ring->enter_flags_ = IORING_ENTER_REGISTERED_RING;
  }

  ring->scratch_sqe_ = std::make_unique<io_uring_sqe>();
  ring->timespec_count_ = ring->ring_.sq.ring_entries;
  ring->timespecs_ = std::make_unique<__kernel_timespec[]>(ring->timespec_count_);
  return ring;
}

Ring::~Ring() {
  if (!initialized_) return;
  // Queued SQEs that nobody waits for (asynchronous closes) still go to the kernel: dropping them
  // would leak their file descriptors.
  (void)submit();
  io_uring_queue_exit(&ring_);
}

void Ring::set_handler(io_uring_sqe* sqe, CompletionHandler* handler) noexcept {
  io_uring_sqe_set_data64(sqe, encode_user_data(handler));
}

io_uring_sqe* Ring::take_sqe(unsigned room_after) {
  if (!pending_error_ && io_uring_sq_space_left(&ring_) < 1 + room_after) {
    if (auto submitted = submit(); !submitted) pending_error_ = submitted.error();
  }
  if (pending_error_ || io_uring_sq_space_left(&ring_) < 1 + room_after) {
    if (!pending_error_) pending_error_ = Error{"io_uring_get_sqe", EBUSY, {}};
    std::memset(scratch_sqe_.get(), 0, sizeof(io_uring_sqe));
    last_sqe_ = scratch_sqe_.get();
    return last_sqe_;
  }
  last_sqe_ = io_uring_get_sqe(&ring_);
  return last_sqe_;
}

io_uring_sqe* Ring::sqe() { return take_sqe(1); }

__kernel_timespec* Ring::timespec_for(const io_uring_sqe* sqe, Duration after) {
  __kernel_timespec* ts = sqe == scratch_sqe_.get() ? &scratch_timespec_ : &timespecs_[sqe - ring_.sq.sqes];
  *ts = to_timespec(after);
  return ts;
}

void Ring::prep_accept_multishot(int listen_fd, CompletionHandler& handler) {
  io_uring_sqe* s = sqe();
  io_uring_prep_multishot_accept(s, listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  set_handler(s, &handler);
}

void Ring::prep_connect(int fd, const sockaddr* addr, socklen_t len, CompletionHandler& handler) {
  io_uring_sqe* s = sqe();
  io_uring_prep_connect(s, fd, addr, len);
  set_handler(s, &handler);
}

void Ring::prep_recv(int fd, std::span<char> into, CompletionHandler& handler) {
  io_uring_sqe* s = sqe();
  io_uring_prep_recv(s, fd, into.data(), into.size(), 0);
  set_handler(s, &handler);
}

void Ring::prep_read_fixed(int fd, std::span<char> into, int buf_index, CompletionHandler& handler) {
  io_uring_sqe* s = sqe();
  // Offset -1: "the file's current position", the only meaning a socket (a stream) can give it.
  io_uring_prep_read_fixed(s, fd, into.data(), static_cast<unsigned>(into.size()), static_cast<__u64>(-1),
                           buf_index);
  set_handler(s, &handler);
}

namespace {
// The kernel picks the receive buffer from `buffers` (the CQE names it).
void select_from(io_uring_sqe* s, const BufferRing& buffers) {
  s->flags |= IOSQE_BUFFER_SELECT;
  s->buf_group = buffers.group_id();
}
}  // namespace

void Ring::prep_recv_multishot(int fd, BufferRing& buffers, CompletionHandler& handler, bool bundle) {
  io_uring_sqe* s = sqe();
  io_uring_prep_recv_multishot(s, fd, nullptr, 0, 0);
  if (bundle) s->ioprio |= IORING_RECVSEND_BUNDLE;
  select_from(s, buffers);
  set_handler(s, &handler);
}

void Ring::prep_recv_select(int fd, BufferRing& buffers, CompletionHandler& handler, bool poll_first,
                            bool bundle) {
  io_uring_sqe* s = sqe();
  io_uring_prep_recv(s, fd, nullptr, 0, 0);  // length 0: the selected buffer's whole size (a bundle: no limit)
  if (poll_first) s->ioprio |= IORING_RECVSEND_POLL_FIRST;
  if (bundle) s->ioprio |= IORING_RECVSEND_BUNDLE;
  select_from(s, buffers);
  set_handler(s, &handler);
}

// MSG_NOSIGNAL on every send: a peer that has gone must give EPIPE, not kill the process.
void Ring::prep_send(int fd, std::span<const char> bytes, CompletionHandler& handler) {
  io_uring_sqe* s = sqe();
  io_uring_prep_send(s, fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  set_handler(s, &handler);
}

void Ring::prep_sendmsg(int fd, const msghdr* msg, CompletionHandler& handler) {
  io_uring_sqe* s = sqe();
  io_uring_prep_sendmsg(s, fd, msg, MSG_NOSIGNAL);
  set_handler(s, &handler);
}

void Ring::prep_sendmsg_then_recv(int fd, const msghdr* msg, std::span<char> into, CompletionHandler& sent,
                                  CompletionHandler& received) {
  // Room for both (and the one more SQE every prep_* leaves): the link never spans two submissions,
  // where the kernel would end it at the first one's last SQE.
  io_uring_sqe* send = take_sqe(2);
  io_uring_prep_sendmsg(send, fd, msg, MSG_NOSIGNAL | MSG_WAITALL);
  send->flags |= IOSQE_IO_LINK;
  set_handler(send, &sent);
  io_uring_sqe* recv = take_sqe(1);
  io_uring_prep_recv(recv, fd, into.data(), into.size(), 0);
  set_handler(recv, &received);
}

void Ring::prep_send_then_recv(int fd, std::span<const char> bytes, std::span<char> into, CompletionHandler& sent,
                               CompletionHandler& received) {
  io_uring_sqe* send = take_sqe(2);  // room for both, as prep_sendmsg_then_recv
  io_uring_prep_send(send, fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_WAITALL);
  send->flags |= IOSQE_IO_LINK;
  set_handler(send, &sent);
  io_uring_sqe* recv = take_sqe(1);
  io_uring_prep_recv(recv, fd, into.data(), into.size(), 0);
  // The answer cannot be there yet when the request has just gone out: wait for data first
  // instead of a receive attempt that would only return EAGAIN.
  recv->ioprio |= IORING_RECVSEND_POLL_FIRST;
  set_handler(recv, &received);
}

void Ring::prep_send_zc(int fd, std::span<const char> bytes, CompletionHandler& handler, bool report_usage) {
  io_uring_sqe* s = sqe();
  // A kernel without REPORT_USAGE rejects the flag with EINVAL: ask only where it exists.
  const unsigned zc_flags = report_usage && features_.send_zc_report_usage ? IORING_SEND_ZC_REPORT_USAGE : 0;
  io_uring_prep_send_zc(s, fd, bytes.data(), bytes.size(), MSG_NOSIGNAL, zc_flags);
  set_handler(s, &handler);
}

void Ring::prep_close(int fd, CompletionHandler* handler) {
  io_uring_sqe* s = sqe();
  io_uring_prep_close(s, fd);
  set_handler(s, handler);
}

void Ring::prep_cancel(const CompletionHandler& target, CompletionHandler* handler) {
  io_uring_sqe* s = sqe();
  io_uring_prep_cancel64(s, encode_user_data(&target), 0);
  set_handler(s, handler);
}

void Ring::prep_timeout(Duration after, CompletionHandler& handler) {
  io_uring_sqe* s = sqe();
  io_uring_prep_timeout(s, timespec_for(s, after), 0, 0);
  set_handler(s, &handler);
}

void Ring::link_timeout(Duration after) {
  io_uring_sqe* previous = last_sqe_;
  if (previous == nullptr) {
    // Nothing queued since the last submission: there is no operation this timeout could bound.
    if (!pending_error_) pending_error_ = Error{"link_timeout (no queued operation to link to)", EINVAL, {}};
    return;
  }
  // take_sqe() left room for this one, so the link and its timeout go to the kernel together.
  io_uring_sqe* s = take_sqe(0);
  previous->flags |= IOSQE_IO_LINK;
  io_uring_prep_link_timeout(s, timespec_for(s, after), 0);
  set_handler(s, nullptr);
  last_sqe_ = nullptr;  // a timeout is not linked to a timeout
}

Result<unsigned> Ring::enter(unsigned wait_nr, const __kernel_timespec* timeout) {
  // Publish the queued SQEs: the slot array is the identity, so moving the tail is enough.
  io_uring_sq& sq = ring_.sq;
  sq.sqe_head = sq.sqe_tail;
  io_uring_smp_store_release(sq.ktail, sq.sqe_tail);
  last_sqe_ = nullptr;  // handed over: it may no longer be changed
  const unsigned to_submit = sq.sqe_tail - *sq.khead;

  unsigned flags = enter_flags_;
  if (wait_nr > 0) flags |= IORING_ENTER_GETEVENTS;
  io_uring_getevents_arg arg{};
  const void* extra = nullptr;
  std::size_t extra_size = 0;  // _NSIG / 8 would be a sigset; no signal mask is changed here
  if (timeout != nullptr) {
    if (!features_.ext_arg) return fail("io_uring_enter (timed wait needs IORING_FEAT_EXT_ARG)", EOPNOTSUPP);
    arg.ts = reinterpret_cast<uint64_t>(timeout);
    flags |= IORING_ENTER_EXT_ARG;
    extra = &arg;
    extra_size = sizeof(arg);
  }
  ++stats_.enters;
  const long rc = ::syscall(__NR_io_uring_enter, enter_fd_, to_submit, wait_nr, flags, extra, extra_size);
  if (rc < 0) return fail("io_uring_enter", errno);
  // The kernel reports SQEs consumed when it consumed any; a wait that failed after consuming none
  // (ETIME, EINTR) came back as an errno above.
  stats_.sqes_submitted += static_cast<uint64_t>(rc);
  return static_cast<unsigned>(rc);
}

Status Ring::submit() {
  if (pending_error_) {
    Error error = std::move(*pending_error_);
    pending_error_.reset();
    return std::unexpected(std::move(error));
  }
  if (io_uring_sq_ready(&ring_) == 0) return {};
  auto submitted = enter(0, nullptr);
  if (!submitted) return std::unexpected(submitted.error());
  return {};
}

Result<unsigned> Ring::run_once(Duration timeout, unsigned min_completions) {
  if (pending_error_) {
    Error error = std::move(*pending_error_);
    pending_error_.reset();
    return std::unexpected(std::move(error));
  }
  if (io_uring_sq_ready(&ring_) == 0 && io_uring_cq_ready(&ring_) > 0) return reap();

  __kernel_timespec ts{};
  const bool bounded = timeout != Duration::max();
  if (bounded) ts = to_timespec(timeout);
  auto entered = enter(std::max(min_completions, 1u), bounded ? &ts : nullptr);
  if (!entered) {
    const int code = entered.error().code;
    // ETIME: the timeout passed. EINTR: a signal. Neither loses anything; the caller decides.
    // EBUSY/EAGAIN: the CQ overflowed and must be reaped before the kernel takes more.
    if (code == ETIME || code == EINTR) return reap();
    if (code == EBUSY || code == EAGAIN) {
      if (unsigned dispatched = reap(); dispatched > 0) return dispatched;
    }
    return std::unexpected(entered.error());
  }
  return reap();
}

unsigned Ring::reap() {
  io_uring_cq& cq = ring_.cq;
  unsigned head = *cq.khead;
  const unsigned tail = io_uring_smp_load_acquire(cq.ktail);
  unsigned dispatched = 0;
  for (; head != tail; ++head) {
    const io_uring_cqe& cqe = cq.cqes[head & cq.ring_mask];
    const uint64_t user_data = cqe.user_data;
    const int res = cqe.res;
    const uint32_t flags = cqe.flags;
    // Hand the slot back before the handler runs: a handler may queue and submit new work.
    io_uring_smp_store_release(cq.khead, head + 1);
    ++stats_.cqes_reaped;
    ++dispatched;
    if (CompletionHandler* handler = decode_user_data(user_data)) handler->on_completion(res, flags);
  }
  return dispatched;
}

}  // namespace ringlab::net
