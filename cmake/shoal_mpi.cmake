# Finds MPI once for the whole build, as SHOAL_WITH_MPI asks:
#
#   AUTO (default)  use MPI when found; without it shoal builds for one process
#   ON              require MPI: configuring fails when it is missing
#   OFF             do not look for MPI
#
# Sets SHOAL_HAVE_MPI (ON/OFF; a cache entry so that a parent project sees it
# too) and, when ON, makes MPI::MPI_CXX and MPIEXEC_EXECUTABLE available to
# every directory of shoal. The package config (shoalConfig.cmake) repeats the
# search for find_package(shoal) users when SHOAL_HAVE_MPI is ON.
include_guard(GLOBAL)

string(TOUPPER "${SHOAL_WITH_MPI}" shoal_mpi_mode)
if(shoal_mpi_mode MATCHES "^(ON|YES|TRUE|Y|1)$")
  set(shoal_mpi_mode ON)
elseif(shoal_mpi_mode MATCHES "^(OFF|NO|FALSE|N|0|)$")
  set(shoal_mpi_mode OFF)
elseif(NOT shoal_mpi_mode STREQUAL "AUTO")
  message(FATAL_ERROR "SHOAL_WITH_MPI='${SHOAL_WITH_MPI}': expected AUTO, ON or OFF")
endif()

set(shoal_have_mpi OFF)
if(NOT shoal_mpi_mode STREQUAL "OFF")
  # The C API only: no deprecated C++ bindings.
  set(MPI_CXX_SKIP_MPICXX ON)
  if(shoal_mpi_mode STREQUAL "ON")
    find_package(MPI COMPONENTS CXX REQUIRED)
  else()
    find_package(MPI COMPONENTS CXX)
  endif()
  if(MPI_CXX_FOUND)
    set(shoal_have_mpi ON)
  endif()
endif()
set(SHOAL_HAVE_MPI ${shoal_have_mpi} CACHE INTERNAL "Whether shoal builds its MPI transport")
message(STATUS "shoal: MPI transport ${SHOAL_HAVE_MPI} (SHOAL_WITH_MPI=${SHOAL_WITH_MPI})")
unset(shoal_mpi_mode)
unset(shoal_have_mpi)
