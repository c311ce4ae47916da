# Active Pebbles in the apps (issue 14): message reductions by the library's
# target channels. pagerank --reduce sum and
# bfs --impl async --reduce min, each validated as usual, at 1 x 2, 2 x 2 and
# 4 x 1 (processes x cores); the report names the reduction and the messages
# it removed. Misused options end with status 2 and a message naming them.
if(NOT TARGET shoal-driver)
  return()
endif()

set(pebbles_ok "\"validated\":true")
# Shapes: "name;np;cores".
foreach(shape "1x2;1;2" "2x2;2;2" "4x1;4;1")
  list(GET shape 0 tag)
  list(GET shape 1 np)
  list(GET shape 2 cores)
  if("pagerank" IN_LIST SHOAL_BUILT_APPS)
    shoal_app_test(pagerank_reduce_sum_${tag} NP ${np} EXPECT zero MAX_S 30
      REGEX "\"messages_removed\":[1-9][0-9]*.*\"reduce\":\"sum\".*${pebbles_ok}"
      COMMAND shoal-driver pagerank --reduce sum --cache-slots 512 --cores ${cores} --scale 11 --json)
  endif()
  if("bfs" IN_LIST SHOAL_BUILT_APPS)
    shoal_app_test(bfs_async_reduce_min_${tag} NP ${np} EXPECT zero MAX_S 60
      REGEX "\"messages_removed\":[1-9][0-9]*.*\"reduce\":\"min\".*${pebbles_ok}"
      COMMAND shoal-driver bfs --impl async --reduce min --no-sender-filter --cores ${cores}
              --scale 11 --roots 8 --json)
  endif()
endforeach()
# A lost increment still fails validation through the reducing channel.
if("pagerank" IN_LIST SHOAL_BUILT_APPS)
  shoal_app_test(pagerank_reduce_sum_corrupt_fails EXPECT 1 MAX_S 30 REGEX "validation  FAILED"
    COMMAND shoal-driver pagerank --reduce sum --cores 2 --scale 10 --corrupt-for-test)
  shoal_app_test(pagerank_reduce_unknown EXPECT 2 MAX_S 30 REGEX "--reduce: max not in \\{none,sum,combine\\}"
    COMMAND shoal-driver pagerank --reduce max --scale 10)
  shoal_app_test(pagerank_reduce_needs_channel EXPECT 2 MAX_S 30
    REGEX "--reduce sum: the library reduction applies to --impl channel only, not --impl combining"
    COMMAND shoal-driver pagerank --impl combining --reduce sum --scale 10)
endif()
if("bfs" IN_LIST SHOAL_BUILT_APPS)
  # With the sender filter too (the default): still a valid BFS tree.
  shoal_app_test(bfs_async_reduce_min_filtered_2x2 NP 2 EXPECT zero MAX_S 60 REGEX "${pebbles_ok}"
    COMMAND shoal-driver bfs --impl async --reduce min --cores 2 --scale 11 --roots 8 --json)
  shoal_app_test(bfs_reduce_needs_async EXPECT 2 MAX_S 30
    REGEX "--reduce min: reductions apply to --impl async only, not --impl channel"
    COMMAND shoal-driver bfs --impl channel --reduce min --scale 10)
  shoal_app_test(bfs_reduce_zero_cache_slots EXPECT 2 MAX_S 30 REGEX "--cache-slots"
    COMMAND shoal-driver bfs --impl async --reduce min --cache-slots 0 --scale 10)
endif()

