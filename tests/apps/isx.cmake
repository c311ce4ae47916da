# ISx: `shoal isx` (queue and channel impls, the sequential reference) and
# shoal-baseline-isx. Every run checks itself (a full sort check: sorted,
# each key in its core's range, the input's multiset); runs of one problem
# on other impls and job shapes must give the same order-sensitive checksum
# of the whole sorted sequence as a sequential std::sort (shoal_same_field_test);
# --inject-fault proves each check can fail; bad input exits 2 with a message.
if(NOT TARGET shoal-driver OR NOT "isx" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()
set(shoal_exe $<TARGET_FILE:shoal-driver>)

# A validated run's JSON (keys in JSON order).
function(isx_ok out impl cores ranks)
  set(${out} "\"cores\":${cores},\"full_verified\":true,\"impl\":\"${impl}\",.*\"ranks\":${ranks},.*\"validated\":true" PARENT_SCOPE)
endfunction()

# Every impl at every shape; odd --message-keys leave partial stages, and a
# --max-key of 5 gives many equal keys and cores with ranges of 1 or 2 values.
# Four sorts (one untimed): the queue impl's two sets of queues are each
# drained, rewound to slot 0 (fast_queue::local_nonatomic_rewind) and filled
# again, and the checks read the last sort.
foreach(impl queue channel)
  foreach(shape "1|1" "1|2" "2|1" "2|2" "3|2")
    string(REPLACE "|" ";" s "${shape}")
    list(GET s 0 np)
    list(GET s 1 cores)
    math(EXPR total "${np} * ${cores}")
    isx_ok(re ${impl} ${total} ${np})
    shoal_app_test(isx_${impl}_${np}x${cores} NP ${np} EXPECT zero MAX_S 60 REGEX "${re}"
      COMMAND shoal-driver isx --impl ${impl} --cores ${cores} --keys-per-core 20000
              --message-keys 7 --iterations 3 --json)
  endforeach()
  isx_ok(re ${impl} 4 2)
  shoal_app_test(isx_${impl}_few_values_2x2 NP 2 EXPECT zero MAX_S 60 REGEX "${re}"
    COMMAND shoal-driver isx --impl ${impl} --cores 2 --keys-per-core 5000 --max-key 5 --json)
  # Two cores split each chunk of keys in registers (distribute_pair):
  # messages of one key, and ranges of 2 and 3 values.
  isx_ok(re ${impl} 2 2)
  shoal_app_test(isx_${impl}_one_key_messages_2x1 NP 2 EXPECT zero MAX_S 60 REGEX "${re}"
    COMMAND shoal-driver isx --impl ${impl} --cores 1 --keys-per-core 3000 --message-keys 1 --json)
  isx_ok(re ${impl} 2 1)
  shoal_app_test(isx_${impl}_few_values_1x2 EXPECT zero MAX_S 60 REGEX "${re}"
    COMMAND shoal-driver isx --impl ${impl} --cores 2 --keys-per-core 5000 --max-key 5 --json)
  shoal_app_test(isx_${impl}_one_key_1x2 EXPECT zero MAX_S 60 REGEX "${re}"
    COMMAND shoal-driver isx --impl ${impl} --cores 2 --keys-per-core 1 --json)
endforeach()
# The queue impl on every one-sided backend.
foreach(backend shm rma am)
  isx_ok(re queue 2 2)
  shoal_app_test(isx_queue_${backend}_2x1 NP 2 EXPECT zero MAX_S 60 REGEX "${re}"
    COMMAND shoal-driver isx --cores 1 --one-sided ${backend} --keys-per-core 30000 --json)
endforeach()
isx_ok(re queue 2 1)
shoal_app_test(isx_queue_direct_1x2 EXPECT zero MAX_S 60 REGEX "${re}"
  COMMAND shoal-driver isx --cores 2 --one-sided direct --keys-per-core 30000 --json)
isx_ok(re sequential 2 1)
shoal_app_test(isx_sequential EXPECT zero MAX_S 60 REGEX "${re}"
  COMMAND shoal-driver isx --impl sequential --cores 2 --keys-per-core 30000 --json)
shoal_app_test(isx_summary EXPECT zero MAX_S 60
  REGEX "isx \\(queue\\).*problem +2\\^10 keys per core x 2 cores, uniform in .0, 2048., 5 sorts.*rate +[0-9.e+-]+ Mkeys/s.*validation +PASSED"
  COMMAND shoal-driver isx --cores 2 --keys-per-core 1024)

# The same problem (40,000 keys in [0, 40000)) sorted by the sequential
# reference and by every impl and shape: the same sorted sequence.
set(seq shoal-driver isx --impl sequential --cores 1 --keys-per-core 40000 --json)
shoal_same_field_test(isx_same_order_queue_2x2 FIELD sorted_checksum MAX_S 60 A ${seq}
  NP_B 2 B shoal-driver isx --impl queue --cores 2 --keys-per-core 10000 --message-keys 3 --json)
shoal_same_field_test(isx_same_order_channel_2x1 FIELD sorted_checksum MAX_S 60 A ${seq}
  NP_B 2 B shoal-driver isx --impl channel --cores 1 --keys-per-core 20000 --max-key 40000 --json)
shoal_same_field_test(isx_same_order_channel_1x2 FIELD sorted_checksum MAX_S 60 A ${seq}
  B shoal-driver isx --impl channel --cores 2 --keys-per-core 20000 --max-key 40000 --json)
if(TARGET shoal-baseline-isx)
  shoal_same_field_test(isx_same_order_baseline_np4 FIELD sorted_checksum MAX_S 60 A ${seq}
    NP_B 4 B shoal-baseline-isx --keys-per-core 10000 --json)
endif()

# Each check can fail: two keys swapped, a key lost, a key out of range.
foreach(fault order lose range)
  shoal_app_test(isx_fault_${fault}_2x2 NP 2 EXPECT 1 MAX_S 60
    REGEX "\"full_verified\":false,.*\"validated\":false"
    COMMAND shoal-driver isx --cores 2 --keys-per-core 10000 --inject-fault ${fault} --json)
endforeach()
shoal_app_test(isx_fault_lose_channel_1x2 EXPECT 1 MAX_S 60
  REGEX "3999 of 4000 keys out.*NOT the input's multiset"
  COMMAND shoal-driver isx --impl channel --cores 2 --keys-per-core 2000 --inject-fault lose)

# Bad input: exit 2, the flag named.
shoal_app_bad_input_tests(isx
    "kpc_0|--keys-per-core 0: out of range|--keys-per-core|0"
    "kpc_negative|--keys-per-core: expected an integer 0 .. 18446744073709551615, got '-1'|--keys-per-core|-1"
    "kpc_huge|--keys-per-core 4294967296: out of range|--keys-per-core|4294967296"
    "kpc_text|--keys-per-core: expected an integer.*got 'many'|--keys-per-core|many"
    "max_key_below_cores|--max-key 1: fewer key values than the job's 2 cores|--max-key|1"
    "max_key_33_bits|--max-key 8589934592: keys are 32-bit|--max-key|8589934592"
    "iterations_0|--iterations 0: out of range|--iterations|0"
    "message_keys_0|--message-keys 0: out of range|--message-keys|0"
    "seed_float|--seed: expected an integer.*got '1e23'|--seed|1e23"
    "impl_bogus|--impl: bogus not in|--impl|bogus"
    "memory|--keys-per-core 2147483648 --max-key [0-9]+ on 2 cores: the sort needs .*more than this machine's|--keys-per-core|2147483648"
    "heap|--keys-per-core 134217728: the 4 queues need 2.* of each core's global heap slice.*raise --heap-mb|--keys-per-core|134217728")
# Only rank 1 is wrong: the whole job ends at once, naming it.
if(SHOAL_HAVE_MPI)
  shoal_app_test(isx_bad_rank1_only EXPECT 2 MAX_S 20
    REGEX "rank 1's arguments: 'isx --keys-per-core 100 --cores 1 --keys-per-core 0'|rank\\(s\\) 1 were given other arguments"
    COMMAND ${SHOAL_MPIEXEC} -np 1 ${shoal_exe} isx --keys-per-core 100 --cores 1
            : -np 1 ${shoal_exe} isx --keys-per-core 100 --cores 1 --keys-per-core 0)
endif()

# The baseline: same problem, same checks.
if(NOT TARGET shoal-baseline-isx)
  return()
endif()
foreach(np 1 2 3)
  isx_ok(re mpi-alltoallv ${np} ${np})
  shoal_app_test(isx_baseline_np${np} NP ${np} EXPECT zero MAX_S 60 REGEX "${re}"
    COMMAND shoal-baseline-isx --keys-per-core 20000 --json)
endforeach()
shoal_app_test(isx_baseline_fault_order NP 2 EXPECT 1 MAX_S 60
  REGEX "\"full_verified\":false,.*\"validated\":false"
  COMMAND shoal-baseline-isx --keys-per-core 10000 --inject-fault order --json)
shoal_app_test(isx_baseline_bad_max_key NP 2 EXPECT 2 MAX_S 20
  REGEX "shoal-baseline-isx: error: --max-key 1: fewer key values than the job's 2 cores"
  COMMAND shoal-baseline-isx --max-key 1)
