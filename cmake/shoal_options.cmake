# Per-target build settings for shoal (STYLE.md point 12: no global flags).
#
#   shoal_apply_warnings(<target>)    warnings; -Werror when SHOAL_WERROR is ON
#   shoal_apply_sanitizers(<target>)  -fsanitize=${SHOAL_SANITIZE} (compile and link)
#   shoal_set_output_dirs(<target>)   executables in <shoal build>/bin, archives in /lib
#   shoal_apply_defaults(<target>)    all three of the above
#   SHOAL_TEST_TIME_SCALE             how much longer than in a Release build a test
#                                     may take (4 in sanitizer builds, else 1)
#
# Everything is PRIVATE or a property of the one target: nothing leaks into
# shoal's exported interface or into a parent project's targets.
include_guard(GLOBAL)

# Test time limits are written for a Release build. A Debug build with ASan and
# UBSan runs the apps 3-10x slower, and a tight limit would then report a slow
# test as a hang (issue 18: seven time-limit failures in one `make asan` run), so
# every limit a test sets through shoal_app_test, shoal_mpi_test or the unit
# test discovery is multiplied by this. Hang detection stays on: only the bound
# moves.
if(SHOAL_SANITIZE)
  set(shoal_default_time_scale 4)
else()
  set(shoal_default_time_scale 1)
endif()
set(SHOAL_TEST_TIME_SCALE ${shoal_default_time_scale} CACHE STRING
    "Factor applied to every test's time limit (default 4 with SHOAL_SANITIZE, else 1)")
if(NOT SHOAL_TEST_TIME_SCALE MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR
    "SHOAL_TEST_TIME_SCALE='${SHOAL_TEST_TIME_SCALE}': expected a positive whole number")
endif()

# Executables go to build/bin/<name>, where the Makefile, the bench harness and
# the docs run them. Set per target rather than through the global
# CMAKE_*_OUTPUT_DIRECTORY so that a project including shoal through
# add_subdirectory or FetchContent keeps its own layout. shoal_BINARY_DIR (from
# project(shoal)) is shoal's build folder whichever directory calls this.
function(shoal_set_output_dirs target)
  set_target_properties(${target} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${shoal_BINARY_DIR}/bin
    LIBRARY_OUTPUT_DIRECTORY ${shoal_BINARY_DIR}/lib
    ARCHIVE_OUTPUT_DIRECTORY ${shoal_BINARY_DIR}/lib)
endfunction()

function(shoal_apply_warnings target)
  if(MSVC)
    target_compile_options(${target} PRIVATE /W4 $<$<BOOL:${SHOAL_WERROR}>:/WX>)
    return()
  endif()
  # Not -Wshadow or -Wconversion: too noisy for the signal they give in this code base.
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic
    -Wnon-virtual-dtor -Woverloaded-virtual
    -Wformat=2 -Wimplicit-fallthrough)
  if(SHOAL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # GCC 12's flow-sensitive warnings fire falsely inside libstdc++ at -O2
      # (e.g. GCC PR 105329, 105651, 106199); keep them visible but not fatal.
      target_compile_options(${target} PRIVATE
        -Wno-error=maybe-uninitialized -Wno-error=array-bounds
        -Wno-error=stringop-overflow -Wno-error=stringop-overread
        -Wno-error=restrict -Wno-error=dangling-pointer)
    endif()
  endif()
endfunction()

function(shoal_apply_sanitizers target)
  if(NOT SHOAL_SANITIZE)
    return()
  endif()
  # No recovery: a sanitizer report must fail the test that triggered it.
  set(flags -fsanitize=${SHOAL_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_compile_options(${target} PRIVATE ${flags})
  target_link_options(${target} PRIVATE -fsanitize=${SHOAL_SANITIZE})
endfunction()

function(shoal_apply_defaults target)
  shoal_apply_warnings(${target})
  shoal_apply_sanitizers(${target})
  shoal_set_output_dirs(${target})
endfunction()
