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
# CMake refuses in an imported target; each is made here from its header and its shared library.
if(NOT TARGET CppHttplib::cpp_httplib)
  find_path(RINGLAB_CPP_HTTPLIB_INCLUDE httplib.h)
  find_library(RINGLAB_CPP_HTTPLIB_LIBRARY cpp-httplib)
  if(NOT RINGLAB_CPP_HTTPLIB_INCLUDE OR NOT RINGLAB_CPP_HTTPLIB_LIBRARY)
    message(FATAL_ERROR "cpp-httplib not found: install libcpp-httplib-dev (tools/setup does)")
  endif()
  add_library(CppHttplib::cpp_httplib UNKNOWN IMPORTED)
  set_target_properties(CppHttplib::cpp_httplib PROPERTIES
    IMPORTED_LOCATION ${RINGLAB_CPP_HTTPLIB_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${RINGLAB_CPP_HTTPLIB_INCLUDE}
    # Debian's library was compiled with these (its cpp-httplib.pc says so); the header's declarations
    # (the SSL client classes, the decompressors) must match it, and it includes their headers.
    INTERFACE_COMPILE_DEFINITIONS "CPPHTTPLIB_OPENSSL_SUPPORT;CPPHTTPLIB_ZLIB_SUPPORT;CPPHTTPLIB_BROTLI_SUPPORT"
    INTERFACE_LINK_LIBRARIES "OpenSSL::SSL;OpenSSL::Crypto")
endif()

if(NOT TARGET Curlpp::curlpp)
  find_path(RINGLAB_CURLPP_INCLUDE curlpp/Easy.hpp)
  find_library(RINGLAB_CURLPP_LIBRARY curlpp)
  if(NOT RINGLAB_CURLPP_INCLUDE OR NOT RINGLAB_CURLPP_LIBRARY)
    message(FATAL_ERROR "curlpp not found: install libcurlpp-dev (tools/setup does)")
  endif()
  add_library(Curlpp::curlpp UNKNOWN IMPORTED)
  set_target_properties(Curlpp::curlpp PROPERTIES
    IMPORTED_LOCATION ${RINGLAB_CURLPP_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${RINGLAB_CURLPP_INCLUDE}
    INTERFACE_LINK_LIBRARIES PkgConfig::CURL)  # found before this file is included
endif()
