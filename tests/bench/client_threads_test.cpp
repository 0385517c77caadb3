// Tests for bench/src/run/client_threads.cpp (bench --client-threads): a case run by T copies of its
// strategy, each on a thread of its own, against a real loopback server; the counters summed over the
// client threads; the placement of the threads; and the refusals of the option.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../support/net_loopback_acceptor.hpp"
#include "ringlab/bench/app/cli.hpp"
#include "ringlab/bench/measure/memory_diagnoser.hpp"
#include "ringlab/bench/run/runner.hpp"
#include "short_run.hpp"
#include "ringlab/bench/run/suites.hpp"

namespace rb = ringlab::bench;
namespace rs = ringlab::strategies;

namespace {

constexpr std::size_t kBytesPerOp = 1000;  // what every op of a PingStrategy allocates (and frees)
constexpr uint64_t kConsumed = 42;
constexpr uint64_t kChecksum = 7;

// A server of one-byte pings: each connection on a thread of its own, answering each byte with one,
// counting the pings per connection.
class PingServer {
 public:
  PingServer()
      : acceptor_([this](int fd) {
          const std::lock_guard lock(mutex_);
          const std::size_t index = pings_.size();
          pings_.push_back(std::make_unique<std::atomic<uint64_t>>(0));
          threads_.emplace_back([this, fd, index] { serve(fd, index); });
        }) {}
  ~PingServer() {
    acceptor_.stop();
    for (std::thread& t : threads_) t.join();
  }
  [[nodiscard]] uint16_t port() const { return acceptor_.port(); }
  // Pings answered on each connection so far, in the order they were accepted.
  std::vector<uint64_t> pings() {
    const std::lock_guard lock(mutex_);
    std::vector<uint64_t> out;
    for (const auto& p : pings_) out.push_back(p->load());
    return out;
  }

 private:
  void serve(int fd, std::size_t index) {
    std::atomic<uint64_t>* count = nullptr;
    {
      const std::lock_guard lock(mutex_);
      count = pings_[index].get();
    }
    char byte = 0;
    while (acceptor_.wait_readable(fd) && ::recv(fd, &byte, 1, 0) == 1) {
      if (::send(fd, &byte, 1, MSG_NOSIGNAL) != 1) break;
      count->fetch_add(1);
    }
    ::close(fd);
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<std::atomic<uint64_t>>> pings_;
  std::vector<std::thread> threads_;
  ringlab::testing::LoopbackAcceptor acceptor_;
};

// What each copy of PingStrategy saw, collected at its teardown.
struct CopyRecord {
  std::thread::id setup_thread;
  std::thread::id run_thread;  // of its last run(), checked to be the setup thread's
  bool one_thread = true;      // every run() on the setup thread
  std::vector<int> cpus;       // the thread's affinity at setup
  uint64_t runs = 0;
};
std::mutex g_records_mutex;
std::vector<CopyRecord> g_records;
std::atomic<int> g_made{0};
std::atomic<int> g_fail_copy{-1};  // the copy (by making order) whose 5th run fails; -1: none

// One ping per op over its own connection, and kBytesPerOp allocated and freed.
class PingStrategy final : public rs::Strategy {
 public:
  PingStrategy() : copy_(g_made.fetch_add(1)) {}
  rs::Status setup(const rs::CaseConfig& config) override {
    record_.setup_thread = std::this_thread::get_id();
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0) {
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &set)) record_.cpus.push_back(cpu);
      }
    }
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(config.port);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      return std::unexpected(rs::Error{"connect failed"});
    }
    return {};
  }
  rs::Result<rs::Outcome> run(ringlab::http::Timeline*, rs::Check check) override {
    ++record_.runs;
    record_.run_thread = std::this_thread::get_id();
    if (record_.run_thread != record_.setup_thread) record_.one_thread = false;
    if (copy_ == g_fail_copy.load() && record_.runs == 5) return std::unexpected(rs::Error{"the fifth ping broke"});
    char byte = 'p';
    if (::send(fd_, &byte, 1, MSG_NOSIGNAL) != 1 || ::recv(fd_, &byte, 1, 0) != 1) {
      return std::unexpected(rs::Error{"ping failed"});
    }
    void* block = ::operator new(kBytesPerOp);
    sink_ = block;
    ::operator delete(block);
    return rs::Outcome{.consumed = kConsumed, .checksum = check == rs::Check::verify ? kChecksum : 0};
  }
  void teardown() override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    const std::lock_guard lock(g_records_mutex);
    g_records.push_back(record_);
  }

 private:
  int copy_;
  int fd_ = -1;
  CopyRecord record_;
  void* volatile sink_ = nullptr;  // the allocation is observed, so it is made
};

std::unique_ptr<rs::Strategy> make_ping() { return std::make_unique<PingStrategy>(); }

constexpr rs::Descriptor kPing{.name = "ping", .description = "one byte each way", .mirrors = "-", .make = &make_ping};

struct Run {
  std::vector<rb::CaseResult> results;
  std::vector<CopyRecord> records;
  std::vector<uint64_t> pings;
};

