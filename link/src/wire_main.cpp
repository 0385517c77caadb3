// wire: the link emulator as a process (see ringlab/link/wire.hpp). bench starts it inside the
// namespace that holds the two wire-side interfaces; it can also be run by hand:
//   wire --client-interface wc --server-interface ws --link 1g
// Prints "wire ready: <link>; scheduling <policy>" once both sockets are bound, forwards until SIGTERM or SIGINT, then prints
// its statistics as one JSON line and exits 0. Errors: one line on stderr, exit 1; usage, exit 2.
#include "ringlab/base/errno_text.hpp"
#include "ringlab/link/wire.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }

int usage(const char* message) {
  std::fprintf(stderr,
               "wire: %s\n"
               "usage: wire --client-interface IF --server-interface IF --link SPEC [--cpu N]\n"
               "SPEC: a profile (%s) or rate=...,delay=...[,jitter=...][,loss=...][,mtu=...]\n",
               message, std::string(ringlab::link::profile_names()).c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  ringlab::link::WireOptions options;
  std::string spec_text;
  int cpu = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      usage("forwards frames between two interfaces as an emulated link");
      return 0;
    }
    if (i + 1 >= argc) return usage(("missing value after " + std::string(arg)).c_str());
    const char* value = argv[++i];
    if (arg == "--client-interface") options.client_interface = value;
    else if (arg == "--server-interface") options.server_interface = value;
    else if (arg == "--link") spec_text = value;
    else if (arg == "--cpu") cpu = std::atoi(value);
    else return usage(("unknown option " + std::string(arg)).c_str());
  }
  if (options.client_interface.empty() || options.server_interface.empty() || spec_text.empty())
    return usage("--client-interface, --server-interface and --link are required");
  auto spec = ringlab::link::parse_link_spec(spec_text);
  if (!spec) return usage(spec.error().c_str());
  options.spec = *spec;

  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0) {
      const std::string error = ringlab::base::errno_message("wire: sched_setaffinity", "CPU " + std::to_string(cpu), errno);
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
  }
  // Timers fire as close to their deadline as the kernel can (the default slack is 50 us).
  ::prctl(PR_SET_TIMERSLACK, 1UL);
  // A qdisc such as netem releases packets from softirq context, ahead of every task; a real-time
  // priority gives the wire the same precedence over what shares its CPU (the server, anything
  // else), so a frame leaves when due rather than when the scheduler next gets to it. The wire
  // sleeps between frames, and the kernel's real-time throttling bounds it in any case.
  const char* scheduling = "SCHED_FIFO 50";
  sched_param priority{};
  priority.sched_priority = 50;
  if (::sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &priority) != 0) scheduling = "normal (no CAP_SYS_NICE)";

  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigset_t wait_mask;
  ::sigprocmask(SIG_BLOCK, &stop_signals, &wait_mask);
  sigdelset(&wait_mask, SIGTERM);
  sigdelset(&wait_mask, SIGINT);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);

  auto wire = ringlab::link::Wire::open(options);
  if (!wire) {
    std::fprintf(stderr, "%s\n", wire.error().c_str());
    return 1;
  }
  std::printf("wire ready: %s; scheduling %s\n", options.spec.describe().c_str(), scheduling);
  std::fflush(stdout);
  auto stats = wire->run(g_stop, wait_mask);
  if (!stats) {
    std::fprintf(stderr, "%s\n", stats.error().c_str());
    return 1;
  }
  std::printf("%s\n", stats->json().c_str());
  return 0;
}
