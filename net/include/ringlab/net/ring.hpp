#pragma once
// Ring: one io_uring, owned by one thread.
//
// Set-up: tries IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN (and COOP_TASKRUN), and falls
// back step by step on kernels that refuse them; features() says what was granted and which opcodes
// the kernel supports (IORING_REGISTER_PROBE).
//
// Completions: every SQE's user_data is produced by encode_user_data() (user_data.hpp) from the
// address of a CompletionHandler that the caller owns and keeps alive until its last completion
// (for multishot operations: until a CQE without IORING_CQE_F_MORE). Dispatch is a call through that
// pointer: no allocation per operation. SQEs whose completion nobody needs (a linked timeout, a
// fire-and-forget close) carry the "ignored" user_data and are reaped silently.
//
// Submission is batched: prep_* only queue an SQE; submit()/run_once() hand everything queued to the
// kernel. The SQ always keeps room for one more SQE after any prep_*, so link_timeout() never splits
// a link across two submissions; when it would, sqe() submits what is queued first.
//
// System calls (what stats().enters counts, exactly): the Ring calls io_uring_enter itself rather
// than through liburing's submit/wait helpers, which may enter zero times or loop and enter again.
//   submit()        one io_uring_enter when SQEs are queued, none otherwise;
//   run_once(t, n)  none when nothing is queued and completions are already in the CQ ring (they
//                   are dispatched); otherwise exactly one io_uring_enter that submits what is queued
//                   and waits (IORING_ENTER_GETEVENTS, min_complete n (default 1), timeout through
//                   EXT_ARG);
//   sqe()           one submit() when the SQ is full.
// Registration calls (buffers, buffer rings, probe) are io_uring_register, counted nowhere.
//
// liburing's private state: to enter exactly once, the Ring publishes SQEs itself. It writes the SQ
// index array once (slot i -> SQE i) and then moves sq.sqe_head, sq.sqe_tail and *sq.ktail, fields
// that liburing keeps for its own submit path. That layout is liburing's, not the kernel's: releases
// after 2.4 may set rings up without an SQ array (IORING_SETUP_NO_SQARRAY, kernel 6.6) and track the
// tail differently. So net/CMakeLists.txt refuses to build against a liburing outside the releases
// this was written and tested for (2.1 to 2.4; Debian 12 ships 2.3), and create() fails if the ring
// has no SQ array. Moving to a newer liburing means re-reading its io_uring_submit() first.
// With DEFER_TASKRUN the kernel posts completions only while this thread is inside
// io_uring_enter(GETEVENTS): run_once() is the only place completions appear, submit() never waits.
//
// Errors: set-up and registration return Result; prep_* cannot fail: if no SQE can be had even after
// a submit, the failure is kept and returned by the next submit()/run_once(), and the operation is
// never submitted (its handler is never called).
//
// Threads: a Ring is used by the thread that created it and no other (SINGLE_ISSUER makes the kernel
// enforce it with EEXIST). Handlers must outlive their operations; destroying a Ring with operations
// in flight is the owner's bug.
#include <liburing.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "ringlab/net/error.hpp"

struct iovec;
struct msghdr;

namespace ringlab::net {

class BufferRing;

// Receives the completions of the operations it was given to. Implementations are plain members of
// connection objects, clients, servers: the Ring never owns them.
class CompletionHandler {
 public:
  // `res` is the CQE result (-errno on failure), `flags` the CQE flags (F_MORE, F_BUFFER, F_NOTIF...).
  virtual void on_completion(int res, uint32_t flags) = 0;

 protected:
  ~CompletionHandler() = default;
};

// The usual handler: a member of the object that keeps the operation in flight, routing its
// completion to one of that object's member functions. No allocation per operation; the owner must
// outlive the operation, as for any handler.
template <class Owner, void (Owner::*Method)(int, uint32_t)>
class MemberCompletion final : public CompletionHandler {
 public:
  explicit MemberCompletion(Owner& owner) noexcept : owner_(&owner) {}
  void on_completion(int res, uint32_t flags) override { (owner_->*Method)(res, flags); }

