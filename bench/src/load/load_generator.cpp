// The load generator's threads and connections (load.hpp has the model).
#include <liburing.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <fmt/format.h>
#include <fstream>
#include <latch>
#include <memory>
#include <queue>
#include <sstream>
#include <thread>

#include "ringlab/bench/link/link_session.hpp"
#include "ringlab/bench/load/load.hpp"
#include "ringlab/bench/process/server_process.hpp"
#include "ringlab/http/parser.hpp"
#include "ringlab/net/buffer_ring.hpp"
#include "ringlab/net/endpoint.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/net/socket.hpp"

namespace ringlab::bench {
namespace {

using Nanos = uint64_t;

Nanos now_ns() noexcept {
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

class LoadConnection final : private http::ResponseHandler {
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
  http::Status on_head(const http::ResponseHead& head) override;
  http::Status on_body(std::string_view bytes) override;
  http::Status on_complete() override;

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
  http::ResponseParser parser_;
  Op<LoadConnection, &LoadConnection::on_connected> connect_op_{*this};
  Op<LoadConnection, &LoadConnection::on_recv> recv_op_{*this};
  Op<LoadConnection, &LoadConnection::on_sent> send_op_{*this};
  bool connecting_ = false;
  bool connected_ = false;
  bool recv_armed_ = false;
  bool send_in_flight_ = false;
  bool in_flight_ = false;   // a request was sent (or is being sent) and its response is not complete
  bool complete_ = false;    // on_complete ran during the feed in progress
  bool closing_ = false;     // shut down after a failure: reconnect once the recv has ended
  bool stopped_ = false;     // the run is over
  bool keep_alive_ = true;
  bool waiting_ = false;     // open loop: this connection's next request is in the thread's queue
  bool due_pending_ = false; // open loop: a request came due while the connection was being reopened
  Nanos pending_due_ = 0;
  int status_ = 0;
  std::size_t sent_ = 0;     // bytes of the request in flight already sent
  Nanos started_ = 0;        // due time (open loop) or send time (closed loop) of the request in flight
  Nanos sent_at_ = 0;        // when the request in flight was handed to the kernel (its deadline's start)
  uint64_t body_bytes_ = 0;
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

// --- LoadConnection ---

void LoadConnection::connect() {
  auto socket = net::tcp_socket_for(thread_.plan().peer);
  if (!socket) {
    if (thread_.plan().start == 0) thread_.note_setup_error(socket.error().message());
    thread_.count(&LoadErrors::connect);
    return;
  }
  fd_ = socket->release();
  parser_.reset();
  connecting_ = true;
  const net::Endpoint& peer = thread_.plan().peer;
  thread_.ring().prep_connect(fd_, peer.addr(), peer.length, connect_op_);
  thread_.ring().link_timeout(thread_.plan().spec->timeout);
}

void LoadConnection::on_connected(int res, uint32_t) {
  connecting_ = false;
  if (res < 0) {
    // Before the run, a connect that fails is the run's error; during it, a count.
    if (thread_.plan().start == 0) {
      thread_.note_setup_error(net::Error{"connect", -res, thread_.plan().peer.to_string()}.message());
    }
    thread_.count(&LoadErrors::connect);
    close_fd();
    return;  // stays closed
  }
  connected_ = true;
  arm_recv();
  // A reconnect during the run resumes this connection's requests: first the one that came due
  // while it was down (its latency includes the reconnect), then the schedule.
  if (thread_.plan().start == 0 || thread_.stopping()) return;
  if (due_pending_) {
    due_pending_ = false;
    send_due(pending_due_, now_ns());
  } else {
    schedule_next(now_ns());
  }
}

void LoadConnection::arm_recv() {
  recv_armed_ = true;
  thread_.ring().prep_recv_multishot(fd_, thread_.buffers(), recv_op_);
}

void LoadConnection::begin(Nanos now) {
  if (!connected_) return;
  schedule_next(now);
}

void LoadConnection::schedule_next(Nanos now) {
  if (stopped_ || in_flight_ || !connected_ || closing_ || waiting_ || due_pending_) return;
  if (!thread_.open_loop()) {
    if (now < thread_.plan().window_end) {
      started_ = now;
      send_request(now);
    }
    return;
  }
  const Plan& plan = thread_.plan();
  const uint64_t number = index_ + sequence_ * plan.spec->connections;
  const Nanos due = thread_.due_of(number);
  if (due >= plan.window_end) return;
  ++sequence_;
  if (due <= now) {
    send_due(due, now);
  } else {
    waiting_ = true;
    thread_.wait_for(due, *this);
  }
}

void LoadConnection::send_due(Nanos due, Nanos now) {
  waiting_ = false;
  if (stopped_ || in_flight_) return;
  if (!connected_ || closing_) {
    // Being reopened: the request goes out once connected (a connection that cannot be reopened
    // has counted its connect error).
    due_pending_ = true;
    pending_due_ = due;
    return;
  }
  started_ = due;
  send_request(now);
}

void LoadConnection::send_request(Nanos now) {
  in_flight_ = true;
  sent_at_ = now;
  thread_.note_in_flight(1);
  status_ = 0;
  body_bytes_ = 0;
  keep_alive_ = true;
  sent_ = 0;
  submit_send();
}

void LoadConnection::submit_send() {
  const std::string& request = thread_.plan().request;
  send_in_flight_ = true;
  thread_.ring().prep_send(fd_, std::span<const char>(request).subspan(sent_), send_op_);
  thread_.note_send_queued();
}

void LoadConnection::on_sent(int res, uint32_t) {
  send_in_flight_ = false;
  if (closing_) {
    close_when_quiet();
    return;
  }
  if (stopped_) return;
  if (res < 0) {
    fail(&LoadErrors::send);
    return;
  }
  sent_ += static_cast<std::size_t>(res);
  if (sent_ < thread_.plan().request.size()) submit_send();
}

void LoadConnection::on_recv(int res, uint32_t flags) {
  const bool more = (flags & IORING_CQE_F_MORE) != 0;
  if (!more) recv_armed_ = false;
  if (res > 0 && (flags & IORING_CQE_F_BUFFER) != 0) {
    const uint16_t bid = net::BufferRing::buffer_id(flags);
    const std::span<char> buffer = thread_.buffers().buffer(bid);
    if (!closing_ && !stopped_) consume(std::string_view(buffer.data(), static_cast<std::size_t>(res)), now_ns());
    // The parser keeps an incomplete head as views into what it was fed: copy it out first.
    if (!closing_ && !stopped_ && parser_.in_message()) {
      if (auto detached = parser_.detach(); !detached) fail(&LoadErrors::malformed);
    }
    thread_.buffers().recycle(bid);
  } else if (res == 0) {
    if (!closing_ && !stopped_) {
      // The server closed: an error when a request was waiting for its answer.
      fail(in_flight_ ? &LoadErrors::closed : nullptr);
    }
  } else if (res == -ENOBUFS) {
    thread_.count_shortage();
  } else if (res < 0 && !closing_ && !stopped_) {
    fail(&LoadErrors::receive);
  }
  if (recv_armed_) return;
  if (closing_) {
    close_when_quiet();
    return;
  }
  if (!stopped_ && connected_) arm_recv();
}

void LoadConnection::consume(std::string_view bytes, Nanos now) {
  while (!bytes.empty()) {
    if (!in_flight_) {
      fail(&LoadErrors::malformed);
      return;
    }
    auto used = parser_.feed(bytes, *this);
    if (!used) {
      fail(&LoadErrors::malformed);
      return;
    }
    bytes.remove_prefix(*used);
    if (complete_) {
      complete_ = false;
      response_done(now);
      if (closing_) return;
    }
  }
}

http::Status LoadConnection::on_head(const http::ResponseHead& head) {
  status_ = head.status;
  keep_alive_ = head.keep_alive;
  return {};
}

http::Status LoadConnection::on_body(std::string_view bytes) {
  body_bytes_ += bytes.size();
  return {};
}

http::Status LoadConnection::on_complete() {
  // An interim (1xx) response is not the answer: the final one follows on the same request.
  if (status_ >= 100 && status_ < 200) return {};
  complete_ = true;
  return {};
}

void LoadConnection::response_done(Nanos now) {
  in_flight_ = false;
  thread_.note_in_flight(-1);
  thread_.record(started_, now, body_bytes_, status_ >= 200 && status_ < 300);
  if (!keep_alive_) {
    // The server ends the connection after this answer: open a new one (counted, not an error).
    fail(nullptr);
    return;
  }
  schedule_next(now);
}

void LoadConnection::time_out_if_sent_before(Nanos sent_before) {
  // fail() clears in_flight_, so a connection being closed is never timed out twice.
  if (in_flight_ && sent_at_ < sent_before) fail(&LoadErrors::timeout);
}

void LoadConnection::fail(uint64_t LoadErrors::*kind) {
  if (kind != nullptr) thread_.count(kind);
  if (in_flight_) {
    in_flight_ = false;
    thread_.note_in_flight(-1);
  }
  connected_ = false;
  closing_ = true;
  ::shutdown(fd_, SHUT_RDWR);
  close_when_quiet();
}

void LoadConnection::close_when_quiet() {
  if (!closing_ || recv_armed_ || send_in_flight_) return;
  closing_ = false;
  close_fd();
  if (stopped_ || thread_.stopping()) return;
  thread_.count_reconnect();
  connect();
}

void LoadConnection::shut_down() noexcept {
  stopped_ = true;
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void LoadConnection::close_fd() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  connected_ = false;
}

// --- LoadThread ---

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

struct CpuSample {
  std::optional<double> server;
  std::optional<double> server_cpus_busy;  // seconds
  double client = 0;
};

// Busy seconds of `cpus` since boot from /proc/stat ("cpuN user nice system idle iowait irq
// softirq steal ..." in clock ticks): everything but idle, iowait and steal (the hypervisor's).
std::optional<double> cpus_busy_seconds(const std::vector<int>& cpus) {
  if (cpus.empty()) return std::nullopt;
  std::ifstream in("/proc/stat");
  std::string line;
  uint64_t ticks = 0;
  std::size_t found = 0;
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(3));
    int cpu = -1;
    uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
    if (!(fields >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq)) return std::nullopt;
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) continue;
    ticks += user + nice + system + irq + softirq;
    ++found;
  }
  if (found != cpus.size()) return std::nullopt;  // a CPU that is not there (offline)
  return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// The server's zero-copy send counts from its GET /stats; empty when it cannot be read.
struct ZeroCopySample {
  uint64_t sent = 0;
  uint64_t copied = 0;
};

std::optional<ZeroCopySample> sample_zero_copy(const LoadSpec& spec) {
  if (!spec.server_stats) return std::nullopt;
  auto stats = fetch_server_json(spec.host, spec.port, "/stats",
                                 std::chrono::duration_cast<std::chrono::milliseconds>(spec.timeout));
  if (!stats) return std::nullopt;
  const auto count = [&](const char* name) -> std::optional<uint64_t> {
    const auto it = stats->find(name);
    if (it == stats->end()) return std::nullopt;
    uint64_t value = 0;
    const char* end = it->second.data() + it->second.size();
    const auto [at, ec] = std::from_chars(it->second.data(), end, value);
    if (ec != std::errc{} || at != end) return std::nullopt;
    return value;
  };
  const auto sent = count("zc_sends");
  const auto copied = count("zc_copied");
  if (!sent || !copied) return std::nullopt;
  return ZeroCopySample{*sent, *copied};
}

double self_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

CpuSample sample_cpu(pid_t server, const std::vector<int>& server_cpus) {
  CpuSample sample;
  sample.client = self_cpu_seconds();
  if (server > 0) {
    if (auto seconds = process_cpu_seconds(server)) sample.server = *seconds;
  }
  sample.server_cpus_busy = cpus_busy_seconds(server_cpus);
  return sample;
}

void sleep_until_ns(Nanos when, const volatile std::sig_atomic_t* cancel) {
  for (;;) {
    const Nanos now = now_ns();
    if (now >= when || (cancel != nullptr && *cancel != 0)) return;
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<Nanos>(when - now, 50'000'000)));
  }
}

}  // namespace

