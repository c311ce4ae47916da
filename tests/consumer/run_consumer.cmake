# ctest driver for the *_consumer tests; run with cmake -P.
#
# Configures, builds and runs the outside project in CONSUMER_SOURCE_DIR, which
# takes shoal in one of three ways (MODE), and expects "consumer ok" from it:
#   package       installs the shoal build in SHOAL_BINARY_DIR into
#                 WORK_DIR/consumer-prefix and finds it there only (find_package)
#   subdirectory  add_subdirectory(SHOAL_SOURCE_DIR)
#   fetchcontent  FetchContent from the local path SHOAL_SOURCE_DIR
# Inputs (-D):
#   MODE SHOAL_SOURCE_DIR SHOAL_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR
#   CXX_COMPILER BUILD_TYPE
#   SANITIZE (optional: the -fsanitize= list the library was built with)
#   LAUNCHER (optional: compiler launcher, e.g. ccache, for the library rebuilds)
#   WERROR (optional: SHOAL_WERROR for the library rebuilds, so that they compile
#           as cleanly as the main build and with the same flags, ccache hits)
cmake_minimum_required(VERSION 3.22)

foreach(var MODE SHOAL_SOURCE_DIR SHOAL_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR
            CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()

set(prefix ${WORK_DIR}/consumer-prefix)
set(build ${WORK_DIR}/consumer-${MODE}-build)
file(REMOVE_RECURSE ${build})

# Runs a command; on failure prints its output and stops with the given message.
function(run_step what)
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${MODE} consumer: ${what} failed (${rc}):\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# Installs shoal into the scratch prefix and checks the exported targets.
function(install_into_prefix)
  file(REMOVE_RECURSE ${prefix})
  run_step("install" ${CMAKE_COMMAND} --install ${SHOAL_BINARY_DIR}
    --prefix ${prefix} --config ${BUILD_TYPE})
  # The installed package must not require anything shoal uses only privately.
  file(GLOB_RECURSE target_files ${prefix}/*/shoalTargets*.cmake)
  if(NOT target_files)
    message(FATAL_ERROR "install_consumer: no shoalTargets*.cmake under ${prefix}")
  endif()
  foreach(f IN LISTS target_files)
    file(READ ${f} text)
    if(text MATCHES "CLI11")
      message(FATAL_ERROR "install_consumer: ${f} references CLI11 (a private dependency)")
    endif()
  endforeach()
endfunction()

# find_package must have picked the package just installed, not some other copy.
function(expect_package_from_prefix)
  file(STRINGS ${build}/CMakeCache.txt shoal_dir REGEX "^shoal_DIR:")
  string(REGEX REPLACE "^shoal_DIR:[A-Z]+=" "" shoal_dir "${shoal_dir}")
  file(REAL_PATH ${prefix} real_prefix)
  file(REAL_PATH "${shoal_dir}" real_shoal_dir)
  string(FIND "${real_shoal_dir}" "${real_prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "install_consumer: found shoal in '${shoal_dir}', not under ${prefix}")
  endif()
endfunction()

set(configure_args
  -S ${CONSUMER_SOURCE_DIR} -B ${build} -G ${GENERATOR}
  -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  -DSHOAL_CONSUME=${MODE}
  -DSHOAL_SOURCE_DIR=${SHOAL_SOURCE_DIR}
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(MODE STREQUAL "package")
  install_into_prefix()
  list(APPEND configure_args -DCMAKE_PREFIX_PATH=${prefix})
endif()
if(LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
if(WERROR)
  list(APPEND configure_args -DSHOAL_WERROR=ON)
endif()
if(SANITIZE)
  # libshoal.a is instrumented, so the consumer must link the sanitizer runtimes.
  list(APPEND configure_args
    "-DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZE} -fno-omit-frame-pointer"
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE}")
endif()
run_step("configure" ${CMAKE_COMMAND} ${configure_args})
if(MODE STREQUAL "package")
  expect_package_from_prefix()
endif()

run_step("build" ${CMAKE_COMMAND} --build ${build} --config ${BUILD_TYPE} --parallel 2)

find_program(consumer_exe consumer PATHS ${build} ${build}/${BUILD_TYPE} NO_DEFAULT_PATH REQUIRED)
run_step("run" ${consumer_exe})
message(STATUS "${step_output}")
if(NOT step_output MATCHES "consumer ok")
  message(FATAL_ERROR "${MODE} consumer: consumer ran but did not print 'consumer ok':\n${step_output}")
endif()
