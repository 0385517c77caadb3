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
// Submission is batched: prep_* only queue an SQE; run()/run_until() submit everything queued and
// wait in one io_uring_enter. If the SQ is full, sqe() submits what is queued first.
//
// Accounting: stats() counts io_uring_enter calls, SQEs submitted and CQEs reaped since creation, so
// a benchmark can report them per operation.
#include <liburing.h>

#include <chrono>
#include <cstdint>
#include <memory>
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
  // set_handler() (or use the prep_* helpers, which do).
  io_uring_sqe* sqe();

  // Operations. Each queues one SQE whose completion goes to `handler`.
  void prep_accept_multishot(int listen_fd, CompletionHandler& handler);
  void prep_connect(int fd, const sockaddr* addr, socklen_t len, CompletionHandler& handler);
  void prep_recv(int fd, std::span<char> into, CompletionHandler& handler);
  // Receives into a registered (fixed) buffer: IORING_OP_READ_FIXED on the socket.
  void prep_read_fixed(int fd, std::span<char> into, int buf_index, CompletionHandler& handler);
  // Multishot recv; the kernel picks a buffer from `buffers` for each completion (F_BUFFER, bid in
  // flags >> IORING_CQE_BUFFER_SHIFT). The caller gives each buffer back with BufferRing::recycle.
  void prep_recv_multishot(int fd, BufferRing& buffers, CompletionHandler& handler);
  void prep_send(int fd, std::span<const char> bytes, CompletionHandler& handler);
  void prep_sendmsg(int fd, const msghdr* msg, CompletionHandler& handler);
  // Zero-copy send: the handler sees a first CQE (res = bytes, F_MORE) and later the notification
  // CQE (F_NOTIF; with report_usage, res has IORING_NOTIF_USAGE_ZC_COPIED when the kernel copied).
  // The bytes must stay untouched until the notification.
  void prep_send_zc(int fd, std::span<const char> bytes, CompletionHandler& handler, bool report_usage = true);
  // handler may be null: the result is then ignored.
  void prep_close(int fd, CompletionHandler* handler);
  void prep_cancel(const CompletionHandler& target, CompletionHandler* handler);
  // Standalone timeout: completes with -ETIME when `after` has passed.
  void prep_timeout(Duration after, CompletionHandler& handler);
  // Links a timeout to the SQE queued just before: if that operation has not completed within
  // `after`, it is cancelled and completes with -ECANCELED. The timeout's own CQE is ignored.
  void link_timeout(Duration after);

  // Submits what is queued without waiting.
  Status submit();
  // Submits what is queued, waits for at least one completion (or `timeout`, if given), then
  // dispatches every completion that is ready. Returns the number dispatched (0 on timeout).
  Result<unsigned> run_once(Duration timeout = Duration::max());
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
  unsigned reap();

  io_uring ring_{};
  RingFeatures features_{};
  RingStats stats_{};
  // Timespecs of queued timeouts: the kernel reads them at submission, so they live here until then.
  std::unique_ptr<__kernel_timespec[]> timespecs_;
  unsigned timespec_next_ = 0;
  unsigned timespec_count_ = 0;
};

}  // namespace ringlab::net
