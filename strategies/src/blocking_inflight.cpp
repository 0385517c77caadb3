// blocking_sockets with N requests in flight (peer; the blocking_sockets row's Recipe::make_inflight): what a
// thread-per-connection client does with many requests at once. N = CaseConfig::inflight worker threads,
// started at setup, each with a blocking kept-alive connection of its own: each worker runs the row's
// one-socket strategy (blocking_sockets.cpp on SocketPeer: the same connect, send, recv, SO_RCVTIMEO /
// SO_SNDTIMEO deadlines, presized padded body and reused owning models), set up, run and torn down on that
// worker's thread only (set up as a fresh client's is, build only: setup()'s verified round proves the
// case on every connection). The workers are a base::ThreadCrew, the threads bench's client threads are
// too. One run() is one round: it wakes every worker (the crew's generation counter and condition
// variable), each sends its request, receives and parses its response while the others do theirs, and
// the round ends when all N are done; the consumption fold folds the N workers' folds in connection order
// (common.hpp's fold_connection).
//
// Deadline: every blocking call of a worker is bounded by the case's deadline, as the one-socket peer's
// are, so every worker comes back; run() waits for all N, then reports. A stalled server fails the round
// within one deadline (the workers wait at once), naming the first connection that failed.
//
// CPU time: the workers' CPU is not the measuring thread's, so each worker takes getrusage(RUSAGE_THREAD)
// after each of its jobs and reports its cumulative user and system time and minor page faults through
// IoCounters' worker_* fields; bench adds their change over the timed ops to the op's. The reading comes
// after the worker's request, so what it spends after it (telling the round it is done, going back to
// wait) is counted with its next request. Allocations: bench counts the measuring thread's only, so a
// worker's are not in Allocated (presized: none in steady state). System calls: the workers' socket calls
// (as the one-socket peer counts them); the futex calls that wake the workers and wait for them, and each
// worker's getrusage, are not counted.
//
// Memory (HeldMemory): per connection what the one-socket peer keeps (its receiver's buffer, the presized
// body buffer, the models); each worker's thread stack is not in it (RSS/conn sees what it touched).
//
// Errors name the case and the connection, then the one-socket peer's text without its own label:
// "blocking_sockets weather 10 x64: connection 3 of 64: recv 127.0.0.1:8080: Connection timed out
// (ETIMEDOUT)". After an error every connection is closed (each by its worker) and the next
// run() opens them all again; nothing is retried.
//
// Timeline (when run() is given one and the case a tick source): the round's start, connected and
// request_sent (the last worker's), first_byte and head_parsed (the first worker's), body_done (the last
// body complete) and deserialized (when every worker is done). The workers' phases overlap.
//
// Threads and lifetime: run(), setup(), teardown() and the counters are called from one thread, the
// round's; the workers touch their own connection only, and hand their results over under the crew's
// mutex (each reports done under it). teardown() (and the destructor) tears down every worker's
// connection on its thread, then joins the threads.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "ringlab/base/thread_crew.hpp"
#include "socket_peer.hpp"

namespace ringlab::strategies::detail {
namespace {

// What a round asks of every worker.
enum class Job { setup, consume, verify, drop, teardown };

// One worker: its connection's strategy, and what its last job left for the round's thread.
struct Worker {
  std::unique_ptr<Strategy> connection;  // the one-socket peer; used by this worker's thread only
  http::Timeline stamps;                 // its share of a timed round
  std::optional<Error> error;            // the last job's
  Outcome outcome;
  IoCounters counters;  // the connection's, with this thread's CPU time and page faults (worker_*)
  HeldMemory held;
};

class BlockingInflight final : public CaseStrategy {
 public:
  explicit BlockingInflight(const Recipe& recipe) : CaseStrategy(recipe.name), recipe_(&recipe) {}
  ~BlockingInflight() override { teardown(); }

  // The workers' counters summed, with those of workers an earlier setup() ended.
  [[nodiscard]] IoCounters io_counters() const override {
    IoCounters sum = ended_;
    for (std::size_t i = 0; i < count_; ++i) sum.add(workers_[i].counters);
    sum.counts_copies = true;  // each worker's connection is the one-socket peer, which counts them
    return sum;
  }
  [[nodiscard]] HeldMemory held_memory() const override {
    HeldMemory held{.connections = count_};
    for (std::size_t i = 0; i < count_; ++i) {
      held.body_bytes += workers_[i].held.body_bytes;
      held.model_bytes += workers_[i].held.model_bytes;
      held.receive_bytes += workers_[i].held.receive_bytes;
    }
    return held;
  }
  void drop_connection() override {
    if (crew_) execute(Job::drop);
  }
  [[nodiscard]] std::string notes() const override {
    return std::to_string(count_) +
           " worker threads, one blocking connection each; CPU/req and page faults include the workers' "
           "(getrusage RUSAGE_THREAD on each, after each request); Allocated counts the measuring thread's "
           "allocations only, not the workers'; Syscalls/req counts the workers' socket calls, not the futex "
           "calls that wake them and wait for them";
  }

 private:
  Status open_case() override;
  Result<Outcome> run_case(http::Timeline* timeline, Check check) override;
  void close_case() override;

