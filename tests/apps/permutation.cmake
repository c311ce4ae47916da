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

# --routing / --reduce (issue 14 item 6): the channel impl on the library's
# target channels, routed between processes and reduced at the source and at
# every hop, with both terminations (depth: 2h rounds, h the most hops), at
# 1 x 2, 2 x 2, 4 x 1 and 8 x 1. A permutation has no duplicates: the app
# counts none and the dedup cache removes none. Bad words: status 2.
function(permutation_routed_ok out cores routing reduce)
  set(${out} "\"arrivals\":40006,\"cores\":${cores},\"duplicate_arrivals\":0,\"duplicate_fraction\":0\\.0,.*\"messages_removed\":0,.*\"reduce\":\"${reduce}\",.*\"routing\":\"${routing}\",.*\"validated\":true,.*\"writes\":20003,\"wrong\":0" PARENT_SCOPE)
endfunction()
function(permutation_routed_test tag np cores case)
  string(REPLACE ":" "_" name "${case}")
  string(REPLACE ":" ";" c "${case}")
  list(GET c 0 routing)
  list(GET c 1 reduce)
  list(GET c 2 term)
  math(EXPR all "${np} * ${cores}")
  permutation_routed_ok(re ${all} ${routing} ${reduce})
  if(tag STREQUAL "4x1" AND routing STREQUAL "hypercube" AND term STREQUAL "depth")
    # Hypercube forwards at the middle hop; depth termination takes 2 x 2 rounds.
    string(REPLACE ".*\"validated\"" ".*\"stats_mpi_messages\":[1-9][0-9]*,.*\"stats_values_forwarded\":[1-9][0-9]*,\"termination\":\"depth\",\"termination_depth\":4,.*\"validated\"" re "${re}")
  endif()
  shoal_app_test(permutation_routed_${name}_${tag} NP ${np} EXPECT zero MAX_S 20 REGEX "${re}"
    COMMAND ${CMAKE_COMMAND} -E env RANKS_PER_NODE=2 $<TARGET_FILE:shoal-driver> permutation
            --cores ${cores} --elements 20003 --routing ${routing} --reduce ${reduce}
            --termination ${term} --stats --json)
endfunction()
# (8 x 1: the deepest case only; direct dedup, the cache's cost, at 1 x 2.)
shoal_routed_shapes(permutation_routed_test "hypercube:dedup:depth"
  "hypercube:none:phases;node:none:depth" "direct:dedup:phases")
shoal_app_test(permutation_routed_fault_caught EXPECT 1 MAX_S 20
  REGEX "\"routing\":\"hypercube\",.*\"validated\":false,.*\"wrong\":1"
  COMMAND shoal-driver permutation --cores 2 --elements 5000 --routing hypercube --inject-fault-for-test --json)
shoal_app_test(permutation_routing_unknown EXPECT 2 MAX_S 20 REGEX "--routing: ring not in"
  COMMAND shoal-driver permutation --routing ring --elements 100)
shoal_app_test(permutation_reduce_unknown EXPECT 2 MAX_S 20 REGEX "--reduce: min not in"
  COMMAND shoal-driver permutation --reduce min --elements 100)
shoal_app_test(permutation_routing_needs_channel EXPECT 2 MAX_S 20
  REGEX "--routing hypercube: routing applies to --impl channel only, not --impl sequential"
  COMMAND shoal-driver permutation --impl sequential --routing hypercube --elements 100)
shoal_app_test(permutation_reduce_needs_channel EXPECT 2 MAX_S 20
  REGEX "--reduce dedup: reductions apply to --impl channel only, not --impl sequential"
  COMMAND shoal-driver permutation --impl sequential --reduce dedup --elements 100)
if(SHOAL_HAVE_MPI)
  shoal_app_test(permutation_routing_unknown_on_rank1_only EXPECT 2 MAX_S 20
    REGEX "rank 1's arguments: 'permutation --elements 100 --routing ring'"
    COMMAND ${SHOAL_MPIEXEC} -np 1 $<TARGET_FILE:shoal-driver> permutation --elements 100 --cores 1
            : -np 1 $<TARGET_FILE:shoal-driver> permutation --elements 100 --cores 1 --routing ring)
  shoal_app_test(permutation_channels_unknown_on_rank1_only EXPECT 2 MAX_S 20
    REGEX "rank 1's arguments: 'permutation --elements 100 --channels fancy'"
    COMMAND ${SHOAL_MPIEXEC} -np 1 $<TARGET_FILE:shoal-driver> permutation --elements 100 --cores 1
            : -np 1 $<TARGET_FILE:shoal-driver> permutation --elements 100 --cores 1 --channels fancy)
endif()
shoal_app_test(permutation_help_lists_routing EXPECT zero MAX_S 20
  REGEX "--termination.*--routing TEXT:\\{direct,hypercube,node\\}.*--reduce TEXT:\\{none,dedup\\}.*--cache-slots"
  COMMAND shoal-driver permutation --help)
# --channels target: the target-channel path with direct routing and no
# reduction (the reference the routed rows compare with); typed with a
# routing is refused.
permutation_routed_ok(re 2 direct none)
shoal_app_test(permutation_channels_target_1x2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver permutation --cores 2 --elements 20003 --channels target --json)
shoal_app_test(permutation_channels_typed_with_routing EXPECT 2 MAX_S 20
  REGEX "--channels typed: --routing node --reduce none need target channels"
  COMMAND shoal-driver permutation --channels typed --routing node --elements 100)
