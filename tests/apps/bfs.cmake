# shoal bfs (Graph500): every search of every variant checked by the five
# Graph500 rules (apps/bfs/plain/validate.cpp), on 1 process x 2 cores and 2
# processes x 1 core; graphs read from files checked against trees computed by
# hand (see the files' comments); a parent array broken on purpose must fail
# each rule; bad input must end with a message naming the problem.
set(bfs_ok "\"validated\":true")
set(bfs_data ${SHOAL_APP_TEST_DATA}/bfs)

# Kronecker graphs, scales 10-14, every variant in both shapes of a 2-core job.
foreach(impl channel async delegate queue)
  shoal_app_test(bfs_${impl}_scale10_1x2 EXPECT zero MAX_S 30 REGEX "${bfs_ok}"
    COMMAND shoal-driver bfs --impl ${impl} --cores 2 --scale 10 --roots 16 --json)
  shoal_app_test(bfs_${impl}_scale12_2x1 NP 2 EXPECT zero MAX_S 30 REGEX "${bfs_ok}"
    COMMAND shoal-driver bfs --impl ${impl} --cores 1 --scale 12 --roots 16 --json)
  shoal_app_test(bfs_${impl}_scale14_1x2 EXPECT zero MAX_S 30 REGEX "${bfs_ok}"
    COMMAND shoal-driver bfs --impl ${impl} --cores 2 --scale 14 --roots 8 --json)
  shoal_app_test(bfs_${impl}_scale14_2x1 NP 2 EXPECT zero MAX_S 30 REGEX "${bfs_ok}"
    COMMAND shoal-driver bfs --impl ${impl} --cores 1 --scale 14 --roots 8 --json)
endforeach()
# Three cores (owner by multiply-high division, not a shift), 2 x 2 cores, and
# every remote neighbour sent (no sender filter).
shoal_app_test(bfs_channel_three_cores EXPECT zero MAX_S 30 REGEX "${bfs_ok}"
  COMMAND shoal-driver bfs --cores 3 --scale 11 --roots 16 --json)
shoal_app_test(bfs_channel_2x2 NP 2 EXPECT zero MAX_S 30 REGEX "${bfs_ok}"
  COMMAND shoal-driver bfs --cores 2 --scale 12 --roots 16 --json)
shoal_app_test(bfs_channel_no_sender_filter_2x1 NP 2 EXPECT zero MAX_S 30
  REGEX "\"sender_filter\":false.*${bfs_ok}"
  COMMAND shoal-driver bfs --cores 1 --scale 12 --roots 16 --no-sender-filter --json)
# The report: the issue's fields, TEPS as the rate in MTEPS, one record per key.
shoal_app_test(bfs_json_fields EXPECT zero MAX_S 30
  REGEX "\"construction_s\":[0-9].*\"rate_unit\":\"MTEPS\".*\"roots\":..\"depth\":[0-9]+,\"edges\":[0-9]+,\"reached\":[0-9]+,\"root\":[0-9]+,\"time_s\":[0-9].*\"teps_harmonic_mean\":[0-9].*${bfs_ok}"
  COMMAND shoal-driver bfs --cores 2 --scale 10 --roots 4 --json)

# Files. --block-bytes 8 deals the few vertices out one by one over the cores.
foreach(shape "1x2;1;2" "2x1;2;1")
  list(GET shape 0 name)
  list(GET shape 1 np)
  list(GET shape 2 cores)
  shoal_app_test(bfs_edge_list_${name} NP ${np} EXPECT zero MAX_S 30
    REGEX "\"depth\":5,\"edges\":9,\"reached\":8,\"root\":0.*${bfs_ok}"
    COMMAND shoal-driver bfs --cores ${cores} --block-bytes 8 --graph ${bfs_data}/small.txt --root 0 --json)
  shoal_app_test(bfs_matrix_market_${name} NP ${np} EXPECT zero MAX_S 30
    REGEX "\"depth\":5,\"edges\":9,\"reached\":8,\"root\":0.*${bfs_ok}"
    COMMAND shoal-driver bfs --cores ${cores} --block-bytes 8 --graph ${bfs_data}/small.mtx --root 0 --json)
  # Every vertex with an edge is a key: 7 of the 10 (vertex 9 has only a self-loop).
  shoal_app_test(bfs_disconnected_all_keys_${name} NP ${np} EXPECT zero MAX_S 30
    REGEX "10 vertices, 8 edges, 7 search keys.*${bfs_ok}"
    COMMAND shoal-driver bfs --cores ${cores} --block-bytes 8 --graph ${bfs_data}/disconnected.txt --roots 64 --json)
