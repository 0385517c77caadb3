#include "ringlab/server/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <utility>
#include <vector>

#include "ringlab/base/cpus.hpp"

namespace ringlab::server {
namespace {

// The value after "key:" or "key=" on the first line that starts with key; "" if none.
std::string first_value(const char* path, std::string_view key, char separator) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with(key)) continue;
    const std::size_t at = line.find(separator);
    if (at == std::string::npos) continue;
    std::string value = line.substr(line.find_first_not_of(" \t", at + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    return value;
  }
  return {};
}

std::string escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out;
}

// "1,0": the CPUs the request workers may run on, each once: those they are pinned to (--cpu), in
// worker order, or else the CPUs this process may use (an affinity mask set from outside, such as
// taskset's, is inherited by every thread). The built-in upstream's thread is never pinned.
std::string worker_cpus_text(const ServerOptions& options) {
  std::vector<int> cpus;
  if (options.cpu >= 0) {
    for (unsigned i = 0; i < options.threads; ++i) {
      const int cpu = worker_cpu(options, i);
      if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) cpus.push_back(cpu);
    }
  } else {
    cpus = base::allowed_cpus();
    if (cpus.empty()) return "unknown";
  }
  return fmt::format("{}", fmt::join(cpus, ","));
}

}  // namespace

std::string describe_environment(const ServerOptions& options) {
  utsname names{};
  ::uname(&names);
  const std::vector<std::pair<std::string_view, std::string>> fields = {
      {"program", "ringlab server"},
      {"version", RINGLAB_SERVER_VERSION},
      {"build_type", RINGLAB_SERVER_BUILD_TYPE},
      {"compiler", fmt::format("g++ {}", __VERSION__)},
      {"kernel", names.release},
      {"machine", names.machine},
      {"os", first_value("/etc/os-release", "PRETTY_NAME", '=')},
      {"cpu", first_value("/proc/cpuinfo", "model name", ':')},
      {"cores", std::to_string(::sysconf(_SC_NPROCESSORS_ONLN))},
      {"pid", std::to_string(::getpid())},
      {"bind", options.bind},
      {"threads", std::to_string(options.threads)},
      {"worker_cpus", worker_cpus_text(options)},
      {"inline_body_bytes", std::to_string(options.inline_body_bytes)},
      {"body_strategy", std::string(body_strategy_name(options.body_strategy))},
      {"fixed_body_bytes", std::to_string(options.fixed_body_bytes)},
      {"serializer_buffer_bytes", std::to_string(options.serializer_buffer_bytes)},
      {"cache_entries", std::to_string(options.cache_entries)},
      {"cache_bytes", std::to_string(options.cache_bytes)},
      {"recv_buffer_bytes", std::to_string(options.recv_buffer_bytes)},
      {"recv_buffer_count", std::to_string(options.recv_buffer_count)},
      {"recv", options.recv_multishot ? "multishot" : "one buffer per recv"},
      {"max_queued_output_bytes", std::to_string(options.max_queued_output_bytes)},
      {"max_connections", std::to_string(options.max_connections)},
      {"upstream", options.upstream.empty() ? "built-in" : options.upstream},
      {"malloc_mmap_threshold",
       options.malloc_mmap_threshold == 0 ? "dynamic" : std::to_string(options.malloc_mmap_threshold)},
  };
  std::string out = "{";
  for (const auto& [key, value] : fields) {
    if (out.size() > 1) out += ',';
    out += fmt::format("\"{}\":\"{}\"", key, escaped(value));
  }
  out += '}';
  return out;
}

}  // namespace ringlab::server
