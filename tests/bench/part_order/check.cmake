# cmake -DBUILD_DIR=... -P check.cmake (tests/bench/CMakeLists.txt, test bench_part_order): builds the
# two probes compiled as sources of bench's core part. The core header must compile (else the probe
# proves nothing) and the report header must fail as not found (any other failure is not the order).
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target bench_part_order_allowed
                RESULT_VARIABLE allowed_status OUTPUT_VARIABLE allowed_output ERROR_VARIABLE allowed_output)
if(NOT allowed_status EQUAL 0)
  message(FATAL_ERROR "a core source including a core header did not build:\n${allowed_output}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target bench_part_order_refused
                RESULT_VARIABLE refused_status OUTPUT_VARIABLE refused_output ERROR_VARIABLE refused_output)
if(refused_status EQUAL 0)
  message(FATAL_ERROR "a core source including a report header built: the parts' order is not enforced")
endif()
if(NOT refused_output MATCHES "ringlab/bench/report/reporters\\.hpp")
  message(FATAL_ERROR "a core source including a report header failed, but not on that header:\n${refused_output}")
endif()
message(STATUS "core cannot include report: ${refused_status}")
