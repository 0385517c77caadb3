#include "ringlab/bench/measure/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <utility>

#include "ringlab/bench/measure/cycle_counter.hpp"
#include "ringlab/json/kernel.hpp"
#include "text_lines.hpp"

// Versions known at configure time (bench/CMakeLists.txt); "n/a" when CMake did not say.
#ifndef RINGLAB_LIBURING_VERSION
#define RINGLAB_LIBURING_VERSION "n/a"
#endif
#ifndef RINGLAB_SIMDJSON_VERSION
#define RINGLAB_SIMDJSON_VERSION "n/a"
#endif
#ifndef RINGLAB_LLHTTP_VERSION
#define RINGLAB_LLHTTP_VERSION "n/a"
#endif
#ifndef RINGLAB_BUILD_TYPE
#define RINGLAB_BUILD_TYPE "n/a"
#endif

// Which source the binary was built from: generated at build time (bench/CMakeLists.txt). A build
// without that step (the header absent) says "unknown" rather than failing.
#if __has_include("ringlab_build_info.hpp")
#include "ringlab_build_info.hpp"
#endif
#ifndef RINGLAB_PROJECT_VERSION
#define RINGLAB_PROJECT_VERSION "n/a"
#endif
#ifndef RINGLAB_GIT_COMMIT
#define RINGLAB_GIT_COMMIT "unknown"
#endif
#ifndef RINGLAB_GIT_DIRTY
#define RINGLAB_GIT_DIRTY -1
#endif
#ifndef RINGLAB_COMPILER_FLAGS
#define RINGLAB_COMPILER_FLAGS "n/a"
#endif

namespace ringlab::bench {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Value of the first "key : value" line whose key is `key`.
std::string_view cpuinfo_value(std::string_view text, std::string_view key) {
  std::string_view line;
  while (next_line(text, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (trim(line.substr(0, colon)) == key) return trim(line.substr(colon + 1));
  }
  return {};
}

std::string or_na(std::string_view s) { return s.empty() ? std::string("n/a") : std::string(s); }

bool sanitized() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#else
  return false;
#endif
}

}  // namespace

std::string cpu_model_from_cpuinfo(std::string_view cpuinfo) {
  for (std::string_view key : {"model name", "Hardware", "Model", "CPU part"}) {
    if (auto v = cpuinfo_value(cpuinfo, key); !v.empty()) return std::string(v);
  }
  return "n/a";
}

std::string pretty_name_from_os_release(std::string_view text) {
  std::string_view line;
  while (next_line(text, line)) {
    if (!line.starts_with("PRETTY_NAME=")) continue;
    line.remove_prefix(12);
    line = trim(line);
    if (line.size() >= 2 && (line.front() == '"' || line.front() == '\'') && line.back() == line.front()) {
      line = line.substr(1, line.size() - 2);
    }
    return or_na(line);
  }
  return "n/a";
}

std::string describe_features(const net::RingFeatures& f) {
  // Each feature by the name of its field, in the field order.
  using F = net::RingFeatures;
  constexpr std::pair<bool F::*, std::string_view> kNamed[] = {
      {&F::single_issuer, "single_issuer"},   {&F::defer_taskrun, "defer_taskrun"},
      {&F::coop_taskrun, "coop_taskrun"},     {&F::ext_arg, "ext_arg"},
      {&F::send_zc, "send_zc"},               {&F::send_zc_report_usage, "send_zc_report_usage"},
      {&F::recv_multishot, "recv_multishot"}, {&F::accept_multishot, "accept_multishot"},
      {&F::provided_buffer_ring, "provided_buffer_ring"}, {&F::fixed_buffers, "fixed_buffers"},
      {&F::recv_bundle, "recv_bundle"},       {&F::provided_buffer_ring_incremental, "provided_buffer_ring_incremental"},
  };
  std::string out;
  for (const auto& [field, name] : kNamed) {
    if (!(f.*field)) continue;
    if (!out.empty()) out += ' ';
    out += name;
  }
  return out.empty() ? "none" : out;
}

