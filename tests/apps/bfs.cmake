# shoal bfs (Graph500): every search of every variant checked by the five
# Graph500 rules (apps/bfs/plain/validate.cpp), on 1 process x 2 cores and 2
# processes x 1 core; graphs read from files checked against trees computed by
# hand (see the files' comments); a parent array broken on purpose must fail
# each rule; bad input must end with a message naming the problem.
set(bfs_ok "\"validated\":true")
set(bfs_data ${SHOAL_APP_TEST_DATA}/bfs)

# Kronecker graphs, scales 10-14, every variant in both shapes of a 2-core job.
foreach(impl channel async delegate queue hybrid)
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
foreach(impl channel async delegate queue hybrid)
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
# The hidden flag's own errors name it, like a visible flag's.
shoal_app_test(bfs_corrupt_rule_out_of_range_refused EXPECT 2 MAX_S 30
  REGEX "shoal bfs: error: --corrupt-for-test: Value 9 not in range 1 to 5"
  COMMAND shoal-driver bfs --cores 2 --scale 10 --corrupt-for-test 9)

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

# Hostile graph files (issue 16): every one ends with status 2 and a message
# naming the file, the line and what was wrong; none is read as something else.
set(bfs_hostile ${SHOAL_APP_TEST_DATA}/hostile)
foreach(case
    "banner_lower_case.mtx;banner_lower_case.mtx:1: unknown banner '%%matrixmarket': a Matrix Market file starts with \"%%MatrixMarket\""
    "banner_leading_space.mtx;banner_leading_space.mtx:1: the Matrix Market banner must start in column 1"
    "banner_misspelled.mtx;banner_misspelled.mtx:1: unknown banner '%%MatrixMarkt'"
    "banner_line2.mtx;banner_line2.mtx:2: '%%MatrixMarket matrix coordinate pattern general' looks like a Matrix Market banner, which must be the first line"
    "complex.mtx;complex.mtx:1: complex Matrix Market files are not supported"
    "hermitian.mtx;hermitian.mtx:1: hermitian Matrix Market files are complex"
    "entry_junk.mtx;entry_junk.mtx:3: malformed entry '1 2 junk': expected \"row column real-value\""
    "pattern_with_value.mtx;pattern_with_value.mtx:3: malformed entry '1 2 5': expected \"row column\""
    "symmetric_upper.mtx;symmetric_upper.mtx:4: entry \\(2, 3\\) above the diagonal"
    "symmetric_not_square.mtx;symmetric_not_square.mtx:2: a symmetric matrix must be square, this one is 3 x 4"
    "too_many_entries.mtx;too_many_entries.mtx:5: more entries than the 2 the size line \\(line 2\\) announces"
    "edge_junk.txt;edge_junk.txt:2: malformed line '1 2 junk'"
    "garbage.txt;garbage.txt:2: malformed line '\\\\x01\\\\x02\\\\xff\\\\x1b.31m 1': expected") # '.': a lone bracket would split the list wrongly
  list(GET case 0 file)
  list(GET case 1 re)
  get_filename_component(name ${file} NAME_WE)
  shoal_app_test(bfs_hostile_${name} EXPECT 2 MAX_S 10 REGEX "shoal bfs: error: [^ ]*${re}"
    COMMAND shoal-driver bfs --cores 1 --graph ${bfs_hostile}/${file})
endforeach()
# One large id must be refused before the input is spread and the CSR built
# (it took 38 s and 4 GB to reach "global heap exhausted"), naming its line.
shoal_app_test(bfs_hostile_huge_id_heap EXPECT 2 MAX_S 10
  REGEX "error: --graph [^ ]*huge_id.txt:3: vertex id 300000000: a graph of 300000001 vertices needs about [0-9.]+ GiB of global heap per process for its parent array, more than --heap-mb 1024"
  COMMAND shoal-driver bfs --cores 1 --graph ${bfs_hostile}/huge_id.txt)
# An id of 2^31 blames the file and line, not --scale/--edgefactor.
shoal_app_test(bfs_hostile_id_2_31 EXPECT 2 MAX_S 10
  REGEX "error: --graph [^ ]*id_2_31.txt:2: vertex id 2147483648: a graph of 2147483649 vertices"
  COMMAND shoal-driver bfs --cores 1 --graph ${bfs_hostile}/id_2_31.txt)
# A file without line ends ends at the line-length bound, not out of memory.
shoal_app_test(bfs_hostile_dev_zero EXPECT 2 MAX_S 10
  REGEX "error: /dev/zero:1: line longer than 65536 bytes"
  COMMAND shoal-driver bfs --cores 1 --graph /dev/zero)
