#pragma once
// The cycle counter bench times everything with, and the arithmetic that turns its ticks into ns.
//
// Sources, best first:
//   x86-64  rdtsc, when the TSC is invariant (CPUID 0x80000007 EDX bit 8, or the kernel's
//           constant_tsc + nonstop_tsc flags): it then ticks at a fixed rate whatever the core's
//           frequency or sleep state, and is synchronised across cores by the kernel.
//   aarch64 cntvct_el0, the generic timer's virtual count, at cntfrq_el0 Hz.
//   other   clock_gettime(CLOCK_MONOTONIC_RAW) in ns (also when the TSC is not invariant), with a
//           warning: it costs 20-30 ns a reading through the vDSO and its resolution is coarser.
//
// Frequency: /sys/devices/system/cpu/cpu0/tsc_freq_khz when the kernel exposes it, else calibrated
// at start-up against CLOCK_MONOTONIC_RAW (not NTP-slewed) over `calibration` (default 100 ms),
// taking at each end the reading whose clock_gettime bracket was tightest.
//
// Caveats a reader of the numbers should know:
//   - A tick is not a core cycle: the TSC runs at its nominal rate, so "ticks" measure wall time.
//   - Fencing: a region starts with lfence;rdtsc (earlier instructions finish before the read) and
//     ends with rdtscp;lfence (the region's instructions finish before the read, later ones do not
//     start before it). On AMD, lfence orders dispatch only when the kernel sets the "LFENCE is
//     serialising" MSR, which Linux does on every CPU it supports; elsewhere the fence is weaker.
//   - In a virtual machine the hypervisor may trap or offset rdtsc; the measured overhead shows it.
//   - The calibrated frequency carries the error of the calibration window (about 1e-4 at 100 ms);
//     it scales every number alike and cancels in ratios.
//   - Where the TSCs of different CPUs are not synchronised, readings taken on two CPUs do not
//     compare; bench pins its client thread, which sidesteps this.
//
// Threading: tick_clock() initialises once (thread-safe, static); now_ticks() and now_ticks_end()
// are lock-free reads. Call tick_clock() before the first reading, as it picks the source.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ringlab::bench {

// --- Pure arithmetic (tested apart from the hardware) ---

// ns for `ticks` at `hz` ticks per second, exact to double precision. Split into whole seconds
// and remainder so counts far above 2^53 / 1e9 do not lose the low digits.
[[nodiscard]] double ticks_to_ns(uint64_t ticks, double hz) noexcept;
// Ticks per second from two (ticks, ns) readings; 0 when the ns did not advance.
[[nodiscard]] double hz_from_readings(uint64_t ticks0, uint64_t ns0, uint64_t ticks1, uint64_t ns1) noexcept;
// Hz from the text of tsc_freq_khz ("2596148\n" -> 2.596148e9); nullopt when it is not a positive integer.
[[nodiscard]] std::optional<double> parse_tsc_freq_khz(std::string_view text) noexcept;
// Whether /proc/cpuinfo's first "flags" line has both constant_tsc and nonstop_tsc.
[[nodiscard]] bool cpuinfo_says_invariant_tsc(std::string_view cpuinfo) noexcept;
// Whether CPUID 0x80000007's EDX says the TSC is invariant (bit 8).
[[nodiscard]] constexpr bool cpuid_edx_says_invariant_tsc(uint32_t edx) noexcept { return ((edx >> 8) & 1u) != 0; }

// One calibration reading: ticks and the CLOCK_MONOTONIC_RAW ns bracketing them.
struct CalibrationReading {
  uint64_t ns_before = 0;
  uint64_t ticks = 0;
  uint64_t ns_after = 0;
};
// The reading whose bracket is tightest, with its ns taken as the bracket's midpoint.
[[nodiscard]] CalibrationReading tightest(const std::vector<CalibrationReading>& readings) noexcept;
// Hz between two bracketed readings, using each bracket's midpoint.
[[nodiscard]] double hz_from_calibration(const CalibrationReading& first, const CalibrationReading& last) noexcept;

// --- Reading the counter ---

enum class TickSourceKind { tsc, cntvct, clock_gettime };

// Start of a timed region (lfence;rdtsc on x86-64). Usable as http::TickSource.
[[nodiscard]] uint64_t now_ticks() noexcept;
// End of a timed region (rdtscp;lfence on x86-64).
[[nodiscard]] uint64_t now_ticks_end() noexcept;

struct TickClock {
  TickSourceKind kind = TickSourceKind::clock_gettime;
  std::string source;     // "rdtsc", "cntvct_el0", "clock_gettime(CLOCK_MONOTONIC_RAW)"
  double hz = 1e9;
  std::string hz_source;  // "sysfs tsc_freq_khz", "cntfrq_el0", "calibrated against CLOCK_MONOTONIC_RAW (100 ms)"
  double overhead_ns = 0;    // median of back-to-back start/end readings
  double resolution_ns = 0;  // smallest non-zero step between consecutive readings
  std::vector<std::string> warnings;

  [[nodiscard]] double to_ns(uint64_t ticks) const noexcept { return ticks_to_ns(ticks, hz); }
};

struct TickClockOptions {
  double calibration_ms = 100;
  bool force_clock_gettime = false;  // for comparing sources; the header then says so
};

// The process's clock, initialised on the first call with `options` (later calls ignore them).
const TickClock& tick_clock(const TickClockOptions& options = {});

// Measures overhead and resolution of the current source (used by tick_clock and --self-check).
void measure_timer_overhead(TickClock& clock);

}  // namespace ringlab::bench
