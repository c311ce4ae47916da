# bale histogram: `shoal histogram` and shoal-baseline-histogram.
#
# Every run validates itself against an independent reference: each core
# (rank) regenerates every stream sequentially and compares its counters one
# by one, and the counters must sum to N * cores ("validated":true,
# "wrong_counters":0). Runs on 1, 2 and 3 cores of one process and on 2
# processes (1 and 2 cores each), both implementations; a one-counter slice
# per core (T = 1); the hidden --corrupt fault injection must make validation
# fail (exit 1); bad sizes exit 2 naming the flag; the baseline on 1 and 2
# ranks, with a round size that does not divide N.
if(NOT TARGET shoal-driver OR NOT "histogram" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

# The JSON report of a validated run (keys in JSON order).
function(histogram_ok out cores impl ranks n t)
  set(${out} "\"cores\":${cores},\"impl\":\"${impl}\",.*\"ranks\":${ranks},.*\"requests_per_core\":${n},.*\"table_per_core\":${t},.*\"validated\":true,.*\"wrong_counters\":0" PARENT_SCOPE)
endfunction()

foreach(cores 1 2 3)
  histogram_ok(re ${cores} channel 1 200000 1000)
  shoal_app_test(histogram_channel_1x${cores} EXPECT zero MAX_S 30 REGEX "${re}"
    COMMAND shoal-driver histogram --cores ${cores} --requests-per-core 200000
            --table-per-core 1000 --json)
endforeach()
histogram_ok(re 2 channel 2 200000 5000)
shoal_app_test(histogram_channel_2x1 NP 2 EXPECT zero MAX_S 30 REGEX "${re}"
  COMMAND shoal-driver histogram --cores 1 --requests-per-core 200000 --table-per-core 5000
          --seed 7 --json)
histogram_ok(re 4 channel 2 100000 1000)
shoal_app_test(histogram_channel_2x2 NP 2 EXPECT zero MAX_S 30 REGEX "${re}"
  COMMAND shoal-driver histogram --cores 2 --requests-per-core 100000 --table-per-core 1000 --json)
# The delegate implementation (Grappa's async delegates).
histogram_ok(re 2 delegate 1 100000 1000)
shoal_app_test(histogram_delegate_1x2 EXPECT zero MAX_S 30 REGEX "${re}"
  COMMAND shoal-driver histogram --impl delegate --cores 2 --requests-per-core 100000 --json)
histogram_ok(re 3 delegate 1 100000 1000)
shoal_app_test(histogram_delegate_1x3 EXPECT zero MAX_S 30 REGEX "${re}"
  COMMAND shoal-driver histogram --impl delegate --cores 3 --requests-per-core 100000 --json)
histogram_ok(re 2 delegate 2 100000 1000)
shoal_app_test(histogram_delegate_2x1 NP 2 EXPECT zero MAX_S 30 REGEX "${re}"
  COMMAND shoal-driver histogram --impl delegate --cores 1 --requests-per-core 100000 --json)
histogram_ok(re 3 channel 1 50000 1)
shoal_app_test(histogram_tiny_table_1x3 EXPECT zero MAX_S 30 REGEX "${re}"
  COMMAND shoal-driver histogram --cores 3 --requests-per-core 50000 --table-per-core 1 --json)
shoal_app_test(histogram_summary EXPECT zero MAX_S 30
  REGEX "histogram \\(channel\\).*problem +2000 entries \\(1000 per core\\), 200000 increments.*rate +[0-9.e+-]+ M updates/s.*validation +PASSED"
  COMMAND shoal-driver histogram --cores 2 --requests-per-core 100000)

# Fault injection: one counter spoiled after the timed phase must be caught.
shoal_app_test(histogram_corrupt_fails EXPECT 1 MAX_S 30
  REGEX "\"validated\":false,\"validation\":\"1 of 2000 counters differ"
  COMMAND shoal-driver histogram --cores 2 --requests-per-core 10000 --corrupt --json)
shoal_app_test(histogram_corrupt_fails_2x1 NP 2 EXPECT 1 MAX_S 30
  REGEX "\"validated\":false"
  COMMAND shoal-driver histogram --cores 1 --requests-per-core 10000 --corrupt --json)

# Bad input: a clear message naming the flag and exit status 2.
shoal_app_test(histogram_bad_table_zero EXPECT 2 MAX_S 30
  REGEX "shoal histogram: error: --table-per-core 0: out of range; expected an integer in \\[1, 2147483648\\]"
  COMMAND shoal-driver histogram --cores 2 --table-per-core 0)
shoal_app_test(histogram_bad_requests_negative NP 2 EXPECT 2 MAX_S 30
  REGEX "shoal histogram: error: --requests-per-core -5: out of range"
  COMMAND shoal-driver histogram --cores 1 --requests-per-core -5)
shoal_app_test(histogram_bad_requests_text EXPECT 2 MAX_S 30 REGEX "--requests-per-core"
  COMMAND shoal-driver histogram --requests-per-core many)
shoal_app_test(histogram_table_exceeds_memory EXPECT 2 MAX_S 30
  REGEX "shoal histogram: error: --table-per-core 2147483648 --requests-per-core 1000000: needs 64 GiB per process \\(2 participants\\), more than this machine's"
  COMMAND shoal-driver histogram --cores 2 --table-per-core 2147483648)

if(TARGET shoal-baseline-histogram)
  foreach(np 1 2)
    histogram_ok(re ${np} mpi-alltoallv ${np} 200000 1000)
    shoal_app_test(histogram_baseline_np${np} NP ${np} EXPECT zero MAX_S 30 REGEX "${re}"
      COMMAND shoal-baseline-histogram --requests-per-core 200000 --round 777 --impl channel --json)
  endforeach()
  shoal_app_test(histogram_baseline_corrupt_fails NP 2 EXPECT 1 MAX_S 30
    REGEX "\"validated\":false,\"validation\":\"1 of 2000 counters differ"
    COMMAND shoal-baseline-histogram --requests-per-core 10000 --corrupt --json)
  shoal_app_test(histogram_baseline_bad_table EXPECT 2 MAX_S 30
    REGEX "shoal-baseline-histogram: error: --table-per-core 2147483649: out of range"
    COMMAND shoal-baseline-histogram --table-per-core 2147483649)
  shoal_app_test(histogram_baseline_bad_round EXPECT 2 MAX_S 30
    REGEX "shoal-baseline-histogram: error: --round 0: out of range"
    COMMAND shoal-baseline-histogram --round 0)
endif()
