// The doctest main every test binary shares. It exits kSkipReturnCode (77) when a feature-gated case
// was skipped and nothing failed, which ctest reports as skipped (support/feature_gate.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "support/feature_gate.hpp"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit() || result != 0) return result;
  return ringlab::testing::skipped_cases > 0 ? ringlab::testing::kSkipReturnCode : 0;
}
