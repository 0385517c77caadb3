# Per-target settings. Nothing here is set globally: a target opts in with ringlab_defaults().

# Interface target that carries the settings, so they are written once.
add_library(ringlab_defaults INTERFACE)

target_compile_options(ringlab_defaults INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Woverloaded-virtual
  -Wnull-dereference -Wimplicit-fallthrough
  $<$<BOOL:${RINGLAB_WERROR}>:-Werror>
  # GCC 12 reports -Wrestrict inside libstdc++'s operator+(const char*, std::string) once it is
  # inlined at -O2 and above (GCC bug 105329): a false positive in library code, not ours.
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>
  # perf call graphs (perf record -g) need frame pointers in optimised code too.
  -fno-omit-frame-pointer)

if(RINGLAB_SANITIZE)
  target_compile_options(ringlab_defaults INTERFACE -fsanitize=address,undefined -fno-sanitize-recover=all)
  target_link_options(ringlab_defaults INTERFACE -fsanitize=address,undefined)
endif()

# The simdjson On-Demand kernel is picked when the translation unit is compiled, not at run time:
# the flag below decides which one the measured code uses, and bench reports it.
if(RINGLAB_SIMD STREQUAL "native")
  set(RINGLAB_SIMD_FLAGS -march=native)
elseif(RINGLAB_SIMD STREQUAL "haswell")
  set(RINGLAB_SIMD_FLAGS -mavx2 -mbmi -mbmi2 -mpclmul -mlzcnt)
elseif(RINGLAB_SIMD STREQUAL "westmere")
  set(RINGLAB_SIMD_FLAGS -msse4.2 -mpclmul)
elseif(RINGLAB_SIMD STREQUAL "fallback")
  set(RINGLAB_SIMD_FLAGS "")
else()
  message(FATAL_ERROR "RINGLAB_SIMD must be native, haswell, westmere or fallback, not '${RINGLAB_SIMD}'")
endif()
target_compile_options(ringlab_defaults INTERFACE ${RINGLAB_SIMD_FLAGS})
target_compile_definitions(ringlab_defaults INTERFACE RINGLAB_SIMD_TARGET="${RINGLAB_SIMD}")

function(ringlab_defaults target)
  target_link_libraries(${target} PRIVATE ringlab_defaults)
endfunction()
