# NPB IS (integer sort): `shoal intsort`.
#
# Every run checks itself the NPB way: the published ranks of the 5 test keys
# in each of the 10 iterations (partial verification) and, at the end, every
# key placed at its rank must give a sorted array (full verification); the
# JSON says "partial_verified":"50/50" and "full_verified":true when both
# pass. Class S on 1, 2 and 3 cores and on 2 processes, the three shoal
# implementations and the sequential reference; class W on 1 process x 2
# cores; the hidden --inject-fault option proves that each verification
# fails (exit status 1) when a rank or the order is wrong; bad input.
if(NOT TARGET shoal-driver OR NOT "intsort" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

# The JSON report of a validated run (keys in JSON order).
function(intsort_ok out class cores impl ranks)
  set(${out} "\"class\":\"${class}\",\"cores\":${cores},\"full_verified\":true,\"impl\":\"${impl}\",.*\"partial_verified\":\"50/50\",.*\"ranks\":${ranks},.*\"validated\":true" PARENT_SCOPE)
endfunction()

foreach(cores 1 2 3)
  intsort_ok(re S ${cores} block 1)
  shoal_app_test(intsort_block_S_1x${cores} EXPECT zero MAX_S 20 REGEX "${re}"
    COMMAND shoal-driver intsort --cores ${cores} --class S --impl block --json)
endforeach()
intsort_ok(re S 2 block 2)
shoal_app_test(intsort_block_S_2x1 NP 2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver intsort --cores 1 --class S --impl block --json)
intsort_ok(re S 4 block 2)
shoal_app_test(intsort_block_S_2x2 NP 2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver intsort --cores 2 --class S --impl block --json)
intsort_ok(re S 2 key 1)
shoal_app_test(intsort_key_S_1x2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver intsort --cores 2 --class S --impl key --json)
intsort_ok(re S 2 key 2)
shoal_app_test(intsort_key_S_2x1 NP 2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver intsort --cores 1 --class S --impl key --json)
# --impl run (channel::send_run of the staged keys; the default) on every
# shape: one process of 1, 2 and 3 cores, 2 x 1, 2 x 2, and class W at 1 x 2.
foreach(cores 1 2 3)
  intsort_ok(re S ${cores} run 1)
  shoal_app_test(intsort_run_S_1x${cores} EXPECT zero MAX_S 20 REGEX "${re}"
    COMMAND shoal-driver intsort --cores ${cores} --class S --json)
endforeach()
foreach(cores 1 2)
  math(EXPR all "2 * ${cores}")
  intsort_ok(re S ${all} run 2)
  shoal_app_test(intsort_run_S_2x${cores} NP 2 EXPECT zero MAX_S 20 REGEX "${re}"
    COMMAND shoal-driver intsort --cores ${cores} --class S --impl run --json)
endforeach()
intsort_ok(re W 2 run 1)
shoal_app_test(intsort_run_W_1x2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver intsort --cores 2 --class W --impl run --json)
intsort_ok(re S 1 sequential 1)
shoal_app_test(intsort_sequential_S EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver intsort --cores 1 --class S --impl sequential --json)
intsort_ok(re W 2 block 1)
shoal_app_test(intsort_block_W_1x2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver intsort --cores 2 --class W --impl block --json)
intsort_ok(re W 1 sequential 1)
shoal_app_test(intsort_sequential_W EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver intsort --cores 1 --class W --impl sequential --json)
shoal_app_test(intsort_summary EXPECT zero MAX_S 20
  REGEX "intsort \\(run\\).*problem +class S: 2\\^16 keys in .0, 2\\^11., 2\\^9 buckets, 10 iterations.*rate +[0-9.e+-]+ Mop/s.*validation +PASSED"
  COMMAND shoal-driver intsort --cores 2 --class s)

# The verifications can fail: a rank off by one in iteration 3 fails the 5
# test keys of that iteration; two keys swapped after placement fail the order.
shoal_app_test(intsort_fault_partial_1x2 EXPECT 1 MAX_S 20
  REGEX "\"full_verified\":true,.*\"partial_verified\":\"45/50\",.*\"validated\":false"
  COMMAND shoal-driver intsort --cores 2 --class S --inject-fault partial --json)
shoal_app_test(intsort_fault_full_2x1 NP 2 EXPECT 1 MAX_S 20
  REGEX "\"full_verified\":false,.*\"partial_verified\":\"50/50\",.*\"validated\":false"
  COMMAND shoal-driver intsort --cores 1 --class S --inject-fault full --json)
shoal_app_test(intsort_fault_key_partial_2x1 NP 2 EXPECT 1 MAX_S 20
  REGEX "\"partial_verified\":\"45/50\",.*\"validated\":false"
  COMMAND shoal-driver intsort --cores 1 --class S --impl key --inject-fault partial --json)
shoal_app_test(intsort_fault_run_partial_2x1 NP 2 EXPECT 1 MAX_S 20
  REGEX "\"partial_verified\":\"45/50\",.*\"validated\":false"
  COMMAND shoal-driver intsort --cores 1 --class S --impl run --inject-fault partial --json)
shoal_app_test(intsort_fault_run_full_1x2 EXPECT 1 MAX_S 20
  REGEX "\"full_verified\":false,.*\"validated\":false"
  COMMAND shoal-driver intsort --cores 2 --class S --impl run --inject-fault full --json)
# 8-bit histogram counters: a value with 256 keys or more wraps its counter,
# and the job must end naming that, never report a wrong sort (the hidden
# fault gives 300 keys of core 0 one value; each counting path, and the
# sequential impl, which counts in 32 bits, refuses the fault by name).
set(wrap_re "failed: 65280 keys ranked in iteration 1 of 65536: an 8-bit counter of the histogram overflowed")
shoal_app_test(intsort_fault_overflow_run_1x2 EXPECT 1 MAX_S 20 REGEX "${wrap_re}"
  COMMAND shoal-driver intsort --cores 2 --class S --inject-fault overflow --json)
shoal_app_test(intsort_fault_overflow_run_2x1 NP 2 EXPECT nonzero MAX_S 20 REGEX "${wrap_re}"
  COMMAND shoal-driver intsort --cores 1 --class S --inject-fault overflow --json)
shoal_app_test(intsort_fault_overflow_block_2x2 NP 2 EXPECT nonzero MAX_S 20 REGEX "${wrap_re}"
  COMMAND shoal-driver intsort --cores 2 --class S --impl block --inject-fault overflow --json)
shoal_app_test(intsort_fault_overflow_key_1x3 EXPECT 1 MAX_S 20 REGEX "${wrap_re}"
  COMMAND shoal-driver intsort --cores 3 --class S --impl key --inject-fault overflow --json)
shoal_app_test(intsort_fault_overflow_sequential_refused EXPECT 2 MAX_S 20
  REGEX "error: --inject-fault overflow: the sequential impl counts in 32 bits"
  COMMAND shoal-driver intsort --class S --impl sequential --inject-fault overflow)
# The hidden option's wrong values: a misspelt fault and a missing one exit 2
# naming the flag and what was wrong, like a visible flag's (CLI11 2.1 drops
# the name of an option of group "": apps/common/plain/hidden_option.hpp),
# on every rank of a job too, and a core 0 with too few keys for the fault
# (class S on 200 cores: 327) ends the job saying so rather than injecting
# less. The help leaves the option out.
shoal_app_test(intsort_fault_unknown_refused EXPECT 2 MAX_S 20
  REGEX "shoal intsort: error: --inject-fault: overflw not in \\{none,partial,full,overflow\\}"
  COMMAND shoal-driver intsort --class S --inject-fault overflw)
shoal_app_test(intsort_fault_missing_refused EXPECT 2 MAX_S 20
  REGEX "shoal intsort: error: --inject-fault: 1 required TEXT:\\{none,partial,full,overflow\\} missing"
  COMMAND shoal-driver intsort --class S --inject-fault)
shoal_app_test(intsort_fault_unknown_refused_2x1 NP 2 EXPECT 2 MAX_S 20
  REGEX "shoal intsort: error: --inject-fault: overflw not in \\{none,partial,full,overflow\\}"
  COMMAND shoal-driver intsort --cores 1 --class S --inject-fault overflw)
shoal_app_test(intsort_fault_unknown_refused_2x2 NP 2 EXPECT 2 MAX_S 20
  REGEX "shoal intsort: error: --inject-fault: overflw not in \\{none,partial,full,overflow\\}"
  COMMAND shoal-driver intsort --cores 2 --class S --inject-fault overflw)
# Only rank 1 given the misspelt fault: the job ends at once, status 2,
# naming the rank and its arguments.
shoal_app_test(intsort_fault_unknown_on_one_rank_2x2 NP 2 EXPECT 2 MAX_S 20
  REGEX "rank\\(s\\) 1 were given other arguments.*rank 1's arguments: 'intsort --class S --inject-fault overflw'"
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/one_rank_args.sh 1 "--inject-fault overflw"
          $<TARGET_FILE:shoal-driver> intsort --cores 2 --class S)
shoal_app_test(intsort_help_hides_fault_flag EXPECT zero MAX_S 20 REGEX "--class.*--impl.*--json"
  COMMAND shoal-driver intsort --help)
set_tests_properties(intsort_help_hides_fault_flag PROPERTIES
  FAIL_REGULAR_EXPRESSION "inject-fault;Tests only")
shoal_app_test(intsort_fault_overflow_too_few_keys EXPECT 2 MAX_S 20
  REGEX "--inject-fault overflow needs 332 keys on core 0"
  COMMAND shoal-driver intsort --cores 200 --class S --inject-fault overflow)
shoal_app_test(intsort_fault_sequential_full EXPECT 1 MAX_S 20
  REGEX "\"full_verified\":false,.*\"validated\":false"
  COMMAND shoal-driver intsort --class S --impl sequential --inject-fault full --json)

# Bad input: a clear message naming the flag and exit status 2.
shoal_app_test(intsort_bad_class EXPECT 2 MAX_S 20 REGEX "--class: C not in \\{S,W,A,B\\}"
  COMMAND shoal-driver intsort --class C)
shoal_app_test(intsort_bad_class_2x1 NP 2 EXPECT 2 MAX_S 20 REGEX "--class: X not in"
  COMMAND shoal-driver intsort --cores 1 --class X)
shoal_app_test(intsort_more_cores_than_buckets EXPECT 2 MAX_S 20
  REGEX "shoal intsort: error: --cores: 513 cores in all is more than the 512 buckets of class S"
  COMMAND shoal-driver intsort --cores 513 --class S)
