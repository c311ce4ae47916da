# Concurrent hash-map access (GMT): `shoal chma`.
#
# Every run validates itself against the same schedule of operations on a
# std::unordered_set<std::string> (equal map size, digest, lookup and insert
# counts; key by key for these small maps). Every implementation on
# 1 process x 1, 2, 3 cores and 2 processes x 1 core, generated pools and the
# pool file in data/chma; a run whose task inserts wrong strings must fail
# validation (exit 1); bad pool files and sizes exit 2 with FILE:LINE or the
# flag in the message.
if(NOT TARGET shoal-driver OR NOT "chma" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

set(chma_data ${SHOAL_APP_TEST_DATA}/chma)

# The JSON of a validated run (keys in JSON order).
function(chma_ok out what cores impl ranks)
  set(${out} "\"accesses_per_s\":[0-9.e+]+,.*\"cores\":${cores},\"impl\":\"${impl}\",.*\"lookups\":${what}.*\"ranks\":${ranks},.*\"validated\":true,\"validation\":\"final map equal, key by key" PARENT_SCOPE)
endfunction()

# 8192 strings, 128 tasks x 200 steps (25600 lookups).
foreach(impl channel split-phase sequential)
  foreach(cores 1 2 3)
    chma_ok(re 25600 ${cores} ${impl} 1)
    shoal_app_test(chma_${impl}_1x${cores} EXPECT zero MAX_S 20 REGEX "${re}"
      COMMAND shoal-driver chma --cores ${cores} --impl ${impl} --pool-size 8192 --tasks 128
              --length 200 --json)
  endforeach()
  chma_ok(re 25600 2 ${impl} 2)
  shoal_app_test(chma_${impl}_2x1 NP 2 EXPECT zero MAX_S 20 REGEX "${re}"
    COMMAND shoal-driver chma --cores 1 --impl ${impl} --pool-size 8192 --tasks 128 --length 200
            --json)
endforeach()
# A larger map: checked by size and digest (no key-by-key check).
shoal_app_test(chma_channel_digest_2x1 NP 2 EXPECT zero MAX_S 20
  REGEX "\"lookups\":400000,.*\"validated\":true,\"validation\":\"final map's size and digest"
  COMMAND shoal-driver chma --cores 1 --pool-size 100000 --tasks 400 --length 1000 --json)
# The pool file (palindromes, pairs of reverses that both start in the map).
chma_ok(re 2000 2 channel 1)
shoal_app_test(chma_pool_file_1x2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver chma --cores 2 --pool ${chma_data}/pool.txt --tasks 20 --length 100 --json)
chma_ok(re 2000 2 channel 2)
shoal_app_test(chma_pool_file_2x1 NP 2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver chma --cores 1 --pool ${chma_data}/pool.txt --tasks 20 --length 100 --json)
shoal_app_test(chma_summary EXPECT zero MAX_S 20
  REGEX "chma \\(channel\\).*problem +pool of 60 strings .*rate +[0-9.e+-]+ Maccesses/s.*validation +PASSED"
  COMMAND shoal-driver chma --cores 2 --pool ${chma_data}/pool.txt --populate 10)

# A corrupted run must be caught (exit 1).
shoal_app_test(chma_fault_caught_1x2 EXPECT 1 MAX_S 20
  REGEX "\"validated\":false,\"validation\":\"the sequential reference found"
  COMMAND shoal-driver chma --cores 2 --pool-size 8192 --tasks 128 --length 200 --inject-fault 5
          --json)
shoal_app_test(chma_fault_caught_2x1 NP 2 EXPECT 1 MAX_S 20 REGEX "\"validated\":false"
  COMMAND shoal-driver chma --cores 1 --pool-size 8192 --tasks 128 --length 200 --inject-fault 0
          --json)
shoal_app_test(chma_fault_caught_split_phase EXPECT 1 MAX_S 20 REGEX "\"validated\":false"
  COMMAND shoal-driver chma --cores 2 --impl split-phase --pool-size 8192 --tasks 128 --length 200
          --inject-fault 64 --json)
shoal_app_test(chma_fault_caught_sequential EXPECT 1 MAX_S 20 REGEX "\"validated\":false"
  COMMAND shoal-driver chma --impl sequential --pool-size 8192 --tasks 128 --length 200
          --inject-fault 127 --json)

# Bad pool files: FILE:LINE and exit status 2, on 1 and 2 processes.
shoal_app_test(chma_bad_pool_long_line EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: [^ ]*pool_long\\.txt:3: string of 21 characters; at most 20"
  COMMAND shoal-driver chma --cores 2 --pool ${chma_data}/pool_long.txt)
shoal_app_test(chma_bad_pool_long_line_2x1 NP 2 EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: [^ ]*pool_long\\.txt:3: string of 21 characters"
  COMMAND shoal-driver chma --cores 1 --pool ${chma_data}/pool_long.txt)
shoal_app_test(chma_bad_pool_binary EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: [^ ]*pool_binary\\.txt:2: byte 0x01 at column 3 is not text"
  COMMAND shoal-driver chma --cores 2 --pool ${chma_data}/pool_binary.txt)
shoal_app_test(chma_bad_pool_empty_line EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: [^ ]*pool_empty_line\\.txt:2: empty line"
  COMMAND shoal-driver chma --pool ${chma_data}/pool_empty_line.txt)
shoal_app_test(chma_bad_pool_reverse EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: [^ ]*pool_reverse\\.txt:4: \"pots\" is the reverse of \"stop\" \\([^ ]*pool_reverse\\.txt:1\\)"
  COMMAND shoal-driver chma --pool ${chma_data}/pool_reverse.txt)
shoal_app_test(chma_bad_pool_missing EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: --pool [^ ]*no_such_pool\\.txt: cannot open"
  COMMAND shoal-driver chma --pool ${chma_data}/no_such_pool.txt)

# Bad sizes: the flag in the message and exit status 2.
shoal_app_test(chma_bad_tasks EXPECT 2 MAX_S 20 REGEX "shoal chma: error: --tasks 0: out of range"
  COMMAND shoal-driver chma --tasks 0)
shoal_app_test(chma_bad_length NP 2 EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: --length 0: out of range"
  COMMAND shoal-driver chma --cores 1 --length 0)
shoal_app_test(chma_bad_impl EXPECT 2 MAX_S 20 REGEX "--impl"
  COMMAND shoal-driver chma --impl mpi)
shoal_app_test(chma_bad_pool_size EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: --pool-size 0: out of range"
  COMMAND shoal-driver chma --pool-size 0)
shoal_app_test(chma_bad_populate EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: --populate 61: out of range; expected 0 \\.\\. 60"
  COMMAND shoal-driver chma --pool ${chma_data}/pool.txt --populate 61)
shoal_app_test(chma_too_large EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: --pool-size/--pool: a pool of 268435456 strings needs about .* more than this machine's"
  COMMAND shoal-driver chma --pool-size 268435456)

# Hostile flags and pool files (issue 16): status 2 and a message naming them.
shoal_app_test(chma_hostile_empty_pool_name EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: --pool: empty (file name|value)"
  COMMAND sh -c "exec \"$0\" chma --cores 1 --pool ''" $<TARGET_FILE:shoal-driver>)
shoal_app_test(chma_hostile_pool_dev_zero EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: /dev/zero:1: line longer than 65536 bytes"
  COMMAND shoal-driver chma --cores 1 --pool /dev/zero)
shoal_app_test(chma_hostile_pool_directory EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: --pool [^ ]*chma: is a directory, not a file"
  COMMAND shoal-driver chma --cores 1 --pool ${chma_data})
# -1 means "half the pool" inside; from the user it is refused, not taken so.
shoal_app_test(chma_hostile_populate_negative EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: --populate: Value -1 not in range 0 to 268435456"
  COMMAND shoal-driver chma --cores 1 --populate -1)
shoal_app_test(chma_hostile_seed_negative EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: --seed: expected an integer 0 \\.\\. 18446744073709551615, got '-1'"
  COMMAND shoal-driver chma --cores 1 --seed -1)
# A UTF-8 byte-order mark is skipped, not taken as part of the first string.
shoal_app_test(chma_pool_bom EXPECT zero MAX_S 20 REGEX "pool of 2 strings.*\"validated\":true"
  COMMAND shoal-driver chma --cores 1 --pool ${chma_data}/pool_bom.txt --tasks 4 --length 10 --json)
# A run that would take days is refused at once, not left to be killed.
shoal_app_test(chma_hostile_too_many_steps EXPECT 2 MAX_S 20
  REGEX "shoal chma: error: --tasks 1073741824 with --length 2147483647: 2\\.31e\\+18 steps, more than the 2\\^40"
  COMMAND shoal-driver chma --cores 1 --tasks 1073741824 --length 2147483647)