  // Runs `job` on every worker, each on its thread; returns when all are done.
  void execute(Job job) {
    crew_->on_every_thread([this, job](std::size_t index) { do_job(workers_[index], job); });
  }
  void do_job(Worker& worker, Job job);
  // The first worker's error of the last job, as the round's ("connection 3 of 64: ..."), or nothing.
  [[nodiscard]] std::optional<std::unexpected<Error>> first_error() const;
  // Stops and joins the threads (each worker's connection torn down first), keeping their counters.
  void stop_workers() noexcept;

  const Recipe* recipe_;
  CaseConfig one_;         // the workers' case: one request in flight each
  std::string one_label_;  // the label the workers' errors start with
  std::size_t count_ = 0;  // N: workers, connections, requests in flight
  std::unique_ptr<Worker[]> workers_;
  std::unique_ptr<base::ThreadCrew> crew_;  // thread i is worker i's
  bool stamping_ = false;  // the round's runs stamp their timelines (set before the crew is given them)
  IoCounters ended_;  // the counters of the workers earlier setups ended
};

Status BlockingInflight::open_case() {
  stop_workers();  // a second setup() starts over
  if (config().inflight == 0) return fail(label(), "no request in flight (CaseConfig::inflight is 0)");
  one_ = config();
  one_.inflight = 1;
  // Build only, as a fresh client's setup does (CaseStrategy): the round's own verified run, which
  // setup() makes next, proves the case on every connection, and a first round that fails leaves the
  // workers set up, so that the next run() tries again, as after any error.
  one_.client = Client::fresh;
  one_label_ = case_label(recipe_->name, one_);

  workers_ = std::make_unique<Worker[]>(config().inflight);
  for (std::size_t i = 0; i < config().inflight; ++i) workers_[i].connection = make_blocking_sockets(*recipe_);
  count_ = config().inflight;
  try {
    crew_ = std::make_unique<base::ThreadCrew>(count_);
  } catch (const std::system_error& error) {
    stop_workers();
    return fail(label(), "starting " + std::to_string(config().inflight) + " worker threads: " + error.what());
  }
  execute(Job::setup);
  if (auto failed = first_error()) return *failed;
  return {};
}

Result<Outcome> BlockingInflight::run_case(http::Timeline* timeline, Check check) {
  const http::TickSource ticks = config().ticks;
  const bool stamping = timeline != nullptr && ticks != nullptr;
  if (stamping) timeline->start = ticks();
  stamping_ = stamping;
  execute(check == Check::verify ? Job::verify : Job::consume);
  if (auto failed = first_error()) [[unlikely]] {
    execute(Job::drop);  // every connection closed: the next round opens them all again
    return *failed;
  }
  uint64_t consumed = 0;
  for (std::size_t i = 0; i < count_; ++i) consumed = fold_connection(consumed, workers_[i].outcome.consumed);
  if (stamping) {
    stamp_round(*timeline, count_, [this](std::size_t i) -> const http::Timeline& { return workers_[i].stamps; });
    for (std::size_t i = 0; i < count_; ++i) {
      timeline->connected = std::max(timeline->connected, workers_[i].stamps.connected);
      timeline->request_sent = std::max(timeline->request_sent, workers_[i].stamps.request_sent);
    }
    timeline->deserialized = ticks();
  }
  // Each worker's connection checked its own records against the generator's.
  return Outcome{consumed, check == Check::verify ? expected() : 0};
}

void BlockingInflight::close_case() { stop_workers(); }

void BlockingInflight::do_job(Worker& worker, Job job) {
  worker.error.reset();
  switch (job) {
    case Job::setup:
      if (auto set = worker.connection->setup(one_); !set) worker.error = std::move(set.error());
      break;
    case Job::consume:
    case Job::verify: {
      worker.stamps = {};
      auto ran = worker.connection->run(stamping_ ? &worker.stamps : nullptr,
                                        job == Job::verify ? Check::verify : Check::consume);
      if (ran) [[likely]] {
        worker.outcome = *ran;
      } else {
        worker.error = std::move(ran.error());
      }
      break;
    }
    case Job::drop: worker.connection->drop_connection(); break;
    case Job::teardown: worker.connection->teardown(); break;
  }
  // The counters of the connection and of this thread, for the round's thread to read once all are done.
  worker.counters = worker.connection->io_counters();
  take_thread_usage(worker.counters);
  worker.held = worker.connection->held_memory();
}

std::optional<std::unexpected<Error>> BlockingInflight::first_error() const {
  for (std::size_t i = 0; i < count_; ++i) {
    if (!workers_[i].error) continue;
    // The one-socket peer's text starts with its own label: the round's and the connection take its place.
    return fail_on_connection(label(), i, count_, without_label(workers_[i].error->message, one_label_));
  }
  return std::nullopt;
}

void BlockingInflight::stop_workers() noexcept {
  if (crew_) {
    execute(Job::teardown);
    crew_.reset();  // joins the threads
  }
  for (std::size_t i = 0; i < count_; ++i) ended_.add(workers_[i].counters);
  count_ = 0;
  workers_.reset();
}

}  // namespace

std::unique_ptr<Strategy> make_blocking_sockets_inflight(const Recipe& recipe) {
  return std::make_unique<BlockingInflight>(recipe);
}

}  // namespace ringlab::strategies::detail