 private:
  Owner* owner_;
};

struct RingOptions {
  unsigned entries = 256;
  bool single_issuer = true;  // SINGLE_ISSUER|DEFER_TASKRUN when the kernel has them
  bool coop_taskrun = true;
};

struct RingFeatures {
  bool single_issuer = false;  // granted at set-up
  bool defer_taskrun = false;
  bool coop_taskrun = false;
  bool ext_arg = false;           // IORING_FEAT_EXT_ARG: waits with a timeout without a timeout SQE
  bool send_zc = false;           // IORING_OP_SEND_ZC
  bool send_zc_report_usage = false;
  bool recv_multishot = false;    // kernel >= 6.0
  bool accept_multishot = false;  // kernel >= 5.19
  bool provided_buffer_ring = false;  // IORING_REGISTER_PBUF_RING
  bool fixed_buffers = false;
  // Newer than Debian 12's liburing and kernel headers (ring.cpp defines their values):
  // IORING_FEAT_RECVSEND_BUNDLE (6.10): a receive that fills several provided buffers in one completion.
  bool recv_bundle = false;
  // IOU_PBUF_RING_INC (6.12): a provided-buffer ring whose buffers are consumed piece by piece, so that
  // consecutive receives continue in the buffer the last one left (IORING_CQE_F_BUF_MORE). Probed by
  // registering a ring with the flag once per process.
  bool provided_buffer_ring_incremental = false;
};

struct RingStats {
  uint64_t enters = 0;          // io_uring_enter system calls made by this ring
  uint64_t sqes_submitted = 0;  // SQEs the kernel consumed
  uint64_t cqes_reaped = 0;     // CQEs dispatched or ignored
};

using Duration = std::chrono::nanoseconds;

class Ring {
 public:
  static Result<std::unique_ptr<Ring>> create(const RingOptions& options = {});
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  [[nodiscard]] const RingFeatures& features() const { return features_; }
  [[nodiscard]] const RingStats& stats() const { return stats_; }
  [[nodiscard]] io_uring* raw() { return &ring_; }

  // A free SQE; submits queued ones first when the SQ is full. The caller fills it and must call
  // set_handler() after the liburing io_uring_prep_* call (which clears user_data), or use the
  // prep_* helpers below, which do.
  io_uring_sqe* sqe();
  // null = ignored completion.
  static void set_handler(io_uring_sqe* sqe, CompletionHandler* handler) noexcept;

  // Operations. Each queues one SQE whose completion goes to `handler`.
  void prep_accept_multishot(int listen_fd, CompletionHandler& handler);
  void prep_connect(int fd, const sockaddr* addr, socklen_t len, CompletionHandler& handler);
  void prep_recv(int fd, std::span<char> into, CompletionHandler& handler);
  // Receives into a registered (fixed) buffer: IORING_OP_READ_FIXED on the socket.
  void prep_read_fixed(int fd, std::span<char> into, int buf_index, CompletionHandler& handler);
  // Multishot recv; the kernel picks a buffer from `buffers` for each completion (F_BUFFER, bid in
  // flags >> IORING_CQE_BUFFER_SHIFT). The caller gives each buffer back with BufferRing::recycle (or
  // BufferRing::take_pieces, which does).
  // bundle (RingFeatures::recv_bundle, IORING_RECVSEND_BUNDLE): each completion may carry several
  // buffers, consecutive in the ring, as many as the bytes the socket had queued fill; its res counts
  // them all and its bid names the first (BufferRing::take_pieces walks them).
  void prep_recv_multishot(int fd, BufferRing& buffers, CompletionHandler& handler, bool bundle = false);
  // One recv into one buffer the kernel picks from `buffers` (F_BUFFER as above), then the operation
  // ends: the caller decides whether to receive again, so at most one buffer arrives per arm (with
  // `bundle`, one completion of as many buffers as the queued bytes fill, as above).
  // poll_first: the caller knows the socket was just drained (its last recv did not fill a buffer),
  // so the kernel waits for data before its first attempt (IORING_RECVSEND_POLL_FIRST) instead of
  // trying a recv that can only return EAGAIN.
  void prep_recv_select(int fd, BufferRing& buffers, CompletionHandler& handler, bool poll_first = false,
                        bool bundle = false);
  void prep_send(int fd, std::span<const char> bytes, CompletionHandler& handler);
  void prep_sendmsg(int fd, const msghdr* msg, CompletionHandler& handler);
  // A request and the first receive of its answer, queued as one link in the same submission:
  // a sendmsg with MSG_WAITALL (the kernel continues a short send itself, so its CQE carries every
  // byte of `msg` or the failure, possibly after a partial count) with IOSQE_IO_LINK to a recv into
  // `into`, which the kernel starts once the send has completed whole and completes with -ECANCELED
  // when the send failed or stopped short. Two completions, always.
  void prep_sendmsg_then_recv(int fd, const msghdr* msg, std::span<char> into, CompletionHandler& sent,
                              CompletionHandler& received);
  // The same with a plain send of one contiguous buffer (IORING_OP_SEND, MSG_WAITALL): the kernel
  // has no msghdr and iovec array to copy in, which a request of one buffer does not need.
  void prep_send_then_recv(int fd, std::span<const char> bytes, std::span<char> into, CompletionHandler& sent,
                           CompletionHandler& received);
  // Zero-copy send: the handler sees a first CQE (res = bytes, F_MORE) and later the notification
  // CQE (F_NOTIF; with report_usage, res has IORING_NOTIF_USAGE_ZC_COPIED when the kernel copied).
  // The bytes must stay untouched until the notification.
  void prep_send_zc(int fd, std::span<const char> bytes, CompletionHandler& handler, bool report_usage = true);
  // handler may be null: the result is then ignored.
  void prep_close(int fd, CompletionHandler* handler);
  // Cancels the first operation in flight whose handler is `target` (the target then completes with
  // -ECANCELED, or normally if it won the race). handler may be null.
  void prep_cancel(const CompletionHandler& target, CompletionHandler* handler);
  // Standalone timeout: completes with -ETIME when `after` has passed.
  void prep_timeout(Duration after, CompletionHandler& handler);
  // Links a timeout to the SQE queued just before: if that operation has not completed within
  // `after`, it is cancelled and completes with -ECANCELED. The timeout's own CQE is ignored.
  // Called with no SQE queued since the last submission, it queues nothing and the next
  // submit()/run_once() returns EINVAL.
  void link_timeout(Duration after);

