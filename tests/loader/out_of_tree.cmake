# Installs this build into a scratch prefix, builds sdk/examples/oot-backend
# against it with find_package(zlcore), checks the installed zlcore loads it
# and the installed conformance kit passes it.
file(REMOVE_RECURSE "${ZL_WORK_DIR}")
set(prefix "${ZL_WORK_DIR}/prefix")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${ZL_BUILD_DIR}" --prefix "${prefix}"
  RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${ZL_EXAMPLE_DIR}" -B "${ZL_WORK_DIR}/build"
  "-DCMAKE_PREFIX_PATH=${prefix}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure of the out-of-tree backend failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${ZL_WORK_DIR}/build"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "build of the out-of-tree backend failed:\n${out}\n${err}")
endif()
execute_process(COMMAND "${prefix}/bin/zlcore" --backend-dir "${ZL_WORK_DIR}/build" backends --json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "zlcore backends failed (${rc}): ${err}")
endif()
string(JSON name GET "${out}" backends 0 name)
string(JSON nrej LENGTH "${out}" rejected)
if(NOT name STREQUAL "oot" OR NOT nrej EQUAL 0)
  message(FATAL_ERROR "expected backend 'oot' and no rejections, got:\n${out}")
endif()
execute_process(COMMAND "${prefix}/bin/zlcore" --backend-dir "${ZL_WORK_DIR}/build" devices --backend OOT --json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(JSON dev GET "${out}" devices 0 name)
if(NOT rc EQUAL 0 OR NOT dev STREQUAL "Out-of-tree Example Device")
  message(FATAL_ERROR "devices of the out-of-tree backend: rc ${rc}\n${out}")
endif()
# ABI 1.2 through the installed SDK: typed attributes and the state query.
string(JSON abi GET "${out}" abi)
string(JSON arch GET "${out}" devices 0 attributes architecture)
string(JSON clock GET "${out}" devices 0 state clock_sm_mhz)
if(NOT abi STREQUAL "1.2" OR NOT arch STREQUAL "example-arch" OR NOT clock EQUAL 1000)
  message(FATAL_ERROR "the out-of-tree backend should speak ABI 1.2 with attributes and state:\n${out}")
endif()
# The installed conformance kit, through the test the package's
# zlcore_add_conformance_test made: every rule passes or does not apply.
get_filename_component(cmake_bin "${CMAKE_COMMAND}" DIRECTORY)
execute_process(COMMAND "${cmake_bin}/ctest" --output-on-failure WORKING_DIRECTORY "${ZL_WORK_DIR}/build"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "zlcore_conformance.oot \\.* +Passed")
  message(FATAL_ERROR "the conformance kit on the out-of-tree backend (${rc}):\n${out}\n${err}")
endif()
foreach(f bin/zlcore-conform include/zl/backend.h include/zl/backend_kit.h include/zl/backend_kit.hpp share/doc/zlcore/backend-abi.md)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "the SDK install lacks ${f}")
  endif()
endforeach()
message(STATUS "out-of-tree backend 'oot' built with find_package(zlcore) and loaded")