endforeach()
foreach(impl channel async delegate queue)
  shoal_app_test(bfs_${impl}_disconnected_2x1 NP 2 EXPECT zero MAX_S 30
    REGEX "\"depth\":2,\"edges\":4,\"reached\":4,\"root\":0.*${bfs_ok}"
    COMMAND shoal-driver bfs --impl ${impl} --cores 1 --block-bytes 8 --graph ${bfs_data}/disconnected.txt --root 0 --json)
  shoal_app_test(bfs_${impl}_loops_duplicates_1x2 EXPECT zero MAX_S 30
    REGEX "\"depth\":2,\"edges\":9,\"reached\":4,\"root\":0.*${bfs_ok}"
    COMMAND shoal-driver bfs --impl ${impl} --cores 2 --block-bytes 8 --graph ${bfs_data}/loops_duplicates.txt --root 0 --json)
endforeach()

# A parent array broken after the first search must fail the rule broken,
# naming the root, with a non-zero status.
foreach(rule 1 2 3 4 5)
  shoal_app_test(bfs_corrupt_rule${rule}_fails EXPECT 1 MAX_S 30
    REGEX "validation  FAILED \\(root [0-9]+: rule ${rule} "
    COMMAND shoal-driver bfs --cores 2 --scale 10 --roots 2 --corrupt-for-test ${rule})
endforeach()
shoal_app_test(bfs_corrupt_rule3_fails_2x1 NP 2 EXPECT 1 MAX_S 30
  REGEX "\"validated\":false,\"validation\":\"root [0-9]+: rule 3 "
  COMMAND shoal-driver bfs --cores 1 --scale 10 --roots 2 --corrupt-for-test 3 --json)

# Bad input: a message naming the flag, file and line, and status 2.
shoal_app_test(bfs_missing_file EXPECT 2 MAX_S 30
  REGEX "shoal bfs: error: --graph [^ ]*no_such_graph.txt: cannot open: No such file"
  COMMAND shoal-driver bfs --cores 2 --graph ${bfs_data}/no_such_graph.txt)
shoal_app_test(bfs_malformed_file EXPECT 2 MAX_S 30
  REGEX "malformed.txt:3: malformed line '2 x3': expected an integer vertex id"
  COMMAND shoal-driver bfs --cores 2 --graph ${bfs_data}/malformed.txt)
shoal_app_test(bfs_malformed_file_2x1 NP 2 EXPECT 2 MAX_S 30
  REGEX "malformed.txt:3: malformed line"
  COMMAND shoal-driver bfs --cores 1 --graph ${bfs_data}/malformed.txt)
shoal_app_test(bfs_truncated_file EXPECT 2 MAX_S 30
  REGEX "truncated.mtx:5: truncated: the size line \\(line 2\\) announces 5 entries, the file has 3"
  COMMAND shoal-driver bfs --cores 2 --graph ${bfs_data}/truncated.mtx)
shoal_app_test(bfs_vertex_out_of_range EXPECT 2 MAX_S 30
  REGEX "out_of_range.mtx:5: vertex id 9 out of range \\[1, 4\\]"
  COMMAND shoal-driver bfs --cores 2 --graph ${bfs_data}/out_of_range.mtx)
shoal_app_test(bfs_negative_vertex EXPECT 2 MAX_S 30
  REGEX "negative.txt:3: negative vertex id -3"
  COMMAND shoal-driver bfs --cores 2 --graph ${bfs_data}/negative.txt)
shoal_app_test(bfs_scale_too_large EXPECT 2 MAX_S 30
  REGEX "shoal bfs: error: --scale/--edgefactor: a graph of [0-9]+ vertices .* [KMGTP]iB of memory"
  COMMAND shoal-driver bfs --cores 2 --scale 40)
shoal_app_test(bfs_root_out_of_range EXPECT 2 MAX_S 30
  REGEX "--root 8: no such vertex \\(the graph has 8 vertices\\)"
  COMMAND shoal-driver bfs --cores 2 --graph ${bfs_data}/small.txt --root 8)
shoal_app_test(bfs_no_search_key EXPECT 2 MAX_S 30
  REGEX "shoal bfs: error: the graph has no edge other than self-loops: no search key"
  COMMAND shoal-driver bfs --cores 2 --graph ${bfs_data}/loops_only.txt)
# Found on rank 0 while the other ranks are in shoal::run: the job still ends with status 2.
shoal_app_test(bfs_no_search_key_2x1 NP 2 EXPECT 2 MAX_S 30
  REGEX "shoal bfs: error: the graph has no edge other than self-loops: no search key"
  COMMAND shoal-driver bfs --cores 1 --graph ${bfs_data}/loops_only.txt)
