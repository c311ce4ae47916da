# `shoal cc` (apps/cc/): connected components by shoal::disjoint_set
# (--impl unionfind) and by label propagation over shoal::array
# (--impl labelprop).
#
# Every run validates itself: every vertex's label (its component's smallest
# vertex) is gathered to core 0 and compared with a sequential union-find
# ("validated":true). Kronecker graphs at 1 x 2, 2 x 2 and 4 x 1 processes x
# cores; the bfs test graphs from files with known component counts
# (disconnected.txt: 5, with an isolated vertex and a self-loop-only one;
# small.mtx, symmetric Matrix Market: 1; loops_duplicates.txt: 1). Bad input
# exits 2 with the graph readers' messages; a spoiled label fails validation.
if(NOT TARGET shoal-driver OR NOT "cc" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

set(cc_graphs ${SHOAL_APP_TEST_DATA}/bfs)
foreach(impl unionfind labelprop)
  foreach(shape "1;2" "2;2" "4;1")
    list(GET shape 0 np)
    list(GET shape 1 cores)
    shoal_app_test(cc_${impl}_kronecker_${np}x${cores} NP ${np} EXPECT zero MAX_S 60
      REGEX "\"edges\":16384,\"impl\":\"${impl}\".*\"validated\":true"
      COMMAND shoal-driver cc --impl ${impl} --cores ${cores} --scale 10 --json)
  endforeach()
  foreach(shape "1;2" "2;2")
    list(GET shape 0 np)
    list(GET shape 1 cores)
    shoal_app_test(cc_${impl}_disconnected_${np}x${cores} NP ${np} EXPECT zero MAX_S 30
      REGEX "\"components\":5,.*\"validated\":true,.*\"vertices\":10"
      COMMAND shoal-driver cc --impl ${impl} --cores ${cores} --graph ${cc_graphs}/disconnected.txt
              --json)
  endforeach()
  shoal_app_test(cc_${impl}_symmetric_mtx EXPECT zero MAX_S 30
    REGEX "\"components\":1,.*\"validated\":true,.*\"vertices\":8"
    COMMAND shoal-driver cc --impl ${impl} --cores 2 --graph ${cc_graphs}/small.mtx --json)
  shoal_app_test(cc_${impl}_loops_duplicates_2x1 NP 2 EXPECT zero MAX_S 30
    REGEX "\"components\":1,.*\"validated\":true,.*\"vertices\":4"
    COMMAND shoal-driver cc --impl ${impl} --cores 1 --graph ${cc_graphs}/loops_duplicates.txt
            --json)
  # More cores than edges: the cores without an edge still take part.
  shoal_app_test(cc_${impl}_more_cores_than_edges EXPECT zero MAX_S 30
    REGEX "\"components\":1,.*\"validated\":true"
    COMMAND shoal-driver cc --impl ${impl} --cores 3 --graph ${cc_graphs}/small.txt --json)
  # A spoiled label must fail validation (exit 1).
  shoal_app_test(cc_${impl}_corrupt_fails_validation EXPECT 1 MAX_S 30
    REGEX "\"validated\":false,\"validation\":\"[0-9]+ components \\([0-9]+ expected\\), 1 of 1024 vertices"
    COMMAND shoal-driver cc --impl ${impl} --cores 2 --scale 10 --corrupt --json)
endforeach()

# Bad input: status 2, a message naming the flag, file and line.
shoal_app_test(cc_missing_file EXPECT 2 MAX_S 30
  REGEX "shoal cc: error: --graph [^ ]*no_such_graph.txt: cannot open: No such file"
  COMMAND shoal-driver cc --cores 2 --graph ${cc_graphs}/no_such_graph.txt)
shoal_app_test(cc_malformed_file_2x1 NP 2 EXPECT 2 MAX_S 30
  REGEX "malformed.txt:3: malformed line '2 x3': expected an integer vertex id"
  COMMAND shoal-driver cc --cores 1 --graph ${cc_graphs}/malformed.txt)
shoal_app_test(cc_vertex_out_of_range EXPECT 2 MAX_S 30
  REGEX "out_of_range.mtx:5: vertex id 9 out of range \\[1, 4\\]"
  COMMAND shoal-driver cc --impl labelprop --cores 2 --graph ${cc_graphs}/out_of_range.mtx)
shoal_app_test(cc_negative_vertex EXPECT 2 MAX_S 30
  REGEX "negative.txt:3: negative vertex id -3"
  COMMAND shoal-driver cc --cores 2 --graph ${cc_graphs}/negative.txt)
shoal_app_test(cc_scale_too_large EXPECT 2 MAX_S 30
  REGEX "shoal cc: error: --scale/--edgefactor: a graph of [0-9]+ vertices and [0-9]+ edges needs about [0-9.]+ [KMGTP]iB of memory"
  COMMAND shoal-driver cc --cores 2 --scale 40)
shoal_app_test(cc_unknown_impl EXPECT 2 MAX_S 30
  REGEX "--impl: bfs is not in \\{unionfind,labelprop\\}|--impl.*bfs"
  COMMAND shoal-driver cc --impl bfs --cores 2 --scale 4)
# Search keys belong to bfs: cc refuses them rather than ignoring them.
shoal_app_test(cc_refuses_search_keys EXPECT 2 MAX_S 30
  REGEX "--root"
  COMMAND shoal-driver cc --cores 2 --scale 4 --root 1)
