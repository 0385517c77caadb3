#pragma once
// Which simdjson kernel the parsing code runs.
//
// simdjson's On-Demand API picks its kernel when a translation unit is compiled (the instruction set
// the compiler may use: RINGLAB_SIMD), not at run time. So the kernel measured is the one json/'s own
// sources were compiled for, and the usual run-time answers are beside the point:
// simdjson::builtin_implementation() is compiled into the shared library (Debian builds it for the
// baseline ISA: "fallback"), and get_active_implementation() picks the DOM API's kernel by CPU.
//
// This header does not include simdjson, so bench can print the kernel cheaply.
#include <string_view>

namespace ringlab::json {

// "icelake", "haswell", "westmere", "arm64", "ppc64" or "fallback": the kernel of json/'s parsing code.
[[nodiscard]] std::string_view compiled_kernel() noexcept;
// The RINGLAB_SIMD build option it came from: "native", "haswell", "westmere" or "fallback".
[[nodiscard]] std::string_view simd_option() noexcept;

}  // namespace ringlab::json
