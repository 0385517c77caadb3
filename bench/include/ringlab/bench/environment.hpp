#pragma once
// Environment: the facts about the machine, the build and the run that the report header states,
// and the warnings that make the numbers less trustworthy (Debug build, sanitizers, a CPU governor
// other than "performance", client and server sharing a CPU, a clock that is not an invariant TSC).
//
// The parsers of the kernel's text files are pure functions (tested on fixed text); gather_environment
// reads the files and combines them with what the caller knows (ring features, pinning, server).
// A fact that cannot be read is "n/a", never an error: the run goes on and the header says so.
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/results.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::bench {

// "model name" of /proc/cpuinfo's first processor (x86), else "Hardware"/"CPU part" lines; "n/a".
[[nodiscard]] std::string cpu_model_from_cpuinfo(std::string_view cpuinfo);
// PRETTY_NAME of /etc/os-release, unquoted; "n/a".
[[nodiscard]] std::string pretty_name_from_os_release(std::string_view os_release);
// "single_issuer defer_taskrun coop_taskrun ext_arg send_zc ..." (granted/supported ones only);
// "none" when nothing is.
[[nodiscard]] std::string describe_features(const net::RingFeatures& features);

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

// Reads /proc, /sys, uname and the tick clock (initialising it), and fills every field.
[[nodiscard]] Environment gather_environment(const EnvironmentInputs& inputs);

}  // namespace ringlab::bench