std::optional<LoadAverage> load_average_from(std::string_view loadavg) {
  // "0.52 0.40 0.31 1/123 4567": three decimals, then what this does not need.
  LoadAverage load;
  double* const fields[] = {&load.one, &load.five, &load.fifteen};
  std::size_t pos = 0;
  for (double* field : fields) {
    while (pos < loadavg.size() && loadavg[pos] == ' ') ++pos;
    const std::size_t end = std::min(loadavg.find(' ', pos), loadavg.size());
    if (end == pos) return std::nullopt;
    const std::string_view text = loadavg.substr(pos, end - pos);
    const auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), *field);
    if (ec != std::errc{} || stop != text.data() + text.size()) return std::nullopt;
    pos = end;
  }
  return load;
}

std::optional<LoadAverage> read_load_average() { return load_average_from(slurp("/proc/loadavg")); }

std::string version_text() {
  std::string text = fmt::format("ringlab {} (commit {}", RINGLAB_PROJECT_VERSION, RINGLAB_GIT_COMMIT);
  if (RINGLAB_GIT_DIRTY == 1) text += ", uncommitted changes";
  text += ")";
  return text;
}

std::string simdjson_kernel() {
  return fmt::format("{} (RINGLAB_SIMD={})", json::compiled_kernel(), json::simd_option());
}

Environment gather_environment(const EnvironmentInputs& inputs) {
  Environment e;
  {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    e.timestamp = text;
  }
  e.cpu = cpu_model_from_cpuinfo(slurp("/proc/cpuinfo"));
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  e.cores = cores > 0 ? static_cast<unsigned>(cores) : 0;
  utsname uts{};
  if (uname(&uts) == 0) {
    e.kernel = uts.release;
  } else {
    e.kernel = "n/a";
  }
  e.os = pretty_name_from_os_release(slurp("/etc/os-release"));
  e.io_uring_features = inputs.io_uring_features;
  const int cpu = inputs.client_cpu >= 0 ? inputs.client_cpu : 0;
  const std::string governor = std::string(trim(slurp(fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_governor", cpu))));
  e.governor = governor.empty() ? "n/a (no cpufreq: a VM or a fixed clock)" : governor;
  e.perf_event_paranoid = or_na(trim(slurp("/proc/sys/kernel/perf_event_paranoid")));
#if defined(__clang__)
  e.compiler = "clang++ " __clang_version__;
#elif defined(__GNUC__)
  e.compiler = "g++ " __VERSION__;
#else
  e.compiler = "n/a";
#endif
  e.build_type = RINGLAB_BUILD_TYPE;
  e.version = RINGLAB_PROJECT_VERSION;
  e.git_commit = RINGLAB_GIT_COMMIT;
  if (RINGLAB_GIT_DIRTY >= 0) e.git_dirty = RINGLAB_GIT_DIRTY == 1;
  e.compiler_flags = RINGLAB_COMPILER_FLAGS;
  e.load_average_start = read_load_average();
  if (sanitized()) e.build_type += " +asan+ubsan";
  e.liburing_version = RINGLAB_LIBURING_VERSION;
  e.simdjson_version = RINGLAB_SIMDJSON_VERSION;
  e.llhttp_version = RINGLAB_LLHTTP_VERSION;
  e.simdjson_kernel = simdjson_kernel();
  e.allocator = inputs.allocator.empty() ? "n/a" : inputs.allocator;
  const TickClock& clock = tick_clock();
  e.tick_source = clock.source;
  e.tsc_hz = clock.hz;
  e.tsc_hz_source = clock.hz_source;
  e.timer_overhead_ns = clock.overhead_ns;
  e.timer_resolution_ns = clock.resolution_ns;
  e.client_cpu = inputs.client_cpu;
  e.server_cpu = inputs.server_cpu;
  e.server = inputs.server;
  e.warnings = clock.warnings;
  if (e.build_type.find("Release") == std::string::npos) {
    e.warnings.push_back("build type " + e.build_type + ": optimisations off or reduced, numbers are not representative");
  }
  if (sanitized()) e.warnings.push_back("sanitizers on: every allocation and memory access is instrumented");
  if (!governor.empty() && governor != "performance") {
    e.warnings.push_back("CPU governor '" + governor + "': frequency scaling adds noise (set 'performance')");
  }
  if (inputs.shared_cpu) {
    e.warnings.push_back("client and server may share a CPU: the server's work can be in the client's time");
  }
  return e;
}

}  // namespace ringlab::bench
