# Permutation (Active Pebbles): `shoal permutation`, distributed and sequential.
#
# Each run validates itself: every slot of data_perm must have been written
# once and hold data^-1(perm^-1(j)) (computed through the inverse
# permutations, independently of the timed phase), and a sample of i must
# satisfy data_perm[perm[data[i]]] = i through the forward functions. Core
# counts 1, 2, 3 and 2 processes; sizes that do not divide evenly, and fewer
# elements than cores; a hidden hook that stores one wrong i must make the
# validation fail (exit 1); bad --elements exit 2.
if(NOT TARGET shoal-driver OR NOT "permutation" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

# The JSON report of a validated run (keys in JSON order).
function(permutation_ok out cores elements impl ranks)
  set(${out} "\"cores\":${cores},\"elements\":${elements},\"elements_per_s\":[0-9.e+-]+,\"impl\":\"${impl}\",.*\"ranks\":${ranks},.*\"sample_wrong\":0,.*\"unwritten\":0,\"validated\":true,.*\"writes\":${elements},\"wrong\":0" PARENT_SCOPE)
endfunction()

foreach(cores 1 2 3)
  permutation_ok(re ${cores} 100003 channel 1)
  shoal_app_test(permutation_1x${cores} EXPECT zero MAX_S 20 REGEX "${re}"
    COMMAND shoal-driver permutation --cores ${cores} --elements 100003 --seed 5 --json)
endforeach()
permutation_ok(re 2 300007 channel 2)
shoal_app_test(permutation_2x1 NP 2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver permutation --cores 1 --elements 300007 --json)
permutation_ok(re 4 65536 channel 2)
shoal_app_test(permutation_2x2 NP 2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver permutation --cores 2 --elements 65536 --json)
permutation_ok(re 2 100003 sequential 1)
shoal_app_test(permutation_sequential EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver permutation --cores 2 --elements 100003 --impl sequential --json)
# Fewer elements than cores: the last cores own nothing.
foreach(n 1 2)
  permutation_ok(re 3 ${n} channel 1)
  shoal_app_test(permutation_tiny_${n}_1x3 EXPECT zero MAX_S 20 REGEX "${re}"
    COMMAND shoal-driver permutation --cores 3 --elements ${n} --json)
endforeach()
shoal_app_test(permutation_summary EXPECT zero MAX_S 20
  REGEX "permutation \\(channel\\).*problem +1000 elements.*rate +[0-9.e+-]+ M elements/s.*validation +PASSED"
  COMMAND shoal-driver permutation --cores 2 --elements 1000)

# One wrong store: the validation must catch it (both paths).
foreach(impl channel sequential)
  shoal_app_test(permutation_fault_caught_${impl} EXPECT 1 MAX_S 20
    REGEX "\"sample_wrong\":[0-9]+,.*\"validated\":false,.*\"wrong\":1"
    COMMAND shoal-driver permutation --cores 2 --elements 5000 --impl ${impl} --inject-fault-for-test --json)
endforeach()

# Bad input: a clear message naming the flag and exit status 2.
shoal_app_test(permutation_bad_elements_zero EXPECT 2 MAX_S 20
  REGEX "shoal permutation: error: --elements 0: out of range; expected an integer in \\[1, 1099511627776\\]"
  COMMAND shoal-driver permutation --cores 2 --elements 0)
shoal_app_test(permutation_bad_elements_np2 NP 2 EXPECT 2 MAX_S 20
  REGEX "shoal permutation: error: --elements -3: out of range"
  COMMAND shoal-driver permutation --cores 1 --elements -3)
shoal_app_test(permutation_too_large EXPECT 2 MAX_S 20
  REGEX "shoal permutation: error: --elements 1099511627776: the three arrays need 24 TiB, more than this machine's .* of memory; lower --elements"
  COMMAND shoal-driver permutation --cores 2 --elements 1099511627776)
shoal_app_test(permutation_bad_elements_text EXPECT 2 MAX_S 20 REGEX "--elements"
  COMMAND shoal-driver permutation --elements lots)
shoal_app_test(permutation_bad_impl EXPECT 2 MAX_S 20 REGEX "--impl"
  COMMAND shoal-driver permutation --impl mpi)

# The keyed permutation and the block layout on their own.
add_executable(permutation_layout_test ${CMAKE_CURRENT_SOURCE_DIR}/permutation_layout_test.cpp)
target_link_libraries(permutation_layout_test PRIVATE shoal_apps_plain GTest::gtest GTest::gtest_main)
shoal_apply_defaults(permutation_layout_test)
add_test(NAME permutation_layout COMMAND permutation_layout_test)
set_tests_properties(permutation_layout PROPERTIES LABELS apps TIMEOUT 60)
