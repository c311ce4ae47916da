# A precompiled header for the library (src/).
#
#   SHOAL_PCH                    AUTO (default): ON unless the compiler launcher
#                                is ccache; ON; OFF
#   shoal_library_pch(<target>)  <target> compiles with the precompiled header of
#                                shoal_library_pch_headers (PRIVATE: not part of
#                                the exported target; nothing when SHOAL_PCH is off)
#
# The library's sources spend most of their compile time parsing headers (31
# files: 27 of 31 CPU-s at -O3 is -fsyntax-only). One precompiled header of
# the standard library and fmt parts most of them include cut the library's
# Release build from 34.8 to 26.4 CPU-s (24.7 + 1.7 to make the header), and
# the library is compiled in each tree make test builds (Release, ASan, TSan)
# and again by the subdirectory and FetchContent consumer tests (38.1 to 29.8
# CPU-s for one consumer test).
#
# Only system headers: CMake marks a precompiled header as a system header,
# which silences warnings inside it, so shoal's own headers stay out (adding
# them saved no more) and -Wall -Werror still sees every line of shoal.
# The header is force-included: a source that forgets one of these includes
# still compiles here; a SHOAL_PCH=OFF build (and every ccache build) catches it.
#
# Off under ccache by default: ccache cannot cache a compile that reads a
# precompiled header unless its sloppiness allows pch_defines,time_macros, and
# without those every library compile would run uncached.
#
# Not for the test programs: a shared header (REUSE_FROM) of GoogleTest,
# GoogleMock and shoal saved 12 CPU-s over 43 test programs at -O1 (their time
# is code generation) against 7 CPU-s to make it, and would have silenced
# warnings in shoal's headers as the tests instantiate them.
include_guard(GLOBAL)

set(SHOAL_PCH AUTO CACHE STRING
    "Precompiled header for the library: AUTO (ON unless the compiler launcher is ccache), ON, OFF")
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

# What most of the library's sources include (counted from their dependency
# files: each of these is in 16 to 31 of the 31).
set(shoal_library_pch_headers
  <algorithm> <array> <atomic> <memory> <mutex> <ostream> <string> <vector>
  <fmt/core.h>)

function(shoal_library_pch target)
  if(shoal_pch_on)
    target_precompile_headers(${target} PRIVATE ${shoal_library_pch_headers})
  endif()
endfunction()
