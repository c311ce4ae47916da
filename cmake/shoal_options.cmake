# Per-target build settings for shoal (STYLE.md point 12: no global flags).
#
#   shoal_apply_warnings(<target>)    warnings; -Werror when SHOAL_WERROR is ON
#   shoal_apply_sanitizers(<target>)  -fsanitize=${SHOAL_SANITIZE} (compile and link)
#   shoal_set_output_dirs(<target>)   executables in <shoal build>/bin, archives in /lib
#   shoal_apply_defaults(<target>)    all three of the above
#
# Everything is PRIVATE or a property of the one target: nothing leaks into
# shoal's exported interface or into a parent project's targets.
include_guard(GLOBAL)

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
