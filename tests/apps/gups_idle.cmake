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

# --bind (src/runtime/cpu_binding.hpp). Open MPI's mpirun -np 1 binds its
# rank to one core, so --cores 2 ran both cores on one CPU (an empty barrier
# 42 us instead of 1.3 us); auto widens the mask to a CPU per core, keep
# does not. Both give the validated table. (--bind-to is Open MPI's spelling.)
set(mpiexec_real "")
if(MPIEXEC_EXECUTABLE)
  file(REAL_PATH "${MPIEXEC_EXECUTABLE}" mpiexec_real)
endif()
if(SHOAL_HAVE_MPI AND mpiexec_real MATCHES "openmpi|orterun|prterun")
  set(shoal_exe $<TARGET_FILE:shoal-driver>)
  gups_ok(re 2 channel 1)
  shoal_app_test(gups_bind_auto_widens_a_bound_rank EXPECT zero MAX_S 30
    REGEX "shoal: cpus: CPUs 0-1 \\(auto: 2 cores > 1 CPUs in the launcher's mask; local rank 0 of 1\\)"
    COMMAND ${SHOAL_MPIEXEC} --bind-to core -np 1 ${shoal_exe} gups --cores 2 --log-table 12 --verbose)
  shoal_app_test(gups_bind_keep_leaves_the_mask EXPECT zero MAX_S 30
    REGEX "shoal: cpus: kept \\(--bind keep\\)"
    COMMAND ${SHOAL_MPIEXEC} --bind-to core -np 1 ${shoal_exe} gups --cores 2 --log-table 12 --verbose --bind keep)
  shoal_app_test(gups_bind_oversubscribed_kept_2x2 NP 2 EXPECT zero MAX_S 30
    REGEX "shoal: cpus: kept \\(auto: 2 ranks on this node x 2 cores > [0-9]+ online CPUs"
    COMMAND shoal-driver gups --cores 2 --log-table 12 --verbose)
  # Only rank 1 is wrong: the job ends, naming the word.
  shoal_app_test(gups_bind_bad_word_rank1_only EXPECT 2 MAX_S 30
    REGEX "--bind: expected one of auto, keep, got 'x'"
    COMMAND ${SHOAL_MPIEXEC} -np 1 ${shoal_exe} gups --cores 1 --log-table 10
            : -np 1 ${shoal_exe} gups --cores 1 --log-table 10 --bind x)
endif()
shoal_app_test(gups_bind_bad_word EXPECT 2 MAX_S 30
  REGEX "--bind: expected one of auto, keep, got 'none'"
  COMMAND shoal-driver gups --cores 2 --bind none)
