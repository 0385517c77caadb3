// Worker: one thread, one ring, one listener (see worker.hpp, server.hpp).
#include "worker.hpp"

#include <liburing.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <thread>

#include "body_placement.hpp"
#include "ringlab/base/errno_text.hpp"

namespace ringlab::server {
namespace {

using std::chrono::duration_cast;

std::string errno_text(const char* op, int code) { return base::errno_message(op, {}, code); }

}  // namespace

Worker::Worker(const ServerOptions& options, net::Fd listener, std::string upstream, int cpu,
               std::function<void()> on_failure, StatsBoard& board, std::size_t board_slot)
    : options_(options),
      listener_(std::move(listener)),
      upstream_text_(std::move(upstream)),
      cpu_(cpu),
      on_failure_(std::move(on_failure)),
      cache_(BodyCacheLimits{.max_entries = options.cache_entries, .max_bytes = options.cache_bytes}),
      board_(board),
      board_slot_(board_slot) {
  // Made here, before the thread starts, because request_stop() may be called from any thread.
  wake_fd_ = net::Fd(::eventfd(0, EFD_CLOEXEC));
  if (!wake_fd_.valid()) wake_errno_ = errno;
  if (!upstream_text_.empty()) {
    // Checked by Server::start; a failure here leaves /proxy answering 502.
    if (auto url = http::Url::parse(upstream_text_)) upstream_url_ = *url;
  }
  const net::Duration idle = options_.idle_timeout;
  const net::Duration shortest = std::min({idle, net::Duration(options_.header_timeout), net::Duration(options_.body_timeout)});
  tick_period_ = std::clamp<net::Duration>(shortest / 8, std::chrono::milliseconds(1), std::chrono::seconds(1));
  idle_limit_ = idle + tick_period_;
  header_limit_ = options_.header_timeout + tick_period_;
  body_limit_ = options_.body_timeout + tick_period_;
  linger_limit_ = std::min<net::Duration>(idle, std::chrono::seconds(1)) + tick_period_;
}

Worker::~Worker() { tear_down(); }

Status Worker::set_up() {
  now_ = Clock::now();
  if (!wake_fd_.valid()) return std::unexpected(Error{errno_text("eventfd", wake_errno_)});

  if (cpu_ >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu_, &set);
    if (int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set); rc != 0) {
      return std::unexpected(Error{errno_text("pin to cpu", rc)});
    }
  }

  // Room for a send per connection and the worker's own operations in one batch; the ring submits
  // early when full, so this is a batching size, not a limit.
  auto ring = net::Ring::create(net::RingOptions{.entries = 1024});
  if (!ring) return std::unexpected(Error{ring.error().message()});
  ring_ = std::move(*ring);
  const auto& features = ring_->features();
  if (!features.accept_multishot || !features.recv_multishot || !features.provided_buffer_ring) {
    return std::unexpected(Error{"io_uring: this kernel lacks multishot accept/recv or provided-buffer rings "
                                 "(Linux 6.0 or later is needed)"});
  }
  if ((options_.body_strategy == BodyStrategy::send_zc || options_.body_strategy == BodyStrategy::fixed) &&
      !features.send_zc) {
    return std::unexpected(Error{"io_uring: this kernel lacks IORING_OP_SEND_ZC (--body-strategy " +
                                 std::string(body_strategy_name(options_.body_strategy)) + ")"});
  }
  // Bodies of at most inline_body_bytes are copied next to their head whatever the strategy: they
  // are not placed.
  if (options_.body_strategy == BodyStrategy::fixed) {
    auto area = FixedArea::create(*ring_, options_.fixed_body_bytes);
    if (!area) return std::unexpected(Error{"--body-strategy fixed: " + area.error().message});
    fixed_area_ = std::move(*area);
    cache_.set_placer([this](Body& body) {
      if (body.bytes.size() > options_.inline_body_bytes) fixed_area_->place(body);
    });
  } else if (options_.body_strategy == BodyStrategy::sendfile) {
    cache_.set_placer([this](Body& body) {
      if (body.bytes.size() > options_.inline_body_bytes) place_in_file(body);
    });
  }
  auto buffers = net::BufferRing::create(*ring_, 0, options_.recv_buffer_count, options_.recv_buffer_bytes);
  if (!buffers) return std::unexpected(Error{buffers.error().message()});
  buffers_ = std::move(*buffers);
  upstream_ = std::make_unique<Upstream>(*ring_, options_, upstream_url_, stats_);
  typed_upstream_ = {upstream_->typed_client(UpstreamConnection::pooled),
                     upstream_->typed_client(UpstreamConnection::fresh)};

  arm_accept();
  arm_wake();
  arm_timer();
  if (auto submitted = ring_->submit(); !submitted) return std::unexpected(Error{submitted.error().message()});
  return {};
}