Run run_ping(std::size_t threads, const std::vector<int>& cpus) {
  g_records.clear();
  g_made = 0;
  PingServer server;
  rb::CaseSpec spec;
  spec.strategy = &kPing;
  spec.config.port = server.port();
  spec.client_threads = threads;
  rb::RunnerOptions options = rb::testing::short_run(3);
  rb::RunContext context = rb::testing::cycle_counter_context();
  context.client_cpus = cpus;
  Run out;
  out.results = rb::run_cases(std::span(&spec, 1), options, context);
  out.records = g_records;
  // The server counts a ping after answering it: wait for its count to settle.
  for (int i = 0; i < 200; ++i) {
    out.pings = server.pings();
    uint64_t served = 0;
    uint64_t ran = 0;
    for (uint64_t p : out.pings) served += p;
    for (const CopyRecord& r : out.records) ran += r.runs;
    if (served == ran) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return out;
}

}  // namespace

TEST_CASE("two client threads: two copies, each on its own thread and connection, pinned, counters summed") {
  const Run one = run_ping(1, {});
  REQUIRE(one.results.size() == 1);
  REQUIRE_MESSAGE(one.results[0].status == rb::CaseStatus::ok, one.results[0].reason);
  REQUIRE(one.records.size() == 1);
  // One client thread: the runner's own, as always.
  CHECK(one.records[0].setup_thread == std::this_thread::get_id());
  CHECK(one.results[0].client_threads == 1);

  cpu_set_t mask;
  REQUIRE(::sched_getaffinity(0, sizeof mask, &mask) == 0);
  std::vector<int> mine;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) mine.push_back(cpu);
  }
  const std::vector<int> cpus = rb::client_thread_cpus(mine.front(), mine);
  const Run two = run_ping(2, cpus);
  REQUIRE(two.results.size() == 1);
  const rb::CaseResult& r = two.results[0];
  REQUIRE_MESSAGE(r.status == rb::CaseStatus::ok, r.reason);
  CHECK(r.client_threads == 2);
  CHECK(r.checksum == kChecksum);
  REQUIRE(two.records.size() == 2);
  const CopyRecord& a = two.records[0];
  const CopyRecord& b = two.records[1];
  // Each copy set up, ran and tore down on one thread of its own, neither the runner's.
  CHECK(a.one_thread);
  CHECK(b.one_thread);
  CHECK(a.setup_thread != b.setup_thread);
  CHECK(a.setup_thread != std::this_thread::get_id());
  CHECK(b.setup_thread != std::this_thread::get_id());
  // Thread i on cpus[i % size]: with one CPU both share it, with two each has its own.
  const std::vector<int> first{cpus[0]};
  const std::vector<int> second{cpus[1 % cpus.size()]};
  CHECK(((a.cpus == first && b.cpus == second) || (a.cpus == second && b.cpus == first)));
  // Both ran every op of every iteration: the same count, the server saw each on its own connection.
  CHECK(a.runs == b.runs);
  CHECK(a.runs > r.ops_per_iteration * r.samples_ns.size());
  REQUIRE(two.pings.size() == 2);
  CHECK(two.pings[0] == a.runs);
  CHECK(two.pings[1] == a.runs);
  // An op is one op of each thread: both threads' allocations, per op.
  if (rb::interposition_works()) {
    REQUIRE(r.memory.bytes_per_op.has_value());
    CHECK(*r.memory.bytes_per_op == doctest::Approx(2.0 * kBytesPerOp));
    CHECK(*r.memory.allocs_per_op == doctest::Approx(2.0));
    REQUIRE(one.results[0].memory.bytes_per_op.has_value());
    CHECK(*one.results[0].memory.bytes_per_op == doctest::Approx(1.0 * kBytesPerOp));
  } else {
    MESSAGE("allocation counting is not interposed in this build: the allocation sums are not checked");
  }
  // The client threads' CPU time: something, and the notes say where they ran.
  CHECK(r.cpu.user_ns_per_op + r.cpu.system_ns_per_op > 0);
  CHECK(r.notes.find("2 client threads") != std::string::npos);
}

namespace {

// A strategy that says it runs its work on threads of its own (IoCounters' worker_* fields), each op
// costing them 1 ms of user time, 0.25 ms of system time and 3 page faults: made-up figures, far above
// what the measuring thread spends on an op that does nothing.
class WorkerReportingStrategy final : public rs::Strategy {
 public:
  rs::Status setup(const rs::CaseConfig&) override { return {}; }
  rs::Result<rs::Outcome> run(ringlab::http::Timeline*, rs::Check check) override {
    counters_.worker_user_ns += 1'000'000;
    counters_.worker_system_ns += 250'000;
    counters_.worker_minor_faults += 3;
    return rs::Outcome{.consumed = kConsumed, .checksum = check == rs::Check::verify ? kChecksum : 0};
  }
  [[nodiscard]] rs::IoCounters io_counters() const override { return counters_; }

