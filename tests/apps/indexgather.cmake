# bale index-gather: `shoal indexgather` and shoal-baseline-indexgather.
#
# Every run validates itself against an independent reference: each core
# (rank) regenerates its stream and checks every gathered value against the
# table's defining function (not the table), and that it got exactly one reply
# per remote read ("validated":true, "wrong_values":0). Runs on 1, 2 and 3
# cores of one process and on 2 processes (1 and 2 cores each); a one-entry
# slice per core (T = 1); the 12-byte request format; the hidden --corrupt
# fault injection must make validation fail (exit 1); bad sizes exit 2 naming
# the flag; the baseline on 1 and 2 ranks, with a round size that does not
# divide N.
if(NOT TARGET shoal-driver OR NOT "indexgather" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

# The runs both bale table apps share (tests/apps/CMakeLists.txt).
bale_table_tests(indexgather WRONG wrong_values
  SUMMARY "indexgather \\(channel\\).*problem +2000 entries \\(1000 per core\\), 200000 reads.*rate +[0-9.e+-]+ M reads/s.*validation +PASSED"
  CORRUPT "1 of 20000 gathered values differ"
  MEMORY "32 GiB")

# The 12-byte requests that sizes too large to pack into 8 bytes would use
# (forced, since such sizes do not fit in a test machine's memory).
shoal_app_test(indexgather_wide_requests_1x3 EXPECT zero MAX_S 30
  REGEX "\"cores\":3,.*\"request_bytes\":12,.*\"validated\":true,.*\"wrong_values\":0"
  COMMAND shoal-driver indexgather --cores 3 --requests-per-core 100000 --wide-requests --json)
shoal_app_test(indexgather_wide_requests_2x1 NP 2 EXPECT zero MAX_S 30
  REGEX "\"cores\":2,.*\"request_bytes\":12,.*\"validated\":true,.*\"wrong_values\":0"
  COMMAND shoal-driver indexgather --cores 1 --requests-per-core 100000 --wide-requests --json)
