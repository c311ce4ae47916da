# --idle: how a core with nothing to run waits (src/runtime/idle_choice.hpp).
# Every policy gives the validated table at 1 x 2, 2 x 2 and 4 x 1; --verbose
# names the policy in use and why; a bad word is refused naming the flag.
# gups_idle_oversubscribed_16x2 is the bug: 16 ranks x 2 cores on a 2-CPU
# machine never ended within 100 s (Open MPI's MPI_Test yielded the CPU
# while a core held the transport's lock); now a few seconds.
if(NOT TARGET shoal-driver OR NOT "gups" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

foreach(idle spin yield sleep)
  gups_ok(re 2 channel 1)
  shoal_app_test(gups_idle_${idle}_1x2 EXPECT zero MAX_S 30 REGEX "${re}"
    COMMAND shoal-driver gups --cores 2 --log-table 14 --idle ${idle} --json)
  gups_ok(re 4 channel 2)  # cores of the job, ranks
  shoal_app_test(gups_idle_${idle}_2x2 NP 2 EXPECT zero MAX_S 30 REGEX "${re}"
    COMMAND shoal-driver gups --cores 2 --log-table 14 --idle ${idle} --json)
  gups_ok(re 4 channel 4)
  shoal_app_test(gups_idle_${idle}_4x1 NP 4 EXPECT zero MAX_S 60 REGEX "${re}"
    COMMAND shoal-driver gups --cores 1 --log-table 14 --idle ${idle} --json)
endforeach()

shoal_app_test(gups_idle_named_in_verbose EXPECT zero MAX_S 30
  REGEX "shoal: idle cores: sleep \\(--idle sleep\\)"
  COMMAND shoal-driver gups --cores 2 --log-table 10 --idle sleep --verbose)
shoal_app_test(gups_idle_auto_says_why_1x2 EXPECT zero MAX_S 30
  REGEX "--idle +auto.*shoal: idle cores: [a-z0-9 ,]+ \\(auto: [0-9]+ (ranks on this node x 2 cores|cores > [0-9]+ CPUs in this rank)"
  COMMAND shoal-driver gups --cores 2 --log-table 10 --verbose)
shoal_app_test(gups_idle_auto_counts_the_ranks_4x1 NP 4 EXPECT zero MAX_S 60
  REGEX "shoal: idle cores: [a-z0-9 ,]+ \\(auto: 4 ranks on this node x 1 cores"
  COMMAND shoal-driver gups --cores 1 --log-table 10 --verbose)
shoal_app_test(gups_idle_bad_word EXPECT 2 MAX_S 30
  REGEX "--idle: expected one of auto, spin, yield, sleep, got 'nap'"
  COMMAND shoal-driver gups --cores 2 --idle nap)

gups_ok(re 32 channel 16)
shoal_app_test(gups_idle_oversubscribed_16x2 NP 16 EXPECT zero MAX_S 60 REGEX "${re}"
  COMMAND shoal-driver gups --cores 2 --log-table 12 --json)
if(TEST gups_idle_oversubscribed_16x2)
  set_tests_properties(gups_idle_oversubscribed_16x2 PROPERTIES RUN_SERIAL TRUE)
endif()
