# GUPS (HPCC RandomAccess): `shoal gups` and shoal-baseline-gups.
#
# Each run validates itself the HPCC way (the updates applied twice leave the
# table as it started; here no word may be wrong, since every update runs at
# its word's home) and, for these small tables, against a sequential run of
# the same updates (the "reference" field). Both implementations on
# 1 process x 2 cores, 2 processes x 1 core, and 3 cores (a core count that is
# not a power of two); the baseline on 1 and 2 processes; the stream
# generator on its own; bad sizes.
if(NOT TARGET shoal-driver OR NOT "gups" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

# The JSON report of a validated run with no wrong word (keys in JSON order).
function(gups_ok out cores impl ranks)
  set(${out} "\"cores\":${cores},\"error_fraction\":0\\.0,.*\"impl\":\"${impl}\",.*\"ranks\":${ranks},.*\"reference\":\"matched\",.*\"validated\":true" PARENT_SCOPE)
endfunction()

foreach(impl channel delegate)
  foreach(rule sent applied)
    gups_ok(re 2 ${impl} 1)
    shoal_app_test(gups_${impl}_until_${rule}_1x2 EXPECT zero MAX_S 30 REGEX "${re}"
      COMMAND shoal-driver gups --cores 2 --log-table 17 --impl ${impl} --outstanding ${rule} --json)
    gups_ok(re 2 ${impl} 2)
    shoal_app_test(gups_${impl}_until_${rule}_2x1 NP 2 EXPECT zero MAX_S 30 REGEX "${re}"
      COMMAND shoal-driver gups --cores 1 --log-table 17 --impl ${impl} --outstanding ${rule} --json)
  endforeach()
endforeach()
# Within a process and across processes at once: the flood of --outstanding
# sent (no window of the app's: the runtime's send bound) and the markers and
# acks of applied's 1024 rule.
foreach(rule sent applied)
  gups_ok(re 4 channel 2)
  shoal_app_test(gups_channel_until_${rule}_2x2 NP 2 EXPECT zero MAX_S 30 REGEX "${re}"
    COMMAND shoal-driver gups --cores 2 --log-table 16 --outstanding ${rule} --json)
endforeach()
shoal_app_test(gups_bad_outstanding_rule EXPECT 2 MAX_S 30
  REGEX "--outstanding: soon not in"
  COMMAND shoal-driver gups --outstanding soon)
gups_ok(re 3 channel 1)
shoal_app_test(gups_channel_1x3 EXPECT zero MAX_S 30 REGEX "${re}"
  COMMAND shoal-driver gups --cores 3 --log-table 16 --json)
shoal_app_test(gups_summary EXPECT zero MAX_S 30
  REGEX "gups \\(channel\\).*problem +2\\^16 words.*rate +[0-9.e+-]+ GUPS.*validation +PASSED"
  COMMAND shoal-driver gups --cores 2 --log-table 16)

if(TARGET shoal-baseline-gups)
  foreach(np 1 2)
    gups_ok(re ${np} mpi-alltoallv ${np})
    shoal_app_test(gups_baseline_np${np} NP ${np} EXPECT zero MAX_S 30 REGEX "${re}"
      COMMAND shoal-baseline-gups --log-table 17 --impl channel --json)
  endforeach()
  shoal_app_test(gups_baseline_bad_log_table EXPECT 2 MAX_S 30
    REGEX "shoal-baseline-gups: error: --log-table 41: out of range; expected an integer in \\[1, 40\\]"
    COMMAND shoal-baseline-gups --log-table 41)
  shoal_app_test(gups_baseline_too_large EXPECT 2 MAX_S 30
    REGEX "error: --log-table 40: the table needs 8 TiB \\(8 TiB per process over 1\\), more than this machine's"
    COMMAND shoal-baseline-gups --log-table 40)
endif()

# Bad input: a clear message naming the flag and a non-zero exit, never a crash.
shoal_app_test(gups_bad_log_table_low EXPECT 2 MAX_S 30
  REGEX "shoal gups: error: --log-table 0: out of range; expected an integer in \\[1, 40\\]"
  COMMAND shoal-driver gups --cores 2 --log-table 0)
shoal_app_test(gups_bad_log_table_high NP 2 EXPECT 2 MAX_S 30
  REGEX "shoal gups: error: --log-table 64: out of range"
  COMMAND shoal-driver gups --cores 1 --log-table 64)
shoal_app_test(gups_bad_log_table_text EXPECT 2 MAX_S 30 REGEX "--log-table"
  COMMAND shoal-driver gups --log-table twelve)
shoal_app_test(gups_table_exceeds_heap EXPECT 2 MAX_S 30
  REGEX "shoal gups: error: --log-table 30: the table needs 8 GiB \\(8 GiB per process over 1\\), more than the global heap of 1 GiB per process \\(--heap-mb\\); raise --heap-mb"
  COMMAND shoal-driver gups --cores 2 --log-table 30)
shoal_app_test(gups_table_exceeds_memory EXPECT 2 MAX_S 30
  REGEX "shoal gups: error: --log-table 38: the table needs 2 TiB.*more than this machine's"
  COMMAND shoal-driver gups --cores 2 --log-table 38 --heap-mb 4194304)

# The stream generator, the divider and the apply queue on their own.
add_executable(gups_stream_test ${CMAKE_CURRENT_SOURCE_DIR}/gups_stream_test.cpp)
target_link_libraries(gups_stream_test PRIVATE shoal_apps_plain GTest::gtest GTest::gtest_main)
shoal_apply_defaults(gups_stream_test)
add_test(NAME gups_stream COMMAND gups_stream_test)
set_tests_properties(gups_stream PROPERTIES LABELS apps TIMEOUT 60)

# A table smaller than one block per core: cores past its end own no word.
shoal_app_test(gups_tiny_table_1x3 EXPECT zero MAX_S 30
  REGEX "\"cores\":3,\"error_fraction\":0\\.0,.*\"validated\":true"
  COMMAND shoal-driver gups --cores 3 --log-table 2 --json)
shoal_app_test(gups_tiny_table_2x2 NP 2 EXPECT zero MAX_S 30
  REGEX "\"cores\":4,\"error_fraction\":0\\.0,.*\"validated\":true"
  COMMAND shoal-driver gups --cores 2 --log-table 1 --impl delegate --json)

# Hypercube routing keeps a process's peers at ceil(log2 P) (issue 14 item 3):
# at 8 x 1 (oversubscribed) no process has a buffer open to more than 3 peers
# at once during the updates, since the phase's barrier, message waves and
# steal requests go to hypercube neighbours too (gups turns on
# shoal::route_control_over_hypercube under hypercube routing), and
# the buffer memory is reported in bytes; the table still validates.
shoal_app_test(gups_routing_hypercube_log_peers_8x1 NP 8 EXPECT zero MAX_S 60
  REGEX "\"coalescing_buffer_bytes_per_process\":[1-9][0-9]*,\"coalescing_buffers_per_process\":[123],.*\"phase_buffer_bytes_per_process\":[1-9][0-9]*,.*\"validated\":true"
  COMMAND shoal-driver gups --routing hypercube --cores 1 --log-table 12 --json)
