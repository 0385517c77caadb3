// tests json/src/kernel.cpp
#include "ringlab/json/kernel.hpp"

#include <doctest/doctest.h>

#include <string_view>

namespace json = ringlab::json;

TEST_CASE("the kernel is one simdjson has") {
  const std::string_view kernel = json::compiled_kernel();
  INFO("kernel: " << kernel);
  const bool known = kernel == "icelake" || kernel == "haswell" || kernel == "westmere" || kernel == "arm64" ||
                     kernel == "ppc64" || kernel == "fallback";
  CHECK(known);
}

TEST_CASE("the kernel is the one the RINGLAB_SIMD option asks for") {
  // This test is compiled with the same options as json/'s sources.
  CHECK(json::simd_option() == std::string_view(RINGLAB_SIMD_TARGET));
  const std::string_view option = json::simd_option();
  const std::string_view kernel = json::compiled_kernel();
  INFO("option " << option << ", kernel " << kernel);
  if (option == "fallback" || option == "haswell" || option == "westmere") {
    CHECK(kernel == option);
  } else {
    // native: whatever this machine's compiler flags give; on x86-64 any SIMD kernel beats fallback,
    // so fallback here would mean the flags did not reach json/.
#if defined(__x86_64__) && defined(__SSE4_2__) && defined(__PCLMUL__)
    CHECK(kernel != "fallback");
#endif
  }
}