shoal_app_test(bfs_hostile_directory EXPECT 2 MAX_S 10
  REGEX "error: --graph [^ ]*hostile: is a directory, not a file"
  COMMAND shoal-driver bfs --cores 1 --graph ${bfs_hostile})
# A UTF-8 byte-order mark at the start is skipped (a 3-cycle: depth 1, 3 reached).
shoal_app_test(bfs_hostile_bom EXPECT zero MAX_S 10
  REGEX "\"depth\":1,\"edges\":3,\"reached\":3,\"root\":0.*${bfs_ok}"
  COMMAND shoal-driver bfs --cores 1 --graph ${bfs_hostile}/bom.txt --root 0 --json)
# A huge id is cut in the message, not echoed whole.
# (60,000 digits: a longer line stops at the line-length bound first.)
string(REPEAT "9" 60000 bfs_long_id)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/long_id.txt "0 1\n1 ${bfs_long_id}\n")
shoal_app_test(bfs_hostile_long_id EXPECT 2 MAX_S 10
  REGEX "long_id.txt:2: vertex id 9999999999999999999999999999999999999999\\.\\.\\. \\(60000 bytes\\) out of range \\[0, 1099511627775\\]\n"
  COMMAND shoal-driver bfs --cores 1 --graph ${CMAKE_CURRENT_BINARY_DIR}/long_id.txt)
# Flags: an empty file name, a file with generator flags, a negative root, seeds
# outside 0 .. 2^64 - 1.
shoal_app_test(bfs_hostile_empty_graph_name EXPECT 2 MAX_S 10
  REGEX "shoal bfs: error: --graph: empty (file name|value)"
  COMMAND sh -c "exec \"$0\" bfs --cores 1 --graph ''" $<TARGET_FILE:shoal-driver>)
shoal_app_test(bfs_hostile_graph_and_scale EXPECT 2 MAX_S 10
  REGEX "shoal bfs: error: --scale excludes --graph"
  COMMAND shoal-driver bfs --cores 1 --graph ${bfs_data}/small.txt --scale 5)
shoal_app_test(bfs_hostile_negative_root EXPECT 2 MAX_S 10
  REGEX "shoal bfs: error: --root: Value -1 not in range 0 to 1099511627776"
  COMMAND shoal-driver bfs --cores 1 --scale 5 --root -1)
foreach(seed "18446744073709551616" "1e23" "-1")
  shoal_app_test(bfs_hostile_seed_${seed} EXPECT 2 MAX_S 10
    REGEX "shoal bfs: error: --seed: expected an integer 0 \\.\\. 18446744073709551615, got '${seed}'"
    COMMAND shoal-driver bfs --cores 1 --scale 5 --seed ${seed})
endforeach()
# ulimit -v is a memory bound too: a message, not bad_alloc part way.
# Not in sanitizer builds: AddressSanitizer and ThreadSanitizer reserve
# terabytes of address space for their shadow memory at start-up, so no
# program of theirs starts under a ulimit -v of a few GB.
if(NOT SHOAL_SANITIZE MATCHES "address|thread")
  shoal_app_test(bfs_hostile_ulimit_v EXPECT 2 MAX_S 20
    REGEX "shoal bfs: error: --scale/--edgefactor: a graph of 4194304 vertices .* address-space limit \\(ulimit -v\\)"
    COMMAND sh -c "ulimit -v 2500000 && exec \"$0\" bfs --cores 1 --scale 22" $<TARGET_FILE:shoal-driver>)
endif()
# A report that cannot be written is an error, not a silent exit 0.
shoal_app_test(bfs_hostile_stdout_full EXPECT 3 MAX_S 20
  REGEX "shoal: error: cannot write the bfs report to standard output: No space left on device"
  COMMAND sh -c "exec \"$0\" bfs --cores 1 --scale 8 --roots 2 --json > /dev/full" $<TARGET_FILE:shoal-driver>)

# The hybrid (direction-optimising) variant: bottom-up levels really run
# (their frontier gathered from every core), at every job shape, and on a
# file graph whose cores hold fewer than 64 vertices each (the gathered
# frontier is then assembled bit by bit).
foreach(shape "1;1" "1;2" "2;1" "2;2" "3;2")
  list(GET shape 0 np)
  list(GET shape 1 cores)
  shoal_app_test(bfs_hybrid_directions_${np}x${cores} NP ${np} EXPECT zero MAX_S 60
    REGEX "\"bottom_up_levels\":[1-9][0-9]*,.*\"edges_examined_per_search\":[0-9]+,.*\"validated\":true"
    COMMAND shoal-driver bfs --impl hybrid --cores ${cores} --scale 14 --roots 8 --json)
