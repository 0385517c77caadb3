// Cycle counter: the tick arithmetic on fixed numbers, then the real counter against clock_gettime.
#include "ringlab/bench/measure/cycle_counter.hpp"

#include <doctest/doctest.h>
#include <time.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace rb = ringlab::bench;
using doctest::Approx;

TEST_CASE("ticks convert to ns at the given frequency") {
  struct Row {
    uint64_t ticks;
    double hz;
    double ns;
  };
  const Row rows[] = {
      {2'600'000'000u, 2.6e9, 1e9},
      {26, 2.6e9, 10},
      {0, 2.6e9, 0},
      {1'000'000, 1e9, 1'000'000},
      // A day of a 3 GHz TSC: well above 2^53 / 1e9, where a naive ticks * 1e9 / hz rounds.
      {259'200'000'000'000u, 3e9, 86'400e9},
      // A frequency that is not a whole number of Hz.
      {2'596'148'001u, 2'596'148'000.5, 1e9 * 2'596'148'001.0 / 2'596'148'000.5},
  };
  for (const Row& row : rows) {
    INFO(row.ticks << " ticks at " << row.hz << " Hz");
    CHECK(rb::ticks_to_ns(row.ticks, row.hz) == Approx(row.ns).epsilon(1e-12));
  }
  CHECK(rb::ticks_to_ns(100, 0) == 0);
}

TEST_CASE("frequency from two readings, and from bracketed calibration readings") {
  CHECK(rb::hz_from_readings(1000, 0, 1000 + 2'600'000, 1'000'000) == Approx(2.6e9));
  CHECK(rb::hz_from_readings(0, 5, 100, 5) == 0);  // time did not move
  CHECK(rb::hz_from_readings(100, 0, 50, 10) == 0);  // counter went backwards

  // The tightest bracket wins; its midpoint is the time of the tick reading.
  const std::vector<rb::CalibrationReading> start{{100, 1000, 180}, {200, 1300, 210}, {300, 1600, 400}};
  const rb::CalibrationReading first = rb::tightest(start);
  CHECK(first.ticks == 1300);
  // 100 ms later (midpoint 205 -> 100'000'205 ns), 260'000'000 ticks later: 2.6 GHz.
  const rb::CalibrationReading last{100'000'200, 1300 + 260'000'000, 100'000'210};
  CHECK(rb::hz_from_calibration(first, last) == Approx(2.6e9).epsilon(1e-9));
  CHECK(rb::hz_from_calibration(last, first) == 0);
}

TEST_CASE("tsc_freq_khz text parses to Hz and rejects anything else") {
  CHECK(rb::parse_tsc_freq_khz("2596148\n") == 2.596148e9);
  CHECK(rb::parse_tsc_freq_khz("3000000") == 3e9);
  for (const char* bad : {"", "\n", "0", "abc", "12x", "-5", "1.5"}) {
    INFO("text '" << bad << "'");
    CHECK_FALSE(rb::parse_tsc_freq_khz(bad).has_value());
  }
}

TEST_CASE("invariant TSC is read from CPUID EDX bit 8 or from both cpuinfo flags") {
  CHECK(rb::cpuid_edx_says_invariant_tsc(0x100));
  CHECK(rb::cpuid_edx_says_invariant_tsc(0xffffffff));
  CHECK_FALSE(rb::cpuid_edx_says_invariant_tsc(0xff));

  const std::string both = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rep_good nonstop_tsc cpuid\n";
  const std::string one = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rep_good cpuid\n";
  const std::string prefix_only = "flags\t\t: constant_tsc_x nonstop_tsc\n";
  CHECK(rb::cpuinfo_says_invariant_tsc(both));
  CHECK_FALSE(rb::cpuinfo_says_invariant_tsc(one));
  CHECK_FALSE(rb::cpuinfo_says_invariant_tsc(prefix_only));
  CHECK_FALSE(rb::cpuinfo_says_invariant_tsc(""));
}

namespace {
uint64_t monotonic_raw_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// A counter reading and the clock_gettime readings either side of it, the tightest of a few: the
// bracket's width bounds how far apart in time the two clocks were read, on this machine, now (an
// interrupt or a preemption between the readings widens it).
rb::CalibrationReading bracketed_reading(uint64_t (*read_ticks)()) {
  rb::CalibrationReading best{0, 0, std::numeric_limits<uint64_t>::max()};
  for (int attempt = 0; attempt < 16; ++attempt) {
    rb::CalibrationReading reading;
    reading.ns_before = monotonic_raw_ns();
    reading.ticks = read_ticks();
    reading.ns_after = monotonic_raw_ns();
    if (reading.ns_after - reading.ns_before < best.ns_after - best.ns_before) best = reading;
  }
  return best;
}
}  // namespace

TEST_CASE("the counter converted to ns agrees with clock_gettime over a 50 ms sleep within 1 %, plus the time "
          "it takes to read both") {
  const rb::TickClock& clock = rb::tick_clock();
  INFO("source " << clock.source << ", " << clock.hz << " Hz (" << clock.hz_source << ")");
  REQUIRE(clock.hz > 0);
  const rb::CalibrationReading start = bracketed_reading(rb::now_ticks);
  timespec pause{0, 50'000'000};
  while (nanosleep(&pause, &pause) != 0) {
  }
  const rb::CalibrationReading end = bracketed_reading(rb::now_ticks_end);
  const auto midpoint = [](const rb::CalibrationReading& r) { return (r.ns_before + r.ns_after) / 2.0; };
  const double by_clock = midpoint(end) - midpoint(start);
  const double by_ticks = clock.to_ns(end.ticks - start.ticks);
  // Each tick reading lies somewhere in its bracket: the two spans can differ by half of each width
  // without any error of the frequency.
  const double reading_uncertainty =
      (static_cast<double>(start.ns_after - start.ns_before) + static_cast<double>(end.ns_after - end.ns_before)) / 2;
  INFO("clock_gettime " << by_clock << " ns, counter " << by_ticks << " ns, readings uncertain by "
                        << reading_uncertainty << " ns");
  // The frequency's own error is about 1e-4 (cycle_counter.hpp); 1 % is far above it and far below a
  // wrong unit or a wrong source.
  CHECK(std::fabs(by_ticks - by_clock) <= 0.01 * by_clock + reading_uncertainty);
  // The start-up measurement found a cost and a step for a reading.
  CHECK(clock.overhead_ns > 0);
  CHECK(clock.resolution_ns > 0);
}