  // Submits what is queued without waiting.
  Status submit();
  // Submits what is queued, waits for at least `min_completions` completions (or `timeout`;
  // Duration::max() waits without limit), then dispatches every completion that is ready. Returns the
  // number dispatched: fewer than asked (maybe 0) when the timeout passed or a signal interrupted the
  // wait. A caller that queued several operations and needs them all asks for as many completions, so
  // that one io_uring_enter covers them: a completion that arrives during submission (an inline send)
  // would otherwise end the wait at once.
  Result<unsigned> run_once(Duration timeout = Duration::max(), unsigned min_completions = 1);
  // Runs until done() is true. The predicate is checked after every batch of completions.
  template <class Done>
  Status run_until(Done&& done) {
    while (!done()) {
      auto dispatched = run_once();
      if (!dispatched) return std::unexpected(dispatched.error());
    }
    return {};
  }

 private:
  Ring() = default;
  io_uring_sqe* take_sqe(unsigned room_after);
  __kernel_timespec* timespec_for(const io_uring_sqe* sqe, Duration after);
  // One io_uring_enter: submits everything queued, waits for `wait_nr` completions (bounded by
  // `timeout` when not null). Returns SQEs consumed.
  Result<unsigned> enter(unsigned wait_nr, const __kernel_timespec* timeout);
  unsigned reap();

  io_uring ring_{};
  bool initialized_ = false;
  RingFeatures features_{};
  RingStats stats_{};
  unsigned enter_flags_ = 0;  // IORING_ENTER_REGISTERED_RING when the ring fd is registered
  int enter_fd_ = -1;
  io_uring_sqe* last_sqe_ = nullptr;  // what link_timeout() links to
  // Set when no SQE could be had; returned by the next submit()/run_once(). The SQE handed out then
  // is this scratch one, never submitted.
  std::optional<Error> pending_error_;
  std::unique_ptr<io_uring_sqe> scratch_sqe_;  // heap: the struct ends in a flexible array
  __kernel_timespec scratch_timespec_{};
  // Timespecs of queued timeouts, one slot per SQ entry (slot i belongs to SQE i): the kernel reads
  // a timespec when it consumes the SQE, and an SQE slot is not handed out again before that.
  std::unique_ptr<__kernel_timespec[]> timespecs_;
  unsigned timespec_count_ = 0;
};

}  // namespace ringlab::net
