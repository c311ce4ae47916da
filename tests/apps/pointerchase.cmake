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
