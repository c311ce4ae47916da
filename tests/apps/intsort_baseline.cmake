# NPB IS: shoal-baseline-intsort (local bucketing + MPI_Alltoallv), with the
# same verification and JSON as `shoal intsort`.
if(NOT TARGET shoal-baseline-intsort OR NOT "intsort" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

foreach(np 1 2 3)
  set(re "\"class\":\"S\",\"cores\":${np},\"full_verified\":true,\"impl\":\"mpi-alltoallv\",.*\"partial_verified\":\"50/50\",.*\"ranks\":${np},.*\"validated\":true")
  shoal_app_test(intsort_baseline_S_np${np} NP ${np} EXPECT zero MAX_S 20 REGEX "${re}"
    COMMAND shoal-baseline-intsort --class S --json)
endforeach()
shoal_app_test(intsort_baseline_W_np2 NP 2 EXPECT zero MAX_S 20
  REGEX "\"class\":\"W\",.*\"partial_verified\":\"50/50\",.*\"validated\":true"
  COMMAND shoal-baseline-intsort --class W --impl block --json)
shoal_app_test(intsort_baseline_fault_partial NP 2 EXPECT 1 MAX_S 20
  REGEX "\"partial_verified\":\"45/50\",.*\"validated\":false"
  COMMAND shoal-baseline-intsort --class S --inject-fault partial --json)
shoal_app_test(intsort_baseline_fault_full NP 2 EXPECT 1 MAX_S 20
  REGEX "\"full_verified\":false,.*\"validated\":false"
  COMMAND shoal-baseline-intsort --class S --inject-fault full --json)
shoal_app_test(intsort_baseline_bad_class EXPECT 2 MAX_S 20
  REGEX "--class: Q not in \\{S,W,A,B\\}"
  COMMAND shoal-baseline-intsort --class Q)
# The hidden --inject-fault: its errors name it (the app's overflow fault is
# not the baseline's), its help leaves it out.
shoal_app_test(intsort_baseline_bad_fault NP 2 EXPECT 2 MAX_S 20
  REGEX "shoal-baseline-intsort: error: --inject-fault: overflow not in \\{none,partial,full\\}"
  COMMAND shoal-baseline-intsort --class S --inject-fault overflow)
shoal_app_test(intsort_baseline_bad_fault_missing EXPECT 2 MAX_S 20
  REGEX "shoal-baseline-intsort: error: --inject-fault: 1 required TEXT:\\{none,partial,full\\} missing"
  COMMAND shoal-baseline-intsort --class S --inject-fault)
shoal_app_test(intsort_baseline_help_hides_fault_flag EXPECT zero MAX_S 20 REGEX "--class.*--json"
  COMMAND shoal-baseline-intsort --help)
set_tests_properties(intsort_baseline_help_hides_fault_flag PROPERTIES
  FAIL_REGULAR_EXPRESSION "inject-fault;Tests only")
