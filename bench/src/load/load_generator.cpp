// run_load: the load generator's threads started and released together, the measured window, and
// the CPU and zero-copy samples around it (load.hpp has the model; load_threads.hpp the threads).
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <fmt/format.h>
#include <fstream>
#include <latch>
#include <memory>
#include <sstream>
#include <thread>

#include "load_threads.hpp"
#include "ringlab/bench/link/link_session.hpp"
#include "ringlab/bench/load/load.hpp"

namespace ringlab::bench {
namespace {

using load_generator::LoadThread;
using load_generator::Nanos;
using load_generator::now_ns;
using load_generator::Plan;

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
