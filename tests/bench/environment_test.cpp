// Environment: parsing of the kernel's text files, and what gather_environment fills.
#include "ringlab/bench/measure/environment.hpp"

#include <doctest/doctest.h>

#include <string>

namespace rb = ringlab::bench;

TEST_CASE("the CPU model comes from cpuinfo on x86 and on arm") {
  const std::string x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n";
  CHECK(rb::cpu_model_from_cpuinfo(x86) == "AMD EPYC 7B13");
  const std::string arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n";
  CHECK(rb::cpu_model_from_cpuinfo(arm) == "0xd0c");
  CHECK(rb::cpu_model_from_cpuinfo("") == "n/a");
}

TEST_CASE("the OS name is os-release's PRETTY_NAME, unquoted") {
  CHECK(rb::pretty_name_from_os_release("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n") ==
        "Debian GNU/Linux 12 (bookworm)");
  CHECK(rb::pretty_name_from_os_release("PRETTY_NAME=Alpine\n") == "Alpine");
  CHECK(rb::pretty_name_from_os_release("NAME=x\n") == "n/a");
}

TEST_CASE("ring features are listed by name, only those present") {
  ringlab::net::RingFeatures f;
  CHECK(rb::describe_features(f) == "none");
  f.single_issuer = true;
  f.send_zc = true;
  f.provided_buffer_ring = true;
  CHECK(rb::describe_features(f) == "single_issuer send_zc provided_buffer_ring");
  f.recv_bundle = true;
  f.provided_buffer_ring_incremental = true;
  CHECK(rb::describe_features(f) ==
        "single_issuer send_zc provided_buffer_ring recv_bundle provided_buffer_ring_incremental");
}

TEST_CASE("gathering fills every field and warns about what makes numbers less trustworthy") {
  rb::EnvironmentInputs inputs;
  inputs.io_uring_features = "single_issuer";
  inputs.client_cpu = 0;
  inputs.server_cpu = 1;
  inputs.server = "embedded pid 1 on 127.0.0.1:1";
  inputs.allocator = "glibc";
  inputs.shared_cpu = true;
  const rb::Environment e = rb::gather_environment(inputs);
  CHECK_FALSE(e.cpu.empty());
  CHECK(e.cores > 0);
  CHECK_FALSE(e.kernel.empty());
  CHECK(e.compiler.find("g++") != std::string::npos);
  CHECK_FALSE(e.liburing_version.empty());
  CHECK(e.liburing_version != "n/a");
  CHECK(e.simdjson_version != "n/a");
  CHECK(e.llhttp_version.find('.') != std::string::npos);
  CHECK(e.simdjson_kernel.find("RINGLAB_SIMD=") != std::string::npos);
  CHECK(e.tsc_hz > 0);
  CHECK(e.timer_overhead_ns > 0);
  CHECK(e.timestamp.size() == 20);
  CHECK(e.client_cpu == 0);
  CHECK(e.server == inputs.server);
  bool shared_warning = false;
  for (const auto& w : e.warnings) shared_warning = shared_warning || w.find("share a CPU") != std::string::npos;
  CHECK(shared_warning);
#if defined(__SANITIZE_ADDRESS__)
  CHECK(e.build_type.find("+asan+ubsan") != std::string::npos);
#endif
}

TEST_CASE("the load averages come from /proc/loadavg's first three fields") {
  const auto load = rb::load_average_from("0.52 0.40 0.31 1/123 4567\n");
  REQUIRE(load.has_value());
  CHECK(load->one == 0.52);
  CHECK(load->five == 0.40);
  CHECK(load->fifteen == 0.31);
  CHECK_FALSE(rb::load_average_from("").has_value());
  CHECK_FALSE(rb::load_average_from("0.52 busy 0.31").has_value());
  CHECK(rb::read_load_average().has_value());  // Linux has /proc
}

TEST_CASE("the environment says which source the binary was built from") {
  const std::string version = rb::version_text();
  CHECK(version.starts_with("ringlab "));
  CHECK(version.find("(commit ") != std::string::npos);
  const rb::Environment e = rb::gather_environment({});
  CHECK_FALSE(e.git_commit.empty());  // a sha, or "unknown" without git
  CHECK_FALSE(e.version.empty());
  CHECK(e.load_average_start.has_value());
  CHECK_FALSE(e.load_average_end.has_value());  // the caller's, just before writing
}
