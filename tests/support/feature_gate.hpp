#pragma once
// Feature-gated test cases: a case that needs something the machine may lack (a kernel feature, an
// installed program, IPv6 loopback) asks feature_available() first and returns when it says no. The
// case is then recorded as skipped, with the reason, and ctest shows it as skipped instead of passed:
//
//   TEST_CASE("multishot recv fills provided buffers" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
//     if (!ringlab::testing::feature_available("recv_multishot", ring->features().recv_multishot,
//                                              "the kernel has no multishot recv")) return;
//
// How it reaches ctest: ringlab_test() (tests/CMakeLists.txt) registers the cases of the
// "feature-gated" test suite as their own ctest entry, <name>_feature_gated, with SKIP_RETURN_CODE 77;
// the shared doctest main (tests/doctest_main.cpp) exits 77 when a case was skipped and none failed.
// The other cases of the file stay in the plain <name> entry, so they never hide behind a skip.
//
// Forcing a probe off: RINGLAB_TEST_WITHOUT=send_zc,recv_multishot (a comma list, read by tests only)
// makes feature_available() answer no for those names, to show the skipped path on any machine.
//
// Threads: call from the test's thread (doctest's MESSAGE is not thread-safe).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace ringlab::testing {

inline constexpr const char* kFeatureGated = "feature-gated";
inline constexpr int kSkipReturnCode = 77;  // what ctest's SKIP_RETURN_CODE is set to

// Cases skipped in this run (the doctest main reads it).
inline int skipped_cases = 0;

// True when RINGLAB_TEST_WITHOUT names `feature`.
inline bool forced_off(std::string_view feature) {
  const char* list = std::getenv("RINGLAB_TEST_WITHOUT");
  if (list == nullptr) return false;
  std::string_view rest(list);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    if (rest.substr(0, comma) == feature) return true;
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return false;
}

// `present` unless RINGLAB_TEST_WITHOUT forces `feature` off. When the answer is no, the case is
// recorded as skipped with `why` (and the reason shows in doctest's output); the caller returns.
inline bool feature_available(std::string_view feature, bool present, std::string_view why) {
  const bool forced = forced_off(feature);
  if (present && !forced) return true;
  ++skipped_cases;
  MESSAGE("skipped (" << std::string(feature) << "): "
                      << (forced ? std::string("forced off by RINGLAB_TEST_WITHOUT") : std::string(why)));
  return false;
}

}  // namespace ringlab::testing
