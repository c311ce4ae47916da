# Runs one command and checks how it ends: cmake -P run_expect.cmake with
#   -DCMD="a|b|c"        the command, arguments separated by |
#   -DEXPECT=zero|nonzero|N the exit status wanted: 0, any exit status but 0 (a
#                         death by signal is never accepted), or exactly N
#   -DREGEX=...           must match stdout+stderr (optional)
#   -DMAX_S=N             the command must end within N seconds
#   -DCOPY_FROM/-DCOPY_TO a file to copy first, with one byte appended (a
#                         different binary with the same behaviour)
if(DEFINED COPY_FROM)
  file(COPY_FILE ${COPY_FROM} ${COPY_TO})
  file(APPEND ${COPY_TO} "x")
  file(CHMOD ${COPY_TO} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
endif()
string(REPLACE "|" ";" CMD "${CMD}")
string(TIMESTAMP t0 "%s")
execute_process(COMMAND ${CMD}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${MAX_S})
string(TIMESTAMP t1 "%s")
math(EXPR took "${t1} - ${t0}")
message("exit: ${rc} after ${took} s\n--- stdout\n${out}\n--- stderr\n${err}")
if(rc MATCHES "timeout|Process terminated")
  message(FATAL_ERROR "did not end within ${MAX_S} s")
endif()
if(EXPECT STREQUAL "zero" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "expected exit status 0, got ${rc}")
endif()
if(EXPECT STREQUAL "nonzero" AND NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "expected a non-zero exit status, got '${rc}' (a crash is not an error exit)")
endif()
if(EXPECT STREQUAL "nonzero" AND rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit status, got 0")
endif()
if(EXPECT MATCHES "^[0-9]+$" AND NOT rc STREQUAL EXPECT)
  message(FATAL_ERROR "expected exit status ${EXPECT}, got '${rc}'")
endif()
# Requests left pending at MPI_Finalize, as the MPI library reports them
# (MPICH over UCX: "... was not returned to mpool"), and messages shoal
# received after its last run: never accepted.
if("${out}${err}" MATCHES "was not returned to mpool|arrived after shoal's last run")
  message(FATAL_ERROR "requests or messages were left over at MPI_Finalize")
endif()
if(DEFINED REGEX AND NOT "${out}${err}" MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match: ${REGEX}")
endif()
