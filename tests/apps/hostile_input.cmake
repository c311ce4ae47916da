# Hostile command lines the driver refuses for every app (issue 16): an empty
# value (CLI11 alone takes it as "keep the default"), a value of binary bytes
# (escaped in the message, not sent raw to the terminal), and results that
# cannot be written (status 1 with a message, not 0 with the output lost).
if(NOT TARGET shoal-driver)
  return()
endif()

foreach(app_flag "pointerchase;--hold-us" "uts;--seed" "gups;--log-table")
  list(GET app_flag 0 app)
  list(GET app_flag 1 flag)
  shoal_app_test(driver_empty_value_${app} EXPECT 2 MAX_S 10
    REGEX "shoal ${app}: error: ${flag}: empty value"
    COMMAND sh -c "exec \"$0\" ${app} --cores 1 ${flag} ''" $<TARGET_FILE:shoal-driver>)
endforeach()
shoal_app_test(driver_binary_value_escaped EXPECT 2 MAX_S 10
  REGEX "shoal intsort: error: --class: \\\\x01\\\\x1bX not in"
  COMMAND sh -c "exec \"$0\" intsort --cores 1 --class \"$(printf '\\001\\033X')\"" $<TARGET_FILE:shoal-driver>)
shoal_app_test(driver_summary_stdout_full EXPECT 3 MAX_S 10
  REGEX "shoal: error: cannot write the gups report to standard output: No space left on device"
  COMMAND sh -c "exec \"$0\" gups --cores 1 --log-table 10 > /dev/full" $<TARGET_FILE:shoal-driver>)