# gups --routing (active routing on a target channel): validated against the
# sequential reference with no wrong word, at 1 x 2, 2 x 2, 4 x 1 and 8 x 1
# (oversubscribed); from 4 processes on, hypercube and node routes (2 ranks
# per node, set through RANKS_PER_NODE) forward at intermediate hops.
if("gups" IN_LIST SHOAL_BUILT_APPS)
  set(gups_routed_ok "\"error_fraction\":0\\.0,.*\"reference\":\"matched\",.*\"validated\":true")
  foreach(routing direct hypercube node)
    foreach(shape "1x2;1;2" "2x2;2;2" "4x1;4;1" "8x1;8;1")
      list(GET shape 0 tag)
      list(GET shape 1 np)
      list(GET shape 2 cores)
      set(re "${gups_routed_ok}")
      if(np GREATER 2 AND NOT routing STREQUAL "direct")
        set(re "\"error_fraction\":0\.0,\"forwarded\":[1-9][0-9]*,.*\"reference\":\"matched\",.*\"validated\":true")
      endif()
      shoal_app_test(gups_routing_${routing}_${tag} NP ${np} EXPECT zero MAX_S 60 REGEX "${re}"
        COMMAND ${CMAKE_COMMAND} -E env RANKS_PER_NODE=2 $<TARGET_FILE:shoal-driver> gups
                --routing ${routing} --cores ${cores} --log-table 14 --json)
    endforeach()
  endforeach()
  # The phase's buffer peaks (routing.hpp's network_traffic): at 4 x 1 a
  # process has between 1 and 3 peers with a buffer open at once, and held
  # at least one buffer during the updates (a broken count reads 0 or wraps).
  shoal_app_test(gups_routing_buffer_peaks_4x1 NP 4 EXPECT zero MAX_S 60
    REGEX "\"coalescing_buffers_per_process\":[123],.*\"phase_network_buffers_per_process\":[1-9][0-9]?,"
    COMMAND shoal-driver gups --routing direct --cores 1 --log-table 12 --json)
  # 2 processes of 2 cores: one peer, whichever core sends.
  shoal_app_test(gups_routing_buffer_peaks_2x2 NP 2 EXPECT zero MAX_S 60
    REGEX "\"coalescing_buffers_per_process\":1,.*\"phase_network_buffers_per_process\":[1-9][0-9]?,"
    COMMAND shoal-driver gups --routing hypercube --cores 2 --log-table 12 --json)
  shoal_app_test(gups_routing_needs_channel EXPECT 2 MAX_S 30
    REGEX "--routing hypercube: routing applies to --impl channel only, not --impl delegate"
    COMMAND shoal-driver gups --impl delegate --routing hypercube --log-table 10)
  shoal_app_test(gups_routing_with_applied_refused EXPECT 2 MAX_S 30
    REGEX "--routing node with --outstanding applied"
    COMMAND shoal-driver gups --routing node --outstanding applied --log-table 10)
  shoal_app_test(gups_routing_unknown EXPECT 2 MAX_S 30 REGEX "--routing: ring not in"
    COMMAND shoal-driver gups --routing ring --log-table 10)
  # --reduce xor: updates of one word combine on the way; a 2^10 table with
  # 4 updates per word leaves duplicates to remove, and the table must
  # still equal the sequential reference.
  foreach(shape "1x2;1;2" "2x2;2;2" "4x1;4;1")
    list(GET shape 0 tag)
    list(GET shape 1 np)
    list(GET shape 2 cores)
    shoal_app_test(gups_reduce_xor_${tag} NP ${np} EXPECT zero MAX_S 60
      REGEX "\"error_fraction\":0\\.0,.*\"messages_removed\":[1-9][0-9]*,.*\"reduce\":\"xor\",.*\"reference\":\"matched\",.*\"validated\":true"
      COMMAND shoal-driver gups --routing hypercube --reduce xor --cache-slots 256
              --cores ${cores} --log-table 10 --json)
  endforeach()
  shoal_app_test(gups_reduce_needs_routing EXPECT 2 MAX_S 30
    REGEX "--reduce xor: reductions run on the routed target channel; add --routing"
    COMMAND shoal-driver gups --reduce xor --log-table 10)
  shoal_app_test(gups_reduce_unknown EXPECT 2 MAX_S 30 REGEX "--reduce: sum not in"
    COMMAND shoal-driver gups --routing direct --reduce sum --log-table 10)
  shoal_app_test(gups_reduce_zero_cache_slots EXPECT 2 MAX_S 30 REGEX "--cache-slots"
    COMMAND shoal-driver gups --routing direct --reduce xor --cache-slots 0 --log-table 10)
endif()

# permutation --termination depth (depth-two termination detection on one
# channel, channel::end_phase_depth): every slot written once with the right
# value, at 1 x 2, 2 x 2 and 4 x 1; a stored wrong i still fails validation.
if("permutation" IN_LIST SHOAL_BUILT_APPS)
  set(perm_depth_ok "\"sample_wrong\":0,.*\"termination\":\"depth\",.*\"unwritten\":0,\"validated\":true,.*\"writes\":100003,\"wrong\":0")
  foreach(shape "1x2;1;2" "2x2;2;2" "4x1;4;1")
    list(GET shape 0 tag)
    list(GET shape 1 np)
    list(GET shape 2 cores)
    shoal_app_test(permutation_depth_${tag} NP ${np} EXPECT zero MAX_S 60 REGEX "${perm_depth_ok}"
      COMMAND shoal-driver permutation --termination depth --elements 100003 --cores ${cores} --json)
  endforeach()
  shoal_app_test(permutation_depth_fault_fails EXPECT 1 MAX_S 30 REGEX "validation  FAILED"
    COMMAND shoal-driver permutation --termination depth --elements 10007 --cores 2
            --inject-fault-for-test)
  shoal_app_test(permutation_termination_unknown EXPECT 2 MAX_S 30
    REGEX "--termination: waves not in"
    COMMAND shoal-driver permutation --termination waves --elements 100)
endif()
