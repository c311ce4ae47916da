# Runs two commands and checks that both succeed and print the same value of
# one JSON field (two implementations or job shapes of one problem must give
# the same answer): cmake -P same_field.cmake with
#   -DCMD_A="a|b|c" -DCMD_B="..."  the commands, arguments separated by |
#   -DFIELD=name                   the JSON field compared ("name":value)
#   -DMAX_S=N                      each command must end within N seconds
foreach(which A B)
  string(REPLACE "|" ";" cmd "${CMD_${which}}")
  execute_process(COMMAND ${cmd}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${MAX_S})
  message("command ${which}: exit ${rc}\n--- stdout\n${out}\n--- stderr\n${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command ${which}: expected exit status 0, got '${rc}'")
  endif()
  if(NOT out MATCHES "\"${FIELD}\":(\"[^\"]*\"|[^,}]*)")
    message(FATAL_ERROR "command ${which}: no JSON field \"${FIELD}\" in its output")
  endif()
  set(value_${which} "${CMAKE_MATCH_1}")
endforeach()
if(NOT value_A STREQUAL value_B)
  message(FATAL_ERROR "\"${FIELD}\" differs: ${value_A} (A) against ${value_B} (B)")
endif()
message("\"${FIELD}\" is ${value_A} in both")
