# The HTTP client libraries the library peers are built on (strategies/src/library_peer.hpp), each a
# Debian package (tools/setup installs them): Boost.Beast (headers of libboost-dev), the C++ REST SDK
# (libcpprest-dev), cpp-httplib (libcpp-httplib-dev) and curlpp (libcurlpp-dev). Included by
# RinglabDependencies.cmake, and by the installed ringlabConfig.cmake, since ringlab::strategies links
# them.
find_package(Boost 1.74 REQUIRED)
find_package(cpprestsdk REQUIRED)
# cpprest's http_client.h includes Boost.Asio's SSL stream, and cpp-httplib's header its OpenSSL client:
# the inline code calls OpenSSL, which Debian's cpprestsdk targets do not carry to the link.
find_package(OpenSSL REQUIRED)

# Debian's pkg-config files of cpp-httplib and curlpp give relative paths (-Iinclude -Llib/...), which
# CMake refuses in an imported target; each is made here from its header and its shared library, found
# into the cache variables <PREFIX>_INCLUDE and <PREFIX>_LIBRARY (set them to point elsewhere).
#   ringlab_import_library(TARGET PREFIX HEADER LIBRARY PACKAGE [DEFINITIONS defs...] [LINK libs...])
# PACKAGE: the Debian package named when either is missing.
function(ringlab_import_library target prefix header library package)
  if(TARGET ${target})
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 5 arg "" "" "DEFINITIONS;LINK")
  find_path(${prefix}_INCLUDE ${header})
  find_library(${prefix}_LIBRARY ${library})
  if(NOT ${prefix}_INCLUDE OR NOT ${prefix}_LIBRARY)
    message(FATAL_ERROR "${library} not found: install ${package} (tools/setup does)")
  endif()
  add_library(${target} UNKNOWN IMPORTED)
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION ${${prefix}_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${${prefix}_INCLUDE}
    INTERFACE_COMPILE_DEFINITIONS "${arg_DEFINITIONS}"
    INTERFACE_LINK_LIBRARIES "${arg_LINK}")
endfunction()

# Debian's library was compiled with these definitions (its cpp-httplib.pc says so); the header's
# declarations (the SSL client classes, the decompressors) must match it, and it includes their headers.
ringlab_import_library(CppHttplib::cpp_httplib RINGLAB_CPP_HTTPLIB httplib.h cpp-httplib libcpp-httplib-dev
  DEFINITIONS CPPHTTPLIB_OPENSSL_SUPPORT CPPHTTPLIB_ZLIB_SUPPORT CPPHTTPLIB_BROTLI_SUPPORT
  LINK OpenSSL::SSL OpenSSL::Crypto)
ringlab_import_library(Curlpp::curlpp RINGLAB_CURLPP curlpp/Easy.hpp curlpp libcurlpp-dev
  LINK PkgConfig::CURL)  # found before this file is included
