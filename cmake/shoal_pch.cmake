# Precompiled headers for the library (src/) and the test programs (tests/,
# tests/mpi/).
#
#   SHOAL_PCH                  AUTO (default): ON unless the compiler launcher is
#                              ccache; ON; OFF
#   shoal_library_pch(<target>)  the library's own precompiled header (PRIVATE:
#                              not part of the exported target)
#   shoal_test_pch(<target>)   <target> uses the one precompiled header of the
#                              test programs (nothing when SHOAL_PCH is off)
#
# The library's sources spend most of their compile time parsing the standard
# library, fmt and shoal's core headers (31 files: 27 of 31 CPU-s at -O3 is
# -fsyntax-only); one precompiled header of those cut the library's Release
# build from 36.6 to 26.0 CPU-s, and the library is compiled in each tree
# make test builds (Release, ASan, TSan) and again by the subdirectory and
# FetchContent consumer tests.
#
# Every test program parses GoogleTest, GoogleMock and shoal's public headers,
# about 1.7 CPU-s of a test's 2-10 before any of its own code: one precompiled
# header, built once per tree by shoal_test_pch_host (an object library of one
# empty file, flags like the test programs'), is reused by each of them
# (REUSE_FROM). GCC checks that the flags match and -Winvalid-pch, which CMake
# adds, turns a mismatch into a warning (an error under SHOAL_WERROR), so a
# program whose flags drift from the host's fails loudly rather than parsing
# twice in silence.
#
# The precompiled header is force-included: a test program that forgets an
# include of these headers still compiles here; a SHOAL_PCH=OFF build (and
# every ccache build, see AUTO) catches it.
#
# Off under ccache by default: ccache cannot cache a compile that reads a
# precompiled header unless its sloppiness allows pch_defines,time_macros, and
# without those every test compile would run uncached.
include_guard(GLOBAL)

set(SHOAL_PCH AUTO CACHE STRING
    "Precompiled headers for the test programs: AUTO (ON unless the compiler launcher is ccache), ON, OFF")
set_property(CACHE SHOAL_PCH PROPERTY STRINGS AUTO ON OFF)
if(SHOAL_PCH STREQUAL "AUTO")
  if(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache")
    set(shoal_pch_on OFF)
  else()
    set(shoal_pch_on ON)
  endif()
elseif(SHOAL_PCH MATCHES "^(ON|OFF)$")
  set(shoal_pch_on ${SHOAL_PCH})
else()
  message(FATAL_ERROR "SHOAL_PCH='${SHOAL_PCH}': expected AUTO, ON or OFF")
endif()

# The headers, in this order, at the top of every test program.
set(shoal_test_pch_headers
  <gtest/gtest.h>
  <gmock/gmock.h>
  <fmt/format.h>
  [["shoal/shoal.hpp"]])

# What most of the library's sources include (counted from their dependency
# files: each of these is in 15 to 31 of the 31).
set(shoal_library_pch_headers
  <algorithm> <array> <atomic> <memory> <mutex> <ostream> <string> <vector>
  <fmt/core.h>
  [["shoal/config.hpp"]]
  [["shoal/stats.hpp"]]
  [["shoal/closure.hpp"]]
  [["shoal/detail/core_state.hpp"]]
  [["shoal/runtime.hpp"]])

function(shoal_library_pch target)
  if(shoal_pch_on)
    target_precompile_headers(${target} PRIVATE ${shoal_library_pch_headers})
  endif()
endfunction()

function(shoal_test_pch target)
  if(NOT shoal_pch_on)
    return()
  endif()
  if(NOT TARGET shoal_test_pch_host)
    set(empty ${CMAKE_CURRENT_BINARY_DIR}/shoal_test_pch_host.cpp)
    if(NOT EXISTS ${empty})
      file(WRITE ${empty} "// Host of the test programs' precompiled header (cmake/shoal_pch.cmake).\n")
    endif()
    add_library(shoal_test_pch_host OBJECT ${empty})
    target_link_libraries(shoal_test_pch_host PRIVATE shoal::shoal GTest::gtest GTest::gmock)
    shoal_apply_defaults(shoal_test_pch_host)
    target_precompile_headers(shoal_test_pch_host PRIVATE ${shoal_test_pch_headers})
  endif()
  target_precompile_headers(${target} REUSE_FROM shoal_test_pch_host)
endfunction()
