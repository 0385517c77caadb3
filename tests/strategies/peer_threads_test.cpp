// Where the client libraries' own threads run, and whether their CPU is counted. bench pins its measuring
// thread to the client's CPU before any case, and every thread a library starts afterwards inherits that
// mask. Here this process's thread is pinned to one CPU first, as bench's is; then every client library's
// GET row is set up and run against the real server binary, and afterwards every thread of the process
// may run on that CPU only. cpprest, the one library that does its requests on a pool of its own: the
// peer sizes the SDK's pool to the CPUs of the thread that makes the first client (one here, where the
// SDK alone would start 40), says so in its notes, and reports the pool's CPU time (IoCounters' worker_*
// fields), which is more than zero after requests.
#include <doctest/doctest.h>
#include <dirent.h>
#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fixtures.hpp"
#include "ringlab/base/cpus.hpp"

namespace ringlab::strategies::testing {
namespace {

constexpr std::string_view kLibraryPeers[] = {"libcurl", "libcurl_multi", "cpp_httplib", "beast", "cpprest", "curlpp"};
constexpr unsigned kRuns = 20;

// The IDs of this process's threads (/proc/self/task).
std::vector<pid_t> thread_ids() {
  std::vector<pid_t> ids;
  DIR* tasks = ::opendir("/proc/self/task");
  REQUIRE(tasks != nullptr);
  while (const dirent* entry = ::readdir(tasks)) {
    if (entry->d_name[0] != '.') ids.push_back(static_cast<pid_t>(std::stol(entry->d_name)));
  }
  ::closedir(tasks);
  return ids;
}

// The CPUs thread `id` may run on, ascending.
std::vector<int> cpus_of(pid_t id) {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(::sched_getaffinity(id, sizeof set, &set) == 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

TEST_CASE("the client libraries' threads run on the client's CPU, and cpprest's pool reports its CPU time") {
  const std::vector<int> allowed = base::allowed_cpus();
  REQUIRE(!allowed.empty());
  const int client_cpu = allowed.front();
  cpu_set_t pinned;
  CPU_ZERO(&pinned);
  CPU_SET(client_cpu, &pinned);
  REQUIRE(::sched_setaffinity(0, sizeof pinned, &pinned) == 0);

  ServerProcess server;
  CaseConfig config;
  config.port = server.port();
  for (const std::string_view name : kLibraryPeers) {
    CAPTURE(name);
    const Descriptor* descriptor = find(name);
    REQUIRE(descriptor != nullptr);
    const Outcome outcome = run_strategy(*descriptor, config, kRuns);
    REQUIRE_FALSE(outcome.error.has_value());
    REQUIRE_FALSE(outcome.skipped.has_value());
    CHECK(outcome.checksums.size() == kRuns);
    for (const pid_t id : thread_ids()) {
      CAPTURE(id);
      CHECK(cpus_of(id) == std::vector<int>{client_cpu});
    }
    if (name == "cpprest") {
      CHECK(outcome.notes.find("thread pool sized to 1 thread(s), on the client's CPUs") != std::string::npos);
      const uint64_t pool_cpu_ns = outcome.counters.worker_user_ns + outcome.counters.worker_system_ns;
      CHECK(pool_cpu_ns > 0);
    }
  }
}

}  // namespace
}  // namespace ringlab::strategies::testing
