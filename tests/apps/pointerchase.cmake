# PointerChase (Active Pebbles): `shoal pointerchase` and shoal-baseline-pointerchase.
#
# Each run validates itself: every core (rank) checks every arrival of the
# token against ring order (sender, hop and lap numbers) and counts its
# visits; the run passes only when every participant was visited exactly
# --rounds times, all in order. Ring sizes 1, 2 (one process and two) and
# 3 (not a power of two); a hidden hook that loses one hop must make the
# validation fail (exit 1); bad --rounds and --hold-us exit 2.
if(NOT TARGET shoal-driver OR NOT "pointerchase" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

# The JSON report of a validated run (keys in JSON order).
function(pointerchase_ok out cores ranks impl)
  set(${out} "\"cores\":${cores},.*\"hops\":[0-9]+,\"impl\":\"${impl}\",\"latency_us_per_hop\":[0-9.e+-]+,.*\"ranks\":${ranks},.*\"rounds\":[0-9]+,.*\"validated\":true,.*\"violations\":0,\"wrong_visit_counts\":0" PARENT_SCOPE)
endfunction()

foreach(cores 1 2 3)
  pointerchase_ok(re ${cores} 1 closure)
  shoal_app_test(pointerchase_1x${cores} EXPECT zero MAX_S 20 REGEX "${re}"
    COMMAND shoal-driver pointerchase --cores ${cores} --rounds 300 --seed 7 --json)
endforeach()
pointerchase_ok(re 2 2 closure)
shoal_app_test(pointerchase_2x1 NP 2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver pointerchase --cores 1 --rounds 2000 --json)
shoal_app_test(pointerchase_summary EXPECT zero MAX_S 20
  REGEX "pointerchase \\(closure\\).*ring of 2 cores.*rate +[0-9.e+-]+ hops/s.*latency_us_per_hop.*validation +PASSED"
  COMMAND shoal-driver pointerchase --cores 2 --rounds 100)
shoal_app_test(pointerchase_hold EXPECT zero MAX_S 20
  REGEX "\"hold_us\":20\\.0,.*\"raw_us_per_hop\":[0-9.e+-]+,.*\"validated\":true"
  COMMAND shoal-driver pointerchase --cores 2 --rounds 50 --hold-us 20 --json)

# A lost hop: the validation must catch it.
shoal_app_test(pointerchase_fault_caught EXPECT 1 MAX_S 20
  REGEX "\"validated\":false,.*out of ring order"
  COMMAND shoal-driver pointerchase --cores 2 --rounds 100 --inject-fault-for-test --json)
shoal_app_test(pointerchase_fault_caught_1x1 EXPECT 1 MAX_S 20
  REGEX "validation +FAILED"
  COMMAND shoal-driver pointerchase --cores 1 --rounds 10 --inject-fault-for-test)

# Bad input: a clear message naming the flag and exit status 2.
shoal_app_test(pointerchase_bad_rounds_zero EXPECT 2 MAX_S 20
  REGEX "shoal pointerchase: error: --rounds 0: out of range; expected an integer in \\[1, 2147483647\\]"
  COMMAND shoal-driver pointerchase --cores 2 --rounds 0)
shoal_app_test(pointerchase_bad_rounds_np2 NP 2 EXPECT 2 MAX_S 20
  REGEX "shoal pointerchase: error: --rounds -5: out of range"
  COMMAND shoal-driver pointerchase --cores 1 --rounds -5)
shoal_app_test(pointerchase_bad_rounds_text EXPECT 2 MAX_S 20 REGEX "--rounds"
  COMMAND shoal-driver pointerchase --rounds many)
shoal_app_test(pointerchase_bad_hold EXPECT 2 MAX_S 20
  REGEX "shoal pointerchase: error: --hold-us -1: out of range"
  COMMAND shoal-driver pointerchase --hold-us -1)

if(TARGET shoal-baseline-pointerchase)
  foreach(np 1 2 3)
    pointerchase_ok(re ${np} ${np} mpi-sendrecv)
    shoal_app_test(pointerchase_baseline_np${np} NP ${np} EXPECT zero MAX_S 20 REGEX "${re}"
      COMMAND shoal-baseline-pointerchase --rounds 500 --json)
  endforeach()
  shoal_app_test(pointerchase_baseline_bad_rounds EXPECT 2 MAX_S 20
    REGEX "shoal-baseline-pointerchase: error: --rounds 0: out of range"
    COMMAND shoal-baseline-pointerchase --rounds 0)
endif()

# --chasers C (issue 14 item 6): many chasers on a random successor function,
# where paths merge, on a routed and reducing target channel, at 1 x 2,
# 2 x 2, 4 x 1 and 8 x 1. Each run checks itself (every visit of the C paths
# reached, none other, each by a chaser on that path; without a reduction
# one arrival per chaser step). Duplicates occur; --reduce dedup and min
# remove some. Bad sizes and words: status 2.
set(chasers_args --chasers 2000 --targets 256 --steps 16 --stats --json)
set(chasers_valid "\"validated\":true,.*\"wrong_chaser_ids\":0")
function(pointerchase_chasers_test tag np cores case)
  string(REPLACE ":" "_" name "${case}")
  string(REPLACE ":" ";" c "${case}")
  list(GET c 0 routing)
  list(GET c 1 reduce)
  if(reduce STREQUAL "none")
    set(re "\"arrivals\":34000,\"chaser_steps\":34000,.*\"duplicate_arrivals\":[1-9][0-9]*,.*\"extra_visits\":0,.*\"messages_removed\":0,\"messages_saved\":0,\"missing_visits\":0,.*\"reduce\":\"none\",.*\"routing\":\"${routing}\",.*${chasers_valid}")
    if(tag STREQUAL "4x1")
      # Hypercube forwards at middle hops (counted by --stats).
      string(REPLACE ".*${chasers_valid}" ".*\"stats_mpi_messages\":[1-9][0-9]*,.*\"stats_values_forwarded\":[1-9][0-9]*,.*${chasers_valid}" re "${re}")
    endif()
  else()
    set(re "\"chaser_steps\":34000,.*\"extra_visits\":0,.*\"messages_removed\":[1-9][0-9]*,\"messages_saved\":[1-9][0-9]*,\"missing_visits\":0,.*\"reduce\":\"${reduce}\",.*\"routing\":\"${routing}\",.*${chasers_valid}")
  endif()
  shoal_app_test(pointerchase_chasers_${name}_${tag} NP ${np} EXPECT zero MAX_S 20 REGEX "${re}"
    COMMAND ${CMAKE_COMMAND} -E env RANKS_PER_NODE=2 $<TARGET_FILE:shoal-driver> pointerchase
            --cores ${cores} --routing ${routing} --reduce ${reduce} ${chasers_args})
endfunction()
shoal_routed_shapes(pointerchase_chasers_test "hypercube:min" "hypercube:none;node:dedup" "direct:min")
# A chaser that goes astray: the check must catch it, with and without a reduction.
foreach(reduce none dedup)
  shoal_app_test(pointerchase_chasers_fault_caught_${reduce} EXPECT 1 MAX_S 20
    REGEX "\"missing_visits\":[1-9].*\"validated\":false"
    COMMAND shoal-driver pointerchase --cores 2 --chasers 100 --reduce ${reduce} --inject-fault-for-test --json)
endforeach()
shoal_app_test(pointerchase_bad_chasers EXPECT 2 MAX_S 20
  REGEX "shoal pointerchase: error: --chasers -1: out of range; expected an integer in \\[0, 16777216\\]"
  COMMAND shoal-driver pointerchase --chasers -1)
shoal_app_test(pointerchase_bad_steps EXPECT 2 MAX_S 20
  REGEX "shoal pointerchase: error: --steps 5000: out of range"
  COMMAND shoal-driver pointerchase --chasers 5 --steps 5000)
shoal_app_test(pointerchase_bad_visits EXPECT 2 MAX_S 20
  REGEX "shoal pointerchase: error: --targets 4000000 --steps 100: 404000000 visits per core, more than 2\\^26"
  COMMAND shoal-driver pointerchase --chasers 5 --targets 4000000 --steps 100)
# The token ring routed: at 4 x 1 hypercube some hops go through a middle
# process (values_forwarded, messages_per_hop above 1); still in ring order.
function(pointerchase_routed_ok out cores ranks)
  set(${out} "\"cores\":${cores},.*\"latency_us_per_hop\":[0-9.e+-]+,\"messages_per_hop\":MPH,.*\"ranks\":${ranks},.*\"routing\":\"hypercube\",.*\"validated\":true,.*\"values_forwarded\":FWD,\"violations\":0,\"wrong_visit_counts\":0" PARENT_SCOPE)
endfunction()
pointerchase_routed_ok(re 4 4)
string(REPLACE "MPH" "1\\.[0-9]*[1-9][0-9]*" re "${re}")
string(REPLACE "FWD" "[1-9][0-9]*" re "${re}")
shoal_app_test(pointerchase_ring_hypercube_4x1 NP 4 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver pointerchase --cores 1 --rounds 200 --routing hypercube --json)
foreach(shape "1x2;1;2" "2x2;2;2")
  list(GET shape 0 tag)
  list(GET shape 1 np)
  list(GET shape 2 cores)
  math(EXPR all "${np} * ${cores}")
  pointerchase_routed_ok(re ${all} ${np})
  string(REPLACE "MPH" "[0-9.e+-]+" re "${re}")
  string(REPLACE "FWD" "[0-9]+" re "${re}")
  shoal_app_test(pointerchase_ring_hypercube_${tag} NP ${np} EXPECT zero MAX_S 20 REGEX "${re}"
    COMMAND shoal-driver pointerchase --cores ${cores} --rounds 100 --routing hypercube --json)
endforeach()
shoal_app_test(pointerchase_reduce_needs_chasers EXPECT 2 MAX_S 20
  REGEX "--reduce min: reductions apply to --chasers C > 0 only"
  COMMAND shoal-driver pointerchase --reduce min)
shoal_app_test(pointerchase_reduce_unknown EXPECT 2 MAX_S 20 REGEX "--reduce: max not in"
  COMMAND shoal-driver pointerchase --chasers 3 --reduce max)
shoal_app_test(pointerchase_routing_unknown EXPECT 2 MAX_S 20 REGEX "--routing: ring not in"
  COMMAND shoal-driver pointerchase --chasers 3 --routing ring)
if(SHOAL_HAVE_MPI)
  shoal_app_test(pointerchase_bad_steps_on_rank1_only EXPECT 2 MAX_S 20
    REGEX "rank 1's arguments: 'pointerchase --chasers 100 --steps 9999'"
    COMMAND ${SHOAL_MPIEXEC} -np 1 $<TARGET_FILE:shoal-driver> pointerchase --chasers 100 --cores 1
            : -np 1 $<TARGET_FILE:shoal-driver> pointerchase --chasers 100 --cores 1 --steps 9999)
  shoal_app_test(pointerchase_bad_chasers_on_rank1_only EXPECT 2 MAX_S 20
    REGEX "rank 1's arguments: 'pointerchase --chasers -1'"
    COMMAND ${SHOAL_MPIEXEC} -np 1 $<TARGET_FILE:shoal-driver> pointerchase --chasers 100 --cores 1
            : -np 1 $<TARGET_FILE:shoal-driver> pointerchase --chasers -1 --cores 1)
  shoal_app_test(pointerchase_bad_targets_on_rank1_only EXPECT 2 MAX_S 20
    REGEX "rank 1's arguments: 'pointerchase --chasers 5 --targets 4000000 --steps 100'"
    COMMAND ${SHOAL_MPIEXEC} -np 1 $<TARGET_FILE:shoal-driver> pointerchase --chasers 5 --cores 1 --steps 100
            : -np 1 $<TARGET_FILE:shoal-driver> pointerchase --chasers 5 --cores 1 --targets 4000000 --steps 100)
  shoal_app_test(pointerchase_routing_unknown_on_rank1_only EXPECT 2 MAX_S 20
    REGEX "rank 1's arguments: 'pointerchase --chasers 100 --routing ring'"
    COMMAND ${SHOAL_MPIEXEC} -np 1 $<TARGET_FILE:shoal-driver> pointerchase --chasers 100 --cores 1
            : -np 1 $<TARGET_FILE:shoal-driver> pointerchase --chasers 100 --cores 1 --routing ring)
endif()
shoal_app_test(pointerchase_help_lists_chasers EXPECT zero MAX_S 20
  REGEX "--chasers.*--targets.*--steps.*--routing TEXT:\\{direct,hypercube,node\\}.*--reduce TEXT:\\{none,dedup,min\\}"
  COMMAND shoal-driver pointerchase --help)
# An option of the other form is refused, not ignored.
shoal_app_test(pointerchase_hold_with_chasers EXPECT 2 MAX_S 20
  REGEX "shoal pointerchase: error: --hold-us: applies to the token ring \\(no --chasers\\) only"
  COMMAND shoal-driver pointerchase --chasers 10 --hold-us 5)
shoal_app_test(pointerchase_steps_without_chasers EXPECT 2 MAX_S 20
  REGEX "shoal pointerchase: error: --steps: applies to --chasers C > 0 only"
  COMMAND shoal-driver pointerchase --steps 4)
