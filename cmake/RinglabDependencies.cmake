# Every dependency is a Debian package (tools/setup installs them). Each becomes a target here.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

pkg_check_modules(URING REQUIRED IMPORTED_TARGET liburing>=2.1)
pkg_check_modules(SIMDJSON REQUIRED IMPORTED_TARGET simdjson>=3.0)
pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
# Header-only; the rapidjson strategy parses with it (its pkg-config name is RapidJSON).
pkg_check_modules(RAPIDJSON REQUIRED IMPORTED_TARGET RapidJSON)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(doctest REQUIRED)
find_package(mimalloc REQUIRED)
find_package(nlohmann_json REQUIRED)

# llhttp: Debian's node-llhttp ships the generated C sources, not a library; compile them here.
set(RINGLAB_LLHTTP_DIR /usr/share/llhttp CACHE PATH "Folder holding llhttp.c, api.c and http.c")
set(RINGLAB_LLHTTP_INCLUDE /usr/share/include/llhttp CACHE PATH "Folder holding llhttp.h")
if(NOT EXISTS ${RINGLAB_LLHTTP_DIR}/llhttp.c OR NOT EXISTS ${RINGLAB_LLHTTP_INCLUDE}/llhttp.h)
  message(FATAL_ERROR "llhttp sources not found in ${RINGLAB_LLHTTP_DIR}: install node-llhttp (tools/setup does)")
endif()
add_library(llhttp STATIC
  ${RINGLAB_LLHTTP_DIR}/llhttp.c ${RINGLAB_LLHTTP_DIR}/api.c ${RINGLAB_LLHTTP_DIR}/http.c)
target_include_directories(llhttp SYSTEM PUBLIC ${RINGLAB_LLHTTP_INCLUDE})
set_target_properties(llhttp PROPERTIES POSITION_INDEPENDENT_CODE ON C_STANDARD 99)
# Generated code: its warnings are not ours to fix.
target_compile_options(llhttp PRIVATE -w)

# Allocator shared libraries, preloaded by bench's allocator jobs. Found here so the paths are fixed
# at configure time; a missing one is reported by bench, not silently dropped.
find_library(RINGLAB_MIMALLOC_SO NAMES libmimalloc.so.2 mimalloc)
find_library(RINGLAB_JEMALLOC_SO NAMES libjemalloc.so.2 jemalloc)
find_library(RINGLAB_TCMALLOC_SO NAMES libtcmalloc_minimal.so.4 tcmalloc_minimal)

# The HTTP client libraries of the library peers (Boost.Beast, cpprestsdk, cpp-httplib, curlpp).
include(RinglabPeerLibraries)