void Worker::run(std::promise<Status>& ready) {
  if (auto status = set_up(); !status) {
    result_ = status;
    tear_down();
    ready.set_value(status);
    return;
  }
  ready.set_value({});
  while (!finished()) {
    auto dispatched = ring_->run_once();
    if (!dispatched) {
      result_ = std::unexpected(Error{"worker ring: " + dispatched.error().message()});
      break;
    }
    if (++batches_since_publish_ == kBatchesPerPublish) publish_stats();
  }
  publish_stats();
  if (result_) {
    // Closes queued by the last connections are still in the SQ.
    if (auto submitted = ring_->submit(); !submitted) {
      result_ = std::unexpected(Error{"worker ring: " + submitted.error().message()});
    }
  }
  tear_down();
  if (!result_ && on_failure_) on_failure_();
}

void Worker::tear_down() noexcept {
  // Only after a ring failure are connections still open here; their operations die with the ring.
  for (Connection* connection = live_head_; connection != nullptr;) {
    Connection* next = connection->next_live;
    delete connection;  // closes its socket (~Connection); live connections are owned by the list
    connection = next;
  }
  live_head_ = nullptr;
  live_ = 0;
  free_.clear();
  typed_upstream_.clear();
  upstream_.reset();
  buffers_.reset();
  ring_.reset();
  // Cached bodies keep their ranges (and the area) alive; the registration went with the ring.
  fixed_area_.reset();
}

void Worker::request_stop() noexcept {
  if (!wake_fd_.valid()) return;
  uint64_t one = 1;
  // Cannot fail short of a bad fd: an eventfd counter overflows only after 2^64-2 stops.
  [[maybe_unused]] ssize_t written = ::write(wake_fd_.get(), &one, sizeof one);
}

ServerStats Worker::stats() const {
  ServerStats stats = stats_;
  stats.cache_hits = cache_.stats().hits;
  stats.cache_misses = cache_.stats().misses;
  return stats;
}

bool Worker::shutdown_expired() const noexcept {
  return stopping_ && now_ - stop_time_ >= options_.shutdown_timeout;
}

void Worker::arm_accept() {
  ring_->prep_accept_multishot(listener_.get(), accept_op_);
  accept_armed_ = true;
  accept_retry_ = false;
}

void Worker::arm_timer() {
  ring_->prep_timeout(tick_period_, tick_op_);
  timer_armed_ = true;
}

void Worker::arm_wake() {
  io_uring_sqe* sqe = ring_->sqe();
  io_uring_prep_read(sqe, wake_fd_.get(), &wake_value_, sizeof wake_value_, 0);
  net::Ring::set_handler(sqe, &wake_op_);
  wake_armed_ = true;
}

void Worker::on_accept(int res, uint32_t flags) {
  if ((flags & IORING_CQE_F_MORE) == 0) accept_armed_ = false;
  if (res >= 0) {
    if (stopping_ || live_ >= options_.max_connections) {
      ring_->prep_close(res, nullptr);
      ++stats_.refused;
    } else {
      // Answers go out in one sendmsg each; Nagle would hold a second one back for an ACK.
      // A failure here means the peer is already gone, which the first recv will report.
      (void)net::set_nodelay(res);
      ++stats_.accepted;
      try {
        acquire().open(res);
      } catch (const std::bad_alloc&) {
        // No memory for a connection object: this connection is refused, the process lives on.
        ring_->prep_close(res, nullptr);
        ++stats_.refused;
      }
    }
    if (!accept_armed_ && !stopping_) arm_accept();  // the kernel ended the multishot (CQ overflow)
  } else if (res != -ECANCELED) {
    // EMFILE, ENFILE, ENOMEM...: re-armed at the next tick, so an exhausted process does not spin.
    ++stats_.accept_errors;
    if (!accept_armed_) accept_retry_ = true;
  }
  maybe_finish();
}

