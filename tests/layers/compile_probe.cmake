# cmake -DCXX=... -DPROBE=file.cpp -DHEADER=zlcore/x.hpp -DINCLUDES=a|b|c
#       -DEXPECT=compiles|refused -P compile_probe.cmake
# Compiles PROBE (syntax only) with the include directories INCLUDES. EXPECT
# "compiles": it must. "refused": it must fail, and for HEADER not being
# found; any other error is a broken probe and fails the test.
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" dirs "${INCLUDES}")
list(TRANSFORM dirs PREPEND "-I")
execute_process(COMMAND "${CXX}" -std=c++17 -fsyntax-only ${dirs} "${PROBE}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(EXPECT STREQUAL "compiles")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROBE} does not compile against this layer:\n${out}")
  endif()
elseif(EXPECT STREQUAL "refused")
  if(rc EQUAL 0)
    message(FATAL_ERROR "${PROBE} compiled, but ${HEADER} must be out of this layer's reach")
  endif()
  string(REPLACE "." "\\." header_re "${HEADER}")
  if(NOT out MATCHES "${header_re}(: No such file or directory|' file not found)")
    message(FATAL_ERROR "${PROBE} failed, but not for ${HEADER} being out of reach:\n${out}")
  endif()
else()
  message(FATAL_ERROR "EXPECT is '${EXPECT}'; allowed: compiles, refused")
endif()
