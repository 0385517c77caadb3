#pragma once
// PerfControl: turns a `perf record` that profiles bench on and off around the measured iterations of
// one case, so the profile holds that case and not the pilot, the warm-up, other cases or start-up.
//
// tools/profile starts
//   perf record -g --no-inherit --control=fifo:CTL,ACK -D -1 -- bench SUITE --filter CASE --perf-control CTL,ACK
// -D -1 starts perf with its events disabled; --control makes it read commands from the FIFO CTL and
// answer each on the FIFO ACK. bench opens both (PerfControl::open("CTL,ACK")) and calls enable()
// right before the first measured iteration of a case and disable() right after its last.
// --no-inherit keeps the server child out: a forked child would otherwise inherit the events, and
// enabling them would sample the server too. The measurement runs on bench's main thread, which
// is the one --no-inherit leaves in the profile.
//
// Protocol (perf 5.10 and later, checked with perf 6.1): write "enable\n" or "disable\n" to CTL; perf
// answers "ack\n" followed by a NUL byte on ACK once the events are switched. enable() and
// disable() wait for that answer, so no sample of the case is lost to a late switch and none of the
// code after it is taken in.
//
// Errors: bench::Error naming the FIFO and the step ("perf control: open /tmp/x/ctl: No such device
// or address (ENXIO): no perf reading it"). A missing ack within the timeout (default 5 s, the
// --perf-control-timeout-ms flag) is an error, not retried; the caller should stop the run rather
// than profile the wrong thing.
//
// Ownership: PerfControl owns both descriptors (move-only, closed on destruction). Destroying it
// while enabled sends "disable" without waiting for the answer.
#include <chrono>
#include <string>
#include <string_view>

#include "ringlab/bench/core/error.hpp"

namespace ringlab::bench {

struct PerfControlPaths {
  std::string control;  // FIFO perf reads commands from
  std::string ack;      // FIFO perf answers on
};

// "CTL,ACK" (the value of --perf-control) -> the two paths; both must be non-empty. The error does
// not name the option: the caller adds "--perf-control: ".
[[nodiscard]] Result<PerfControlPaths> parse_perf_control(std::string_view spec);

class PerfControl {
 public:
  static constexpr std::chrono::milliseconds kDefaultAckTimeout{5000};

  // Opens both FIFOs without blocking: fails when a path is not a FIFO, or when nothing (no perf)
  // has CTL open for reading.
  [[nodiscard]] static Result<PerfControl> open(const PerfControlPaths& paths,
                                                std::chrono::milliseconds ack_timeout = kDefaultAckTimeout);
  [[nodiscard]] static Result<PerfControl> open(std::string_view spec,
                                                std::chrono::milliseconds ack_timeout = kDefaultAckTimeout);

  PerfControl(PerfControl&& other) noexcept;
  PerfControl& operator=(PerfControl&& other) noexcept;
  PerfControl(const PerfControl&) = delete;
  PerfControl& operator=(const PerfControl&) = delete;
  ~PerfControl();

  // Each sends its command and returns once perf has acknowledged it.
  [[nodiscard]] Status enable();
  [[nodiscard]] Status disable();
  [[nodiscard]] bool enabled() const noexcept { return enabled_; }

 private:
  PerfControl() = default;
  Status command(std::string_view command);
  void close_all() noexcept;

  int control_fd_ = -1;
  int ack_fd_ = -1;
  bool enabled_ = false;
  std::chrono::milliseconds timeout_{kDefaultAckTimeout};
  PerfControlPaths paths_;
};

}  // namespace ringlab::bench
