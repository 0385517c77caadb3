# `cmake --install BUILD [--prefix DIR]`: the libraries, their headers, the bench and server binaries,
# and a CMake package (lib/cmake/ringlab/ringlabConfig.cmake) that code outside the tree finds with
# find_package(ringlab): ringlab::base, ringlab::net, ringlab::http, ringlab::json, ringlab::strategies,
# ringlab::link, ringlab::bench (and the parts it links, ringlab::bench_core ... ringlab::bench_app).
# examples/my_strategy builds against it; tests/install checks that it does.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(ringlab_base PROPERTIES EXPORT_NAME base)
set_target_properties(ringlab_net PROPERTIES EXPORT_NAME net)
set_target_properties(ringlab_http PROPERTIES EXPORT_NAME http)
set_target_properties(ringlab_json PROPERTIES EXPORT_NAME json)
set_target_properties(ringlab_strategies PROPERTIES EXPORT_NAME strategies)
set_target_properties(ringlab_link PROPERTIES EXPORT_NAME link)
set_target_properties(ringlab_bench PROPERTIES EXPORT_NAME bench)
foreach(part ${RINGLAB_BENCH_PARTS})
  set_target_properties(ringlab_bench_${part} PROPERTIES EXPORT_NAME bench_${part})
endforeach()
list(TRANSFORM RINGLAB_BENCH_PARTS PREPEND ringlab_bench_ OUTPUT_VARIABLE RINGLAB_BENCH_PART_TARGETS)
set_target_properties(ringlab_defaults PROPERTIES EXPORT_NAME defaults)

# What an installed consumer must compile and link with, and the in-tree targets get from
# ringlab_defaults (INSTALL_INTERFACE only, so the build's own command lines do not change): the
# simdjson kernel flags, without which the parser types of json/ headers differ from the library's
# and nothing links; and the sanitizers of a sanitized build.
target_compile_options(ringlab_json INTERFACE $<INSTALL_INTERFACE:${RINGLAB_SIMD_FLAGS}>)
if(RINGLAB_SANITIZE)
  target_compile_options(ringlab_net INTERFACE $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
  target_link_options(ringlab_net INTERFACE $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
endif()

install(TARGETS ringlab_base ringlab_net ringlab_http ringlab_json ringlab_strategies ringlab_link ringlab_bench ${RINGLAB_BENCH_PART_TARGETS} llhttp ringlab_defaults
        EXPORT ringlabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(layer base net http json strategies link)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
foreach(part ${RINGLAB_BENCH_PARTS})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/bench/src/${part}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(TARGETS bench server wire RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT ringlabTargets NAMESPACE ringlab:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringlab)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ringlabConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ringlabConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringlab)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ringlabConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ringlabConfig.cmake ${PROJECT_BINARY_DIR}/ringlabConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/RinglabPeerLibraries.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringlab)
