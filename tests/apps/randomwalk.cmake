# Graph random walk (GMT): `shoal randomwalk`.
#
# Every run validates itself against a sequential walk on adjacency lists
# built separately (walk count, exact step count V/2 * L, digest of every
# walk's path and end). Both implementations on 1 process x 1, 2, 3 cores and
# 2 processes x 1 core; a run with a walker sent astray must fail validation
# (exit 1); bad sizes exit 2 with a message naming the flag.
if(NOT TARGET shoal-driver OR NOT "randomwalk" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

# The JSON of a validated run (keys in JSON order).
function(randomwalk_ok out cores impl ranks steps)
  set(${out} "\"cores\":${cores},.*\"impl\":\"${impl}\",.*\"ranks\":${ranks},.*\"steps\":${steps},\"steps_per_s\":[0-9.e+]+,.*\"validated\":true" PARENT_SCOPE)
endfunction()

# 2^12 vertices: 2048 walkers x 64 steps.
foreach(cores 1 2 3)
  randomwalk_ok(re ${cores} channel 1 131072)
  shoal_app_test(randomwalk_channel_1x${cores} EXPECT zero MAX_S 20 REGEX "${re}"
    COMMAND shoal-driver randomwalk --cores ${cores} --scale 12 --json)
endforeach()
randomwalk_ok(re 2 channel 2 131072)
shoal_app_test(randomwalk_channel_2x1 NP 2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver randomwalk --cores 1 --scale 12 --json)
# An odd vertex count, long walks, another seed: 1500 walkers x 300 steps.
randomwalk_ok(re 2 channel 1 450000)
shoal_app_test(randomwalk_channel_odd_vertices EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver randomwalk --cores 2 --vertices 3001 --edgefactor 3 --length 300
          --seed 9 --json)
randomwalk_ok(re 1 sequential 1 131072)
shoal_app_test(randomwalk_sequential_1x1 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver randomwalk --cores 1 --scale 12 --impl sequential --json)
randomwalk_ok(re 2 sequential 2 131072)
shoal_app_test(randomwalk_sequential_2x1 NP 2 EXPECT zero MAX_S 20 REGEX "${re}"
  COMMAND shoal-driver randomwalk --cores 1 --scale 12 --impl sequential --json)
shoal_app_test(randomwalk_summary EXPECT zero MAX_S 20
  REGEX "randomwalk \\(channel\\).*problem +4096 vertices, 32768 edges, 2048 walkers x 64 steps.*rate +[0-9.e+-]+ Msteps/s.*validation +PASSED"
  COMMAND shoal-driver randomwalk --cores 2 --scale 12)

# A corrupted run must be caught (exit 1).
shoal_app_test(randomwalk_fault_caught_1x2 EXPECT 1 MAX_S 20
  REGEX "\"validated\":false,\"validation\":\"the sequential reference found 2048 walks"
  COMMAND shoal-driver randomwalk --cores 2 --scale 12 --inject-fault 7 --json)
shoal_app_test(randomwalk_fault_caught_2x1 NP 2 EXPECT 1 MAX_S 20 REGEX "\"validated\":false"
  COMMAND shoal-driver randomwalk --cores 1 --scale 12 --inject-fault 0 --json)
shoal_app_test(randomwalk_fault_caught_sequential EXPECT 1 MAX_S 20 REGEX "\"validated\":false"
  COMMAND shoal-driver randomwalk --cores 1 --scale 12 --inject-fault 2047 --impl sequential --json)

# Bad input: a clear message naming the flag and exit status 2.
shoal_app_test(randomwalk_bad_vertices EXPECT 2 MAX_S 20
  REGEX "shoal randomwalk: error: --vertices: Value 1 not in range 2 to 2147483648"
  COMMAND shoal-driver randomwalk --vertices 1)
shoal_app_test(randomwalk_bad_length NP 2 EXPECT 2 MAX_S 20
  REGEX "shoal randomwalk: error: --length 0: out of range"
  COMMAND shoal-driver randomwalk --cores 1 --length 0)
shoal_app_test(randomwalk_bad_scale EXPECT 2 MAX_S 20 REGEX "--scale"
  COMMAND shoal-driver randomwalk --scale 40)
shoal_app_test(randomwalk_too_large EXPECT 2 MAX_S 20
  REGEX "error: --scale/--vertices/--edgefactor: a graph of 2147483648 vertices .* more than this machine's"
  COMMAND shoal-driver randomwalk --scale 31 --edgefactor 64)
shoal_app_test(randomwalk_bad_fault EXPECT 2 MAX_S 20 REGEX "--inject-fault 4096: no such walker"
  COMMAND shoal-driver randomwalk --scale 12 --inject-fault 4096)
# --vertices 0 is refused, not taken as "use --scale" (issue 16).
shoal_app_test(randomwalk_vertices_zero EXPECT 2 MAX_S 20
  REGEX "shoal randomwalk: error: --vertices: Value 0 not in range 2 to 2147483648"
  COMMAND shoal-driver randomwalk --vertices 0)
shoal_app_test(randomwalk_seed_too_large EXPECT 2 MAX_S 20
  REGEX "shoal randomwalk: error: --seed: expected an integer 0 \\.\\. 18446744073709551615, got '18446744073709551616'"
  COMMAND shoal-driver randomwalk --seed 18446744073709551616)
# A walk that would take days is refused at once, not left to be killed.
shoal_app_test(randomwalk_too_many_steps EXPECT 2 MAX_S 20
  REGEX "shoal randomwalk: error: --length 4294967295 with 131072 walkers \\(262144 vertices / 2\\): 5\\.63e\\+14 steps, more than the 2\\^40"
  COMMAND shoal-driver randomwalk --length 4294967295)
