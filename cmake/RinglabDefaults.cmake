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

# One layer, one library: ringlab_<name> (and its alias ringlab::<name>) from the sources that follow,
# its public headers in the calling folder's include/ (installed under include/), and the defaults
# above. Each top-level folder makes its library with this, so they differ only in what they link.
function(ringlab_layer name)
  add_library(ringlab_${name} ${ARGN})
  add_library(ringlab::${name} ALIAS ringlab_${name})
  target_include_directories(ringlab_${name} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>)
  ringlab_defaults(ringlab_${name})
endfunction()
