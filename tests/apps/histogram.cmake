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

# The runs both bale table apps share (tests/apps/CMakeLists.txt).
bale_table_tests(histogram WRONG wrong_counters
  SUMMARY "histogram \\(channel\\).*problem +2000 entries \\(1000 per core\\), 200000 increments.*rate +[0-9.e+-]+ M updates/s.*validation +PASSED"
  CORRUPT "1 of 2000 counters differ"
  MEMORY "64 GiB")

# The delegate implementation (Grappa's async delegates).
bale_table_ok(re wrong_counters 2 delegate 1 100000 1000)
shoal_app_test(histogram_delegate_1x2 EXPECT zero MAX_S 30 REGEX "${re}"
  COMMAND shoal-driver histogram --impl delegate --cores 2 --requests-per-core 100000 --json)
bale_table_ok(re wrong_counters 3 delegate 1 100000 1000)
shoal_app_test(histogram_delegate_1x3 EXPECT zero MAX_S 30 REGEX "${re}"
  COMMAND shoal-driver histogram --impl delegate --cores 3 --requests-per-core 100000 --json)
bale_table_ok(re wrong_counters 2 delegate 2 100000 1000)
shoal_app_test(histogram_delegate_2x1 NP 2 EXPECT zero MAX_S 30 REGEX "${re}"
  COMMAND shoal-driver histogram --impl delegate --cores 1 --requests-per-core 100000 --json)
