#pragma once
// Environment: the facts about the machine, the build and the run that the report header states,
// and the warnings that make the numbers less trustworthy (Debug build, sanitizers, a CPU governor
// other than "performance", client and server sharing a CPU, a clock that is not an invariant TSC).
//
// The parsers of the kernel's text files are pure functions (tested on fixed text); gather_environment
// reads the files and combines them with what the caller knows (ring features, pinning, server).
// A fact that cannot be read is "n/a", never an error: the run goes on and the header says so.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/results.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::bench {

// "model name" of /proc/cpuinfo's first processor (x86), else "Hardware"/"CPU part" lines; "n/a".
[[nodiscard]] std::string cpu_model_from_cpuinfo(std::string_view cpuinfo);
// PRETTY_NAME of /etc/os-release, unquoted; "n/a".
[[nodiscard]] std::string pretty_name_from_os_release(std::string_view os_release);
// "single_issuer defer_taskrun coop_taskrun ext_arg send_zc ..." (granted/supported ones only);
// "none" when nothing is.
[[nodiscard]] std::string describe_features(const net::RingFeatures& features);

// The 1, 5 and 15 minute load averages of /proc/loadavg's text; nullopt when it does not parse.
[[nodiscard]] std::optional<LoadAverage> load_average_from(std::string_view loadavg);
// /proc/loadavg now; nullopt when it cannot be read (not Linux, no /proc).
[[nodiscard]] std::optional<LoadAverage> read_load_average();

// Which source this binary was built from, recorded at build time: "ringlab 0.1.0 (commit <sha>)",
// with ", uncommitted changes" when the tree was dirty; "commit unknown" without git.
[[nodiscard]] std::string version_text();

// The simdjson On-Demand kernel the measured parsing code was compiled for ("haswell (RINGLAB_SIMD=native)").
[[nodiscard]] std::string simdjson_kernel();

struct EnvironmentInputs {
  std::string io_uring_features;  // describe_features() of a probe ring, or why there is none
  int client_cpu = -1;
  int server_cpu = -1;
  std::string server;             // "embedded pid 1234 on 127.0.0.1:40123" / "http://host:port (external)"
  std::string allocator;          // from the allocator detection
  bool shared_cpu = false;        // client and server can run on the same CPU
};

// Reads /proc, /sys, uname and the tick clock (initialising it), and fills every field but
// load_average_end, which the caller sets just before writing the report.
[[nodiscard]] Environment gather_environment(const EnvironmentInputs& inputs);

}  // namespace ringlab::bench