Result<double> process_cpu_seconds(pid_t pid) {
  const std::string path = fmt::format("/proc/{}/stat", pid);
  std::ifstream in(path);
  std::string stat;
  if (!in || !std::getline(in, stat)) return fail("read " + path + ": no such process");
  // "PID (name) S ppid ...": fields after the name; utime and stime are fields 14 and 15.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return fail(path + ": unexpected format");
  std::string_view rest = std::string_view(stat).substr(close + 2);
  uint64_t values[2] = {0, 0};
  for (int field = 3, taken = 0; field <= 15 && !rest.empty(); ++field) {
    const std::size_t end = rest.find(' ');
    const std::string_view value = rest.substr(0, end);
    if (field >= 14) values[taken++] = std::strtoull(std::string(value).c_str(), nullptr, 10);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  }
  return static_cast<double>(values[0] + values[1]) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

Result<LoadResult> run_load(const LoadSpec& spec, const volatile std::sig_atomic_t* cancel) {
  if (spec.connections == 0) return fail("load: --connections must be at least 1");
  if (spec.threads == 0) return fail("load: --threads must be at least 1");
  if (spec.threads > spec.connections) {
    return fail(fmt::format("load: {} threads for {} connections: every thread needs one", spec.threads,
                            spec.connections));
  }
  if (spec.recv_buffers == 0 || spec.recv_buffers > 32768 || !std::has_single_bit(spec.recv_buffers)) {
    return fail(fmt::format("load: --recv-buffers {}: a power of two from 1 to 32768", spec.recv_buffers));
  }
  if (spec.recv_buffer_bytes < 64) return fail("load: --recv-buffer-bytes must be at least 64");
  if (spec.rate < 0) return fail("load: --rate must not be negative");
  if (spec.duration <= std::chrono::nanoseconds::zero()) return fail("load: --duration must be positive");
  auto peer = net::Endpoint::parse(spec.host, spec.port);
  if (!peer) return fail("load: " + peer.error().message());

  Plan plan;
  plan.spec = &spec;
  plan.peer = *peer;
  plan.cancel = cancel;
  const std::string authority =
      peer->family() == AF_INET6 ? fmt::format("[{}]:{}", spec.host, spec.port) : fmt::format("{}:{}", spec.host, spec.port);
  plan.request = fmt::format("GET {} HTTP/1.1\r\nHost: {}\r\n\r\n",
                             spec.target, authority);
  plan.interval_ns = spec.rate > 0 ? 1e9 / spec.rate : 0;

  std::vector<std::unique_ptr<LoadThread>> threads;
  for (unsigned i = 0; i < spec.threads; ++i) threads.push_back(std::make_unique<LoadThread>(plan, i));
  std::latch ready(static_cast<std::ptrdiff_t>(spec.threads));
  std::latch go(1);
  std::vector<std::jthread> running;
  for (auto& thread : threads) {
    running.emplace_back([&ready, &go, t = thread.get()] { t->run(ready, go); });
  }
  ready.wait();
  std::optional<std::string> setup_error;
  for (auto& thread : threads) {
    if (thread->error() && !setup_error) setup_error = *thread->error();
  }
  if (!setup_error) {
    // A little ahead, so that every thread is waiting on its clock, not still waking up.
    plan.start = now_ns() + 1'000'000;
    plan.window_begin = plan.start + static_cast<Nanos>(spec.warmup.count());
    plan.window_end = plan.window_begin + static_cast<Nanos>(spec.duration.count());
    plan.drain_end = plan.window_end + static_cast<Nanos>(spec.timeout.count());
  }
  go.count_down();
  LoadResult result;
  CpuSample before;
  CpuSample after;
  std::optional<ZeroCopySample> zero_copy_before;
  std::optional<ZeroCopySample> zero_copy_after;
  if (!setup_error) {
    sleep_until_ns(plan.window_begin, cancel);
    // The /stats readings lie outside the CPU samples: their own requests cost neither side's CPU
    // per request, and they add one request each to the server's counts (not a zero-copy send:
    // their bodies are small).
    zero_copy_before = sample_zero_copy(spec);
    before = sample_cpu(spec.server_pid, spec.server_cpus);
    sleep_until_ns(plan.window_end, cancel);
    after = sample_cpu(spec.server_pid, spec.server_cpus);
    zero_copy_after = sample_zero_copy(spec);
  }
  running.clear();  // joins
  if (setup_error) return fail(*setup_error);
  for (auto& thread : threads) {
    LoadResult& part = thread->result();
    if (thread->error()) return fail(*thread->error());
    result.latency.merge(part.latency);
    result.requests += part.requests;
    result.body_bytes += part.body_bytes;
    result.reconnects += part.reconnects;
    result.buffer_shortages += part.buffer_shortages;
    result.requests_total += part.requests_total;
    result.enters += part.enters;
    result.interrupted = result.interrupted || part.interrupted;
    result.errors += part.errors;
  }
  result.seconds = std::chrono::duration<double>(spec.duration).count();
  result.requests_per_second = static_cast<double>(result.requests) / result.seconds;
  if (result.requests > 0) {
    const double per = 1e6 / static_cast<double>(result.requests);
    result.client_cpu_us_per_request = (after.client - before.client) * per;
    if (before.server && after.server) result.server_cpu_us_per_request = (*after.server - *before.server) * per;
    if (before.server_cpus_busy && after.server_cpus_busy) {
      result.server_cpus_busy_us_per_request = (*after.server_cpus_busy - *before.server_cpus_busy) * per;
    }
    // Counts that went down came from another server (restarted on the same port): none then.
    if (zero_copy_before && zero_copy_after && zero_copy_after->sent >= zero_copy_before->sent &&
        zero_copy_after->copied >= zero_copy_before->copied) {
      result.server_zc_sends_per_request = static_cast<double>(zero_copy_after->sent - zero_copy_before->sent) * per / 1e6;
      result.server_zc_copied_per_request =
          static_cast<double>(zero_copy_after->copied - zero_copy_before->copied) * per / 1e6;
    }
  }
  return result;
}

}  // namespace ringlab::bench
