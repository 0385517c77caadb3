#include "ringlab/json/kernel.hpp"

#include <simdjson.h>

// Stringified here, in a translation unit compiled with the same flags as the parsing code: this is
// the only reliable way to learn which kernel that code was compiled for (see kernel.hpp).
#define RINGLAB_STRINGIFY_INNER(x) #x
#define RINGLAB_STRINGIFY(x) RINGLAB_STRINGIFY_INNER(x)

namespace ringlab::json {

std::string_view compiled_kernel() noexcept { return RINGLAB_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION); }

std::string_view simd_option() noexcept {
#ifdef RINGLAB_SIMD_TARGET
  return RINGLAB_SIMD_TARGET;
#else
  return "unknown";
#endif
}

}  // namespace ringlab::json