void Worker::on_tick(int res, uint32_t /*flags*/) {
  timer_armed_ = false;
  if (res == -ETIME) {
    now_ = Clock::now();
    for (Connection* connection = live_head_; connection != nullptr;) {
      Connection* next = connection->next_live;  // on_tick may release the connection
      connection->on_tick(now_);
      connection = next;
    }
    if (accept_retry_ && !stopping_) arm_accept();
    if (upstream_) upstream_->drop_closed_idle();
    // Here, not in release(): a connection releases itself from inside its own handlers.
    while (free_.size() > kFreeConnections) {
      free_.pop_back();
      released_bytes_ += sizeof(Connection) + 16 * 1024;  // about what a connection's buffers hold
    }
    if (released_bytes_ >= kTrimBytes) {
      // glibc keeps freed memory in its arenas (and raises its mmap threshold after a large free);
      // without this, the memory a burst or a huge answer used would stay in the process's RSS.
      ::malloc_trim(0);
    }
    released_bytes_ = 0;
  }
  publish_stats();
  if (!timer_cancelled_) arm_timer();
  maybe_finish();
}

void Worker::on_wake(int /*res*/, uint32_t /*flags*/) {
  wake_armed_ = false;
  if (!wake_cancelled_) begin_stop();
  maybe_finish();
}

void Worker::begin_stop() {
  if (stopping_) return;
  stopping_ = true;
  now_ = Clock::now();
  stop_time_ = now_;
  accept_retry_ = false;
  if (accept_armed_) ring_->prep_cancel(accept_op_, nullptr);
  // A stopping server should be gone soon: finer ticks than the idle timeout may need (the timer is
  // cancelled and re-armed by on_tick with the shorter period), and a short linger.
  constexpr net::Duration kStopTick = std::chrono::milliseconds(100);
  const net::Duration finer = std::clamp<net::Duration>(options_.shutdown_timeout / 8, std::chrono::milliseconds(1),
                                                        std::min(tick_period_, kStopTick));
  linger_limit_ = std::min(linger_limit_, kStopTick + finer);
  if (finer < tick_period_) {
    tick_period_ = finer;
    if (timer_armed_) ring_->prep_cancel(tick_op_, nullptr);
  }
  for (Connection* connection = live_head_; connection != nullptr;) {
    Connection* next = connection->next_live;
    connection->on_stop();
    connection = next;
  }
}

void Worker::maybe_finish() {
  if (!stopping_ || accept_armed_ || live_ > 0) return;
  // No connection is left to ask for one: idle upstream connections go now. Abandoned fetches
  // still in flight end with their cancellation (finished() waits for them).
  if (upstream_) upstream_->close_idle();
  if (timer_armed_ && !timer_cancelled_) ring_->prep_cancel(tick_op_, nullptr);
  if (wake_armed_ && !wake_cancelled_) ring_->prep_cancel(wake_op_, nullptr);
  timer_cancelled_ = true;
  wake_cancelled_ = true;
}

bool Worker::finished() const noexcept {
  return stopping_ && !accept_armed_ && live_ == 0 && !timer_armed_ && !wake_armed_ &&
         (!upstream_ || upstream_->in_flight() == 0);
}

Connection& Worker::acquire() {
  Connection* connection = nullptr;
  if (free_.empty()) {
    connection = std::make_unique<Connection>(*this).release();  // owned by the live list
  } else {
    connection = free_.back().release();
    free_.pop_back();
  }
  connection->prev_live = nullptr;
  connection->next_live = live_head_;
  if (live_head_ != nullptr) live_head_->prev_live = connection;
  live_head_ = connection;
  ++live_;
  return *connection;
}

void Worker::release(Connection& connection) {
  if (connection.prev_live != nullptr) {
    connection.prev_live->next_live = connection.next_live;
  } else {
    live_head_ = connection.next_live;
  }
  if (connection.next_live != nullptr) connection.next_live->prev_live = connection.prev_live;
  connection.prev_live = connection.next_live = nullptr;
  free_.push_back(std::unique_ptr<Connection>(&connection));
  --live_;
  ++stats_.closed;
  maybe_finish();
}

}  // namespace ringlab::server