 private:
  rs::IoCounters counters_;
};

std::unique_ptr<rs::Strategy> make_worker_reporting() { return std::make_unique<WorkerReportingStrategy>(); }

constexpr rs::Descriptor kWorkerReporting{
    .name = "workers", .description = "reports its workers' CPU time", .mirrors = "-", .make = &make_worker_reporting};

rb::CaseResult run_worker_reporting(std::size_t threads) {
  rb::CaseSpec spec;
  spec.strategy = &kWorkerReporting;
  spec.client_threads = threads;
  rb::RunnerOptions options = rb::testing::short_run(3);
  rb::RunContext context = rb::testing::cycle_counter_context();
  const std::vector<rb::CaseResult> results = rb::run_cases(std::span(&spec, 1), options, context);
  REQUIRE(results.size() == 1);
  return results[0];
}

}  // namespace

TEST_CASE("a strategy's own worker threads: their CPU time and page faults are added to the op's") {
  for (const std::size_t threads : {std::size_t{1}, std::size_t{2}}) {
    INFO(threads << " client threads");
    const rb::CaseResult r = run_worker_reporting(threads);
    REQUIRE_MESSAGE(r.status == rb::CaseStatus::ok, r.reason);
    // Per op, each client thread's copy's workers' share (an op is one op of each client thread), plus
    // what the client threads themselves spent, which is little; the verified ops' share is not in it.
    const double n = static_cast<double>(threads);
    CHECK(r.cpu.user_ns_per_op >= n * 1'000'000);
    CHECK(r.cpu.user_ns_per_op < n * 1'000'000 + 500'000);
    CHECK(r.cpu.system_ns_per_op >= n * 250'000);
    CHECK(r.cpu.system_ns_per_op < n * 250'000 + 500'000);
    CHECK(r.memory.minor_faults_per_op >= n * 3);
  }
}

TEST_CASE("a client thread whose op fails fails the case, naming the thread") {
  g_fail_copy = 1;
  const Run run = run_ping(2, {});
  g_fail_copy = -1;
  REQUIRE(run.results.size() == 1);
  CHECK(run.results[0].status == rb::CaseStatus::failed);
  CHECK_MESSAGE(run.results[0].reason.find("client thread 2") != std::string::npos, run.results[0].reason);
  CHECK(run.results[0].reason.find("the fifth ping broke") != std::string::npos);
  CHECK(run.records.size() == 2);  // both copies torn down
}

TEST_CASE("client threads take the client's CPU first, then the others from the next one, wrapping") {
  CHECK(rb::client_thread_cpus(-1, std::vector<int>{0, 1}).empty());
  CHECK(rb::client_thread_cpus(0, std::vector<int>{0, 1}) == std::vector<int>{0, 1});
  CHECK(rb::client_thread_cpus(2, std::vector<int>{0, 1, 2, 3}) == std::vector<int>{2, 3, 0, 1});
  CHECK(rb::client_thread_cpus(3, std::vector<int>{3}) == std::vector<int>{3});
}

TEST_CASE("the case name and the report say how many client threads ran it") {
  rb::CaseSpec spec;
  spec.strategy = &kPing;
  spec.config.count = 10;
  CHECK(rb::case_name(spec) == "ping weather 10");
  spec.config.inflight = 64;
  spec.client_threads = 2;
  CHECK(rb::case_name(spec) == "ping weather 10 x64 t2");
  rb::CaseResult c;
  c.strategy = "ping";
  c.payload = "weather";
  c.size = 10;
  c.inflight = 64;
  c.client_threads = 2;
  CHECK(rb::case_label(c) == "ping weather 10 x64 t2");
  CHECK(rb::requests_per_op(c) == 128);
  c.client_threads = 1;
  CHECK(rb::case_key(c).find("/t") == std::string::npos);  // one thread: the key of old
}

TEST_CASE("--client-threads: 1 by default, refused above --max-client-threads, at 0, and with --counters") {
  const auto parse = [](std::vector<std::string> args) { return rb::parse_command_line(args); };
  const auto plain = parse({"get"});
  REQUIRE(plain.options);
  CHECK(plain.options->plan.cases.client_threads == 1);
  const auto two = parse({"get", "--client-threads", "2", "--max-client-threads", "2"});
  REQUIRE(two.options);
  CHECK(two.options->plan.cases.client_threads == 2);
  const auto above = parse({"get", "--client-threads", "3", "--max-client-threads", "2"});
  CHECK_FALSE(above.options);
  CHECK(above.output.find("above --max-client-threads 2") != std::string::npos);
  const auto beyond_cpus = parse({"get", "--client-threads", std::to_string(rb::default_max_client_threads() + 1)});
  CHECK_FALSE(beyond_cpus.options);
  CHECK_FALSE(parse({"get", "--client-threads", "0"}).options);
  const auto counters = parse({"get", "--client-threads", "2", "--max-client-threads", "2", "--counters"});
  CHECK_FALSE(counters.options);
  CHECK(counters.output.find("--counters") != std::string::npos);
  const auto help = parse({"--help"});
  CHECK(help.output.find("--client-threads") != std::string::npos);
}
