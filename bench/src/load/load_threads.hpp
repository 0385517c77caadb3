#pragma once
// The load generator's threads and connections (load.hpp has the model), shared by the files of
// src/load/: load_connection.cpp (one connection's requests and answers), load_thread.cpp (a
// thread's ring, connections and loop) and load_generator.cpp (run_load: the threads, the window and
// the CPU samples around it). Internal to src/load.
#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <latch>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "ringlab/bench/load/load.hpp"
#include "ringlab/http/response_receiver.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/net/buffer_ring.hpp"
#include "ringlab/net/endpoint.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::bench::load_generator {

using Nanos = uint64_t;

inline Nanos now_ns() noexcept {
  return static_cast<Nanos>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

template <class Owner, void (Owner::*Method)(int, uint32_t)>
using Op = net::MemberCompletion<Owner, Method>;

// What every thread reads and nobody writes during the run.
struct Plan {
  const LoadSpec* spec = nullptr;
  std::string request;  // the bytes of one request
  net::Endpoint peer;
  Nanos start = 0;      // set by run_load before the threads are released
  Nanos window_begin = 0;
  Nanos window_end = 0;
  Nanos drain_end = 0;
  double interval_ns = 0;  // open loop: between two requests of the whole run
  const volatile std::sig_atomic_t* cancel = nullptr;
};

class LoadThread;

class LoadConnection {
 public:
  LoadConnection(LoadThread& thread, unsigned index) : thread_(thread), index_(index) {}

  // Opens the socket and queues the connect (bounded by the spec's timeout).
  void connect();
  // Open loop: the first request is `index` of the run; closed loop: send at once.
  void begin(Nanos now);
  // Sends the request that was due at `due` (open loop) now.
  void send_due(Nanos due, Nanos now);
  // The run is over: shut the socket down so that the multishot recv ends.
  void shut_down() noexcept;
  [[nodiscard]] bool quiet() const noexcept { return !recv_armed_ && !send_in_flight_ && !connecting_; }
  [[nodiscard]] bool in_flight() const noexcept { return in_flight_; }
  // A request in flight since before `sent_before` has waited too long: counted as a timeout, and
  // the connection is reopened (fail()).
  void time_out_if_sent_before(Nanos sent_before);
  [[nodiscard]] bool connected() const noexcept { return connected_; }
  void close_fd() noexcept;

 private:
  void on_connected(int res, uint32_t flags);
  void on_recv(int res, uint32_t flags);
  void on_sent(int res, uint32_t flags);
  void arm_recv();
  void send_request(Nanos now);
  void submit_send();
  void consume(std::string_view bytes, Nanos now);
  void response_done(Nanos now);
  void schedule_next(Nanos now);
  // Counts the failure (by the counter given; null: not an error, the server ended the connection),
  // shuts the socket down and, once nothing of it is in flight, closes it and connects again; the
  // request in flight is lost and the next is scheduled once connected.
  void fail(uint64_t LoadErrors::*kind);
  // After fail(): closes and reconnects when neither the recv nor a send is in flight any more.
  void close_when_quiet();

  LoadThread& thread_;
  unsigned index_;  // global connection number
  int fd_ = -1;
  // Frames the answers, 1xx interim responses skipped, as every client of http/ does. Received bytes
  // stay in the thread's provided buffers (received_elsewhere), so the receiver's own buffer is unused.
  http::ResponseReceiver receiver_{http::ParserLimits{}, 0};
  http::DiscardSink body_;
  Op<LoadConnection, &LoadConnection::on_connected> connect_op_{*this};
  Op<LoadConnection, &LoadConnection::on_recv> recv_op_{*this};
  Op<LoadConnection, &LoadConnection::on_sent> send_op_{*this};
  bool connecting_ = false;
  bool connected_ = false;
  bool recv_armed_ = false;
  bool send_in_flight_ = false;
  bool in_flight_ = false;   // a request was sent (or is being sent) and its response is not complete
  bool closing_ = false;     // shut down after a failure: reconnect once the recv has ended
  bool stopped_ = false;     // the run is over
  bool waiting_ = false;     // open loop: this connection's next request is in the thread's queue
  bool due_pending_ = false; // open loop: a request came due while the connection was being reopened
  Nanos pending_due_ = 0;
  std::size_t sent_ = 0;     // bytes of the request in flight already sent
  Nanos started_ = 0;        // due time (open loop) or send time (closed loop) of the request in flight
  Nanos sent_at_ = 0;        // when the request in flight was handed to the kernel (its deadline's start)
  uint64_t sequence_ = 0;    // open loop: this connection's next request is number index_ + sequence_ * C
};

class LoadThread {
 public:
  LoadThread(const Plan& plan, unsigned thread_index) : plan_(plan), thread_index_(thread_index) {}

  // Thread body.
  void run(std::latch& ready, std::latch& go);

  [[nodiscard]] const Plan& plan() const noexcept { return plan_; }
  [[nodiscard]] net::Ring& ring() noexcept { return *ring_; }
  [[nodiscard]] net::BufferRing& buffers() noexcept { return *buffers_; }
  [[nodiscard]] bool open_loop() const noexcept { return plan_.spec->rate > 0; }
  [[nodiscard]] bool stopping() const noexcept { return stopping_; }

  // A response completed: `started` says whether it is in the window.
  void record(Nanos started, Nanos now, uint64_t body_bytes, bool ok) noexcept {
    ++result_.requests_total;
    if (started < plan_.window_begin || started >= plan_.window_end) return;
    result_.latency.record(now - started);
    ++result_.requests;
    result_.body_bytes += body_bytes;
    if (!ok) ++result_.errors.status;
  }
  void count(uint64_t LoadErrors::*kind) noexcept { ++(result_.errors.*kind); }
  void count_reconnect() noexcept { ++result_.reconnects; }
  void count_shortage() noexcept { ++result_.buffer_shortages; }
  void note_in_flight(int delta) noexcept { in_flight_ += delta; }
  // A send was queued for the next enter. A send that completes during that enter's submission
  // posts its CQE at once; the enter's wait asks for one completion more than the sends it carries,
  // so that it sleeps until an answer (or another event) arrives instead of returning for the sends'
  // own CQEs and costing a second enter per request.
  void note_send_queued() noexcept { ++sends_queued_; }
  // Open loop: the time request `number` of the run is due.
  [[nodiscard]] Nanos due_of(uint64_t number) const noexcept {
    return plan_.start + static_cast<Nanos>(static_cast<double>(number) * plan_.interval_ns);
  }
  void wait_for(Nanos due, LoadConnection& connection) { waiting_.push({due, &connection}); }
  // A connect failed before the run: the run fails with this.
  void note_setup_error(std::string message) {
    if (!setup_error_) setup_error_ = std::move(message);
  }

  LoadResult& result() noexcept { return result_; }
  [[nodiscard]] const std::optional<std::string>& error() const noexcept { return setup_error_; }

 private:
  Status set_up();
  void loop();
  void tear_down() noexcept;

  struct Waiting {
    Nanos due;
    LoadConnection* connection;
    bool operator>(const Waiting& other) const noexcept { return due > other.due; }
  };

  const Plan& plan_;
  unsigned thread_index_;
  std::unique_ptr<net::Ring> ring_;
  std::unique_ptr<net::BufferRing> buffers_;
  std::vector<std::unique_ptr<LoadConnection>> connections_;
  std::priority_queue<Waiting, std::vector<Waiting>, std::greater<>> waiting_;
  int in_flight_ = 0;
  unsigned sends_queued_ = 0;  // since the last enter (note_send_queued)
  bool stopping_ = false;
  LoadResult result_;
  std::optional<std::string> setup_error_;
};

}  // namespace ringlab::bench::load_generator
