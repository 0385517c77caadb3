#include "ringlab/bench/measure/cycle_counter.hpp"

#include <time.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "text_lines.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace ringlab::bench {

double ticks_to_ns(uint64_t ticks, double hz) noexcept {
  if (!(hz > 0)) return 0;
  const auto whole_hz = static_cast<uint64_t>(hz);
  if (whole_hz == 0) return static_cast<double>(ticks) / hz * 1e9;
  const uint64_t seconds = ticks / whole_hz;
  const uint64_t rest = ticks - seconds * whole_hz;
  return static_cast<double>(seconds) * (static_cast<double>(whole_hz) / hz) * 1e9 +
         static_cast<double>(rest) / hz * 1e9;
}

double hz_from_readings(uint64_t ticks0, uint64_t ns0, uint64_t ticks1, uint64_t ns1) noexcept {
  if (ns1 <= ns0 || ticks1 < ticks0) return 0;
  return static_cast<double>(ticks1 - ticks0) * 1e9 / static_cast<double>(ns1 - ns0);
}

std::optional<double> parse_tsc_freq_khz(std::string_view text) noexcept {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  uint64_t khz = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), khz);
  if (ec != std::errc{} || end != text.data() + text.size() || khz == 0) return std::nullopt;
  return static_cast<double>(khz) * 1e3;
}

bool cpuinfo_says_invariant_tsc(std::string_view cpuinfo) noexcept {
  std::string_view line;
  while (next_line(cpuinfo, line)) {
    if (!line.starts_with("flags")) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    line.remove_prefix(colon + 1);
    bool constant = false;
    bool nonstop = false;
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && line[i] == ' ') ++i;
      std::size_t j = line.find(' ', i);
      if (j == std::string_view::npos) j = line.size();
      const std::string_view flag = line.substr(i, j - i);
      constant = constant || flag == "constant_tsc";
      nonstop = nonstop || flag == "nonstop_tsc";
      i = j;
    }
    return constant && nonstop;  // the first CPU's line speaks for all
  }
  return false;
}

CalibrationReading tightest(const std::vector<CalibrationReading>& readings) noexcept {
  CalibrationReading best{};
  uint64_t best_width = std::numeric_limits<uint64_t>::max();
  for (const CalibrationReading& r : readings) {
    const uint64_t width = r.ns_after - r.ns_before;
    if (width < best_width) {
      best_width = width;
      best = r;
    }
  }
  return best;
}

double hz_from_calibration(const CalibrationReading& first, const CalibrationReading& last) noexcept {
  // Midpoints in doubled units keep the arithmetic in integers.
  const uint64_t mid0x2 = first.ns_before + first.ns_after;
  const uint64_t mid1x2 = last.ns_before + last.ns_after;
  if (mid1x2 <= mid0x2 || last.ticks < first.ticks) return 0;
  return static_cast<double>(last.ticks - first.ticks) * 2e9 / static_cast<double>(mid1x2 - mid0x2);
}

namespace {

// Set once by tick_clock() before any measured reading; read on every reading. A plain variable: the
// initialisation happens-before every later reading through the static-local guard in tick_clock().
TickSourceKind g_kind = TickSourceKind::clock_gettime;

uint64_t raw_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

#if defined(__x86_64__)
inline uint64_t tsc_start() noexcept {
  _mm_lfence();
  return __rdtsc();
}
inline uint64_t tsc_end() noexcept {
  unsigned aux = 0;
  const uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  return t;
}
#elif defined(__aarch64__)
inline uint64_t cntvct() noexcept {
  uint64_t v = 0;
  // isb: the read is not hoisted above earlier instructions.
  asm volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
  return v;
}
inline uint64_t cntfrq() noexcept {
  uint64_t v = 0;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(v));
  return v;
}
#endif

// Which end of a timed region a reading is: on x86-64 the start fences before rdtsc, the end after
// rdtscp; the other sources read both ends alike.
enum class RegionEnd { start, end };

template <RegionEnd kEnd>
inline uint64_t read_ticks() noexcept {
#if defined(__x86_64__)
  if (g_kind == TickSourceKind::tsc) return kEnd == RegionEnd::start ? tsc_start() : tsc_end();
#elif defined(__aarch64__)
  if (g_kind == TickSourceKind::cntvct) return cntvct();
#endif
  return raw_ns();
}

