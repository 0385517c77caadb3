// What the runner did to the strategies of one case, counted by a test's own strategy (the fake of
// fresh_client_test.cpp, the wrapper of a registry row in fresh_client_check.cpp), and the two shapes
// --client gives those calls. A test keeps one StrategyCalls per case (reset before it), written by its
// strategy on the runner's thread and read after run_cases() returns.
#pragma once

#include <doctest/doctest.h>

#include "ringlab/strategies/strategy.hpp"

namespace ringlab::bench::testing {

struct StrategyCalls {
  int made = 0;
  int setups = 0;
  int runs = 0;           // every run(), timed or verified
  int verified_runs = 0;  // the runs asked to verify their checksum
  int teardowns = 0;

  void count_run(strategies::Check check) {
    ++runs;
    if (check == strategies::Check::verify) ++verified_runs;
  }
};

// --client fresh: every op is a strategy of its own, made, set up and torn down; and one more, the probe,
// made and set up before the clock (to fail early), which never runs.
inline void check_a_strategy_per_op(const StrategyCalls& calls) {
  CHECK(calls.made == calls.runs + 1);
  CHECK(calls.setups == calls.made);
  CHECK(calls.teardowns == calls.made);
}

// --client pooled: one strategy for the whole case, set up once and torn down once.
inline void check_one_strategy_for_the_case(const StrategyCalls& calls) {
  CHECK(calls.made == 1);
  CHECK(calls.setups == 1);
  CHECK(calls.teardowns == 1);
}

}  // namespace ringlab::bench::testing
