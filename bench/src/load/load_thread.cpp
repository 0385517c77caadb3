// One thread of the load generator: its ring, provided buffers and connections, and the loop that
// sends what is due, times requests out and ends the run.
#include <algorithm>
#include <bit>
#include <chrono>
#include <functional>

#include "load_threads.hpp"
#include "ringlab/bench/process/server_process.hpp"

namespace ringlab::bench::load_generator {

Status LoadThread::set_up() {
  const LoadSpec& spec = *plan_.spec;
  net::RingOptions options;
  options.entries = std::bit_ceil(std::max(256u, 4 * spec.connections / spec.threads + 16));
  auto ring = net::Ring::create(options);
  if (!ring) return fail("load thread: " + ring.error().message());
  ring_ = std::move(*ring);
  if (!ring_->features().recv_multishot || !ring_->features().provided_buffer_ring) {
    return fail("load thread: this kernel has no multishot recv with provided-buffer rings (Linux 6.0)");
  }
  auto buffers = net::BufferRing::create(*ring_, 0, spec.recv_buffers, spec.recv_buffer_bytes);
  if (!buffers) return fail("load thread: buffer ring: " + buffers.error().message());
  buffers_ = std::move(*buffers);
  for (unsigned g = thread_index_; g < spec.connections; g += spec.threads) {
    connections_.push_back(std::make_unique<LoadConnection>(*this, g));
  }
  std::vector<Waiting> storage;
  storage.reserve(connections_.size() + 1);
  waiting_ = decltype(waiting_)(std::greater<>(), std::move(storage));
  for (auto& connection : connections_) connection->connect();
  // Every connect completes (or times out) before the run starts.
  while (std::any_of(connections_.begin(), connections_.end(), [](const auto& c) { return !c->quiet() && !c->connected(); })) {
    auto ran = ring_->run_once(std::chrono::milliseconds(100));
    if (!ran) return fail("load thread: " + ran.error().message());
  }
  if (setup_error_) return fail(*setup_error_);
  return {};
}

void LoadThread::run(std::latch& ready, std::latch& go) {
  const LoadSpec& spec = *plan_.spec;
  if (!spec.cpus.empty()) {
    if (auto pinned = pin_current_thread(spec.cpus[thread_index_ % spec.cpus.size()]); !pinned) {
      setup_error_ = pinned.error().message;
      ready.count_down();
      return;
    }
  }
  if (auto made = set_up(); !made) {
    setup_error_ = made.error().message;
    ready.count_down();
    go.wait();
    tear_down();
    return;
  }
  ready.count_down();
  go.wait();
  if (plan_.start != 0) loop();
  tear_down();
}

void LoadThread::loop() {
  const Nanos now = now_ns();
  for (auto& connection : connections_) connection->begin(now);
  constexpr Nanos kMaxWait = 50'000'000;  // the cancel flag is read at least this often
  // Requests' deadlines are checked by a scan of this thread's connections every timeout / 10
  // (1 to 50 ms): a scan per completion batch would cost O(connections) per answer.
  const Nanos timeout = static_cast<Nanos>(plan_.spec->timeout.count());
  const Nanos scan_every = std::clamp<Nanos>(timeout / 10, 1'000'000, kMaxWait);
  Nanos next_scan = now + scan_every;
  for (;;) {
    Nanos t = now_ns();
    while (!waiting_.empty() && waiting_.top().due <= t) {
      const Waiting next = waiting_.top();
      waiting_.pop();
      next.connection->send_due(next.due, t);
    }
    if (t >= next_scan) {
      next_scan = t + scan_every;
      if (t > timeout) {
        for (auto& connection : connections_) connection->time_out_if_sent_before(t - timeout);
      }
    }
    if (plan_.cancel != nullptr && *plan_.cancel != 0) {
      result_.interrupted = true;
      break;
    }
    if (t >= plan_.window_end) {
      stopping_ = true;
      if (in_flight_ == 0) break;
      if (t >= plan_.drain_end) {
        result_.errors.timeout += static_cast<uint64_t>(in_flight_);
        break;
      }
    }
    Nanos until = t >= plan_.window_end ? plan_.drain_end : plan_.window_end;
    if (!waiting_.empty()) until = std::min(until, waiting_.top().due);
    if (in_flight_ > 0) until = std::min(until, next_scan);
    const Nanos wait = std::min(until > t ? until - t : 0, kMaxWait);
    const unsigned wanted = 1 + sends_queued_;
    sends_queued_ = 0;
    auto ran = ring_->run_once(std::chrono::nanoseconds(wait), wanted);
    if (!ran) {
      setup_error_ = "load thread: " + ran.error().message();
      break;
    }
  }
  stopping_ = true;
}

void LoadThread::tear_down() noexcept {
  stopping_ = true;
  if (ring_) {
    for (auto& connection : connections_) connection->shut_down();
    // shutdown() ends every multishot recv; wait for their last completions (bounded).
    const Nanos deadline = now_ns() + 2'000'000'000;
    while (now_ns() < deadline &&
           std::any_of(connections_.begin(), connections_.end(), [](const auto& c) { return !c->quiet(); })) {
      if (!ring_->run_once(std::chrono::milliseconds(50))) break;
    }
  }
  for (auto& connection : connections_) connection->close_fd();
  result_.enters = ring_ ? ring_->stats().enters : 0;
  connections_.clear();
  buffers_.reset();
  ring_.reset();
}

}  // namespace ringlab::bench::load_generator