std::string slurp(const char* path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

#if defined(__x86_64__)
bool tsc_is_invariant(std::string& how) {
  unsigned a = 0;
  unsigned b = 0;
  unsigned c = 0;
  unsigned d = 0;
  if (__get_cpuid(0x80000007u, &a, &b, &c, &d) != 0 && cpuid_edx_says_invariant_tsc(d)) {
    how = "CPUID 0x80000007 EDX[8]";
    return true;
  }
  if (cpuinfo_says_invariant_tsc(slurp("/proc/cpuinfo"))) {
    how = "constant_tsc nonstop_tsc";
    return true;
  }
  return false;
}

double calibrate_tsc(double calibration_ms) {
  const auto read = [] {
    std::vector<CalibrationReading> readings;
    readings.reserve(16);
    for (int i = 0; i < 16; ++i) {
      CalibrationReading r;
      r.ns_before = raw_ns();
      r.ticks = tsc_start();
      r.ns_after = raw_ns();
      readings.push_back(r);
    }
    return tightest(readings);
  };
  const CalibrationReading first = read();
  const auto window = static_cast<long>(calibration_ms * 1e6);
  timespec pause{window / 1'000'000'000, window % 1'000'000'000};
  while (nanosleep(&pause, &pause) != 0) {
  }
  const CalibrationReading last = read();
  return hz_from_calibration(first, last);
}
#endif

TickClock make_clock(const TickClockOptions& options) {
  TickClock clock;
#if defined(__x86_64__)
  std::string how;
  if (options.force_clock_gettime) {
    clock.warnings.push_back("clock_gettime forced: readings cost more and resolve less than rdtsc");
  } else if (!tsc_is_invariant(how)) {
    clock.warnings.push_back(
        "TSC not invariant (no CPUID 0x80000007 EDX[8], no constant_tsc+nonstop_tsc): timing with "
        "clock_gettime(CLOCK_MONOTONIC_RAW) instead");
  } else {
    clock.kind = TickSourceKind::tsc;
    clock.source = "rdtsc (invariant: " + how + ")";
    if (auto hz = parse_tsc_freq_khz(slurp("/sys/devices/system/cpu/cpu0/tsc_freq_khz"))) {
      clock.hz = *hz;
      clock.hz_source = "sysfs tsc_freq_khz";
    } else {
      clock.hz = calibrate_tsc(options.calibration_ms);
      char text[96];
      std::snprintf(text, sizeof text, "calibrated against CLOCK_MONOTONIC_RAW (%.0f ms)", options.calibration_ms);
      clock.hz_source = text;
      if (!(clock.hz > 0)) {
        clock.kind = TickSourceKind::clock_gettime;
        clock.warnings.push_back("TSC calibration failed: timing with clock_gettime instead");
      }
    }
  }
#elif defined(__aarch64__)
  if (options.force_clock_gettime) {
    clock.warnings.push_back("clock_gettime forced: readings cost more and resolve less than cntvct_el0");
  } else if (const uint64_t f = cntfrq(); f != 0) {
    clock.kind = TickSourceKind::cntvct;
    clock.source = "cntvct_el0";
    clock.hz = static_cast<double>(f);
    clock.hz_source = "cntfrq_el0";
  } else {
    clock.warnings.push_back("cntfrq_el0 reads 0: timing with clock_gettime instead");
  }
#else
  (void)options;
  clock.warnings.push_back("no cycle counter on this architecture: timing with clock_gettime");
#endif
  if (clock.kind == TickSourceKind::clock_gettime) {
    clock.source = "clock_gettime(CLOCK_MONOTONIC_RAW)";
    clock.hz = 1e9;
    clock.hz_source = "ns";
  }
  g_kind = clock.kind;
  measure_timer_overhead(clock);
  return clock;
}

}  // namespace

uint64_t now_ticks() noexcept { return read_ticks<RegionEnd::start>(); }

uint64_t now_ticks_end() noexcept { return read_ticks<RegionEnd::end>(); }

void measure_timer_overhead(TickClock& clock) {
  constexpr int kRounds = 2000;
  std::vector<uint64_t> spans;
  spans.reserve(kRounds);
  uint64_t smallest_step = std::numeric_limits<uint64_t>::max();
  for (int i = 0; i < kRounds; ++i) {
    const uint64_t a = now_ticks();
    const uint64_t b = now_ticks_end();
    spans.push_back(b - a);
    // Resolution: consecutive readings until the value moves.
    const uint64_t c = now_ticks();
    uint64_t d = now_ticks();
    for (int spin = 0; d == c && spin < 1000; ++spin) d = now_ticks();
    if (d > c) smallest_step = std::min(smallest_step, d - c);
  }
  std::nth_element(spans.begin(), spans.begin() + kRounds / 2, spans.end());
  clock.overhead_ns = clock.to_ns(spans[kRounds / 2]);
  clock.resolution_ns = smallest_step == std::numeric_limits<uint64_t>::max() ? 0 : clock.to_ns(smallest_step);
}

const TickClock& tick_clock(const TickClockOptions& options) {
  static const TickClock clock = make_clock(options);
  return clock;
}

}  // namespace ringlab::bench