endforeach()
# Fewer than 64 vertices per core: a core's bits of `seen` start inside a
# word, which the bottom-up scan reads 64 at a time (search_hybrid.cpp).
foreach(shape "1x3;1;3" "2x2;2;2")
  list(GET shape 0 name)
  list(GET shape 1 np)
  list(GET shape 2 cores)
  shoal_app_test(bfs_hybrid_unaligned_${name} NP ${np} EXPECT zero MAX_S 30
    REGEX "\"bottom_up_levels\":[1-9][0-9]*,.*\"depth\":5,\"edges\":9,\"reached\":8,\"root\":0.*${bfs_ok}"
    COMMAND shoal-driver bfs --impl hybrid --cores ${cores} --block-bytes 8 --graph ${bfs_data}/small.txt --root 0 --json)
endforeach()
shoal_app_test(bfs_hybrid_small_blocks_2x2 NP 2 EXPECT zero MAX_S 60
  REGEX "\"bottom_up_levels\":[1-9][0-9]*,.*\"validated\":true"
  COMMAND shoal-driver bfs --impl hybrid --cores 2 --block-bytes 8 --scale 10 --roots 8 --json)
foreach(rule 1 2 3 4 5)
  shoal_app_test(bfs_hybrid_corrupt_rule${rule}_1x2 EXPECT 1 MAX_S 60
    REGEX "\"validated\":false"
    COMMAND shoal-driver bfs --impl hybrid --cores 2 --scale 10 --roots 2 --corrupt-for-test ${rule} --json)
endforeach()

# --routing (issue 14 item 6): async relaxations on a routed target channel,
# with and without --reduce min, validated at 1 x 2, 2 x 2 and 4 x 1; at
# 4 x 1 hypercube routes forward at intermediate hops, which --stats counts
# (with the messages handed to MPI). Bad words and misuse: status 2.
set(bfs_routed_ok "\"routing\":\"ROUTING\".*\"stats_mpi_messages\":[0-9]+.*${bfs_ok}")
foreach(routing hypercube node)
  foreach(shape "1x2;1;2" "2x2;2;2" "4x1;4;1")
    list(GET shape 0 tag)
    list(GET shape 1 np)
    list(GET shape 2 cores)
    string(REPLACE "ROUTING" "${routing}" re "${bfs_routed_ok}")
    shoal_app_test(bfs_async_routing_${routing}_${tag} NP ${np} EXPECT zero MAX_S 30 REGEX "${re}"
      COMMAND ${CMAKE_COMMAND} -E env RANKS_PER_NODE=2 $<TARGET_FILE:shoal-driver> bfs
              --impl async --routing ${routing} --cores ${cores} --scale 11 --roots 4 --stats --json)
  endforeach()
endforeach()
shoal_app_test(bfs_async_routing_hypercube_reduce_min_4x1 NP 4 EXPECT zero MAX_S 30
  REGEX "\"messages_removed\":[1-9][0-9]*.*\"stats_values_forwarded\":[1-9][0-9]*.*${bfs_ok}"
  COMMAND shoal-driver bfs --impl async --routing hypercube --reduce min --no-sender-filter
          --cores 1 --scale 11 --roots 4 --stats --json)
shoal_app_test(bfs_routing_unknown EXPECT 2 MAX_S 30 REGEX "--routing: ring not in"
  COMMAND shoal-driver bfs --impl async --routing ring --scale 10)
shoal_app_test(bfs_routing_needs_async EXPECT 2 MAX_S 30
  REGEX "--routing hypercube: routing applies to --impl async only, not --impl channel"
  COMMAND shoal-driver bfs --impl channel --routing hypercube --scale 10)
if(SHOAL_HAVE_MPI)
  shoal_app_test(bfs_routing_unknown_on_rank1_only EXPECT 2 MAX_S 30
    REGEX "rank 1's arguments: 'bfs --impl async --scale 10 --routing ring'"
    COMMAND ${SHOAL_MPIEXEC} -np 1 $<TARGET_FILE:shoal-driver> bfs --impl async --scale 10 --cores 1
            : -np 1 $<TARGET_FILE:shoal-driver> bfs --impl async --scale 10 --cores 1 --routing ring)
endif()
