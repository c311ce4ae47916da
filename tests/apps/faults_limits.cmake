# Limits of one process refused (or warned about) at start-up, before anything
# runs, naming the flag, variable or limit (issue 16).
if(NOT TARGET shoal-driver)
  return()
endif()
set(shoal_exe $<TARGET_FILE:shoal-driver>)
# 16 KiB (the reported crash) not in sanitizer builds: AddressSanitizer's own
# start-up, before any shoal code, sometimes overflows so small a stack; nor
# against MPICH, whose libraries' loading does (even `shoal --help` dies):
# 32 KiB there. Both run with an empty environment (env -i): the start-up
# before main() shares the stack with the environment's strings, and under
# ctest's own environment 16 KiB overflowed there in about 1 run of 60
# (a 2 KB variable added: 1 in 5, with or without shoal's latest code).
if(SHOAL_MPIEXEC MATCHES "mpich")
  shoal_app_test(faults_small_stack_limit_refused EXPECT 2 MAX_S 20
    REGEX "the stack size limit \\(ulimit -s\\) is 32 KiB; shoal's threads need at least 1024 KiB"
    COMMAND /usr/bin/env -i /bin/sh -c "ulimit -s 32 && exec ${shoal_exe} gups --log-table 10")
elseif(NOT SHOAL_SANITIZE MATCHES "address|thread")
  shoal_app_test(faults_small_stack_limit_refused EXPECT 2 MAX_S 20
    REGEX "the stack size limit \\(ulimit -s\\) is 16 KiB; shoal's threads need at least 1024 KiB"
    COMMAND /usr/bin/env -i /bin/sh -c "ulimit -s 16 && exec ${shoal_exe} gups --log-table 10")
endif()
shoal_app_test(faults_small_stack_limit_512_refused EXPECT 2 MAX_S 20
  REGEX "the stack size limit \\(ulimit -s\\) is 512 KiB; shoal's threads need at least 1024 KiB"
  COMMAND /bin/sh -c "ulimit -s 512 && exec ${shoal_exe} gups --log-table 10")
shoal_app_test(faults_stack_kb_16_refused EXPECT 2 MAX_S 20
  REGEX "--stack-kb: expected a multiple of 4 in \\[32, 1048576\\], got '16'"
  COMMAND shoal-driver gups --log-table 10 --stack-kb 16)
shoal_app_test(faults_unknown_shoal_variable_warned EXPECT zero MAX_S 20
  REGEX "shoal: warning: unknown environment variable SHOAL_COREZ ignored \\(closest known: SHOAL_CORES"
  COMMAND env SHOAL_COREZ=2 ${shoal_exe} gups --log-table 10 --cores 1)
