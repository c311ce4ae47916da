# shoal-baseline-bfs, the plain-MPI Graph500 BFS: every search validated by the
# Graph500 rules (apps/bfs/plain/validate.cpp) on 1 and 2 processes, graphs read
# from files checked against hand-computed trees, and bad input refused on every
# rank with a message and a non-zero status.
if(NOT TARGET shoal-baseline-bfs)
  return()
endif()

set(bfsb_validated "\"validated\":true")
set(bfsb_data ${SHOAL_APP_TEST_DATA}/bfs)

# Kronecker graphs, 64 keys each; 2 processes exchange half of every level.
foreach(scale 10 12 14)
  shoal_app_test(bfs_baseline_scale${scale}_np1 EXPECT zero MAX_S 30 REGEX "${bfsb_validated}"
    COMMAND shoal-baseline-bfs --scale ${scale} --json)
  shoal_app_test(bfs_baseline_scale${scale}_np2 NP 2 EXPECT zero MAX_S 30 REGEX "${bfsb_validated}"
    COMMAND shoal-baseline-bfs --scale ${scale} --json)
endforeach()
# The line `shoal bfs` gets (an --impl, another seed and edge factor) runs here too.
shoal_app_test(bfs_baseline_impl_ignored_np2 NP 2 EXPECT zero MAX_S 30 REGEX "${bfsb_validated}"
  COMMAND shoal-baseline-bfs --impl any --scale 11 --edgefactor 8 --seed 7 --roots 16 --json)
# Every remote neighbour sent (no sender filter), as Graph500's reference code does.
foreach(np 1 2)
  shoal_app_test(bfs_baseline_no_sender_filter_np${np} NP ${np} EXPECT zero MAX_S 30
    REGEX "\"sender_filter\":false.*${bfsb_validated}"
    COMMAND shoal-baseline-bfs --scale 12 --no-sender-filter --json)
endforeach()
# Three blocks whose sizes are not a power of two (the division path of the owner).
shoal_app_test(bfs_baseline_three_ranks NP 3 EXPECT zero MAX_S 30 REGEX "${bfsb_validated}"
  COMMAND shoal-baseline-bfs --scale 11 --roots 16 --json)

# Files shared with `shoal bfs` (tests/apps/data/bfs/; the trees from root 0 are
# in the files' comments): an edge list and the same graph in Matrix Market,
# self-loops with duplicate edges, and a graph in three parts with isolated
# vertices, every vertex with an edge searched.
foreach(np 1 2)
  shoal_app_test(bfs_baseline_edge_list_np${np} NP ${np} EXPECT zero MAX_S 30
    REGEX "\"depth\":5,\"edges\":9,\"reached\":8,\"root\":0.*${bfsb_validated}"
    COMMAND shoal-baseline-bfs --graph ${bfsb_data}/small.txt --root 0 --json)
  shoal_app_test(bfs_baseline_matrix_market_np${np} NP ${np} EXPECT zero MAX_S 30
    REGEX "\"depth\":5,\"edges\":9,\"reached\":8,\"root\":0.*${bfsb_validated}"
    COMMAND shoal-baseline-bfs --graph ${bfsb_data}/small.mtx --root 0 --json)
  shoal_app_test(bfs_baseline_loops_duplicates_np${np} NP ${np} EXPECT zero MAX_S 30
    REGEX "\"depth\":2,\"edges\":9,\"reached\":4,\"root\":0.*${bfsb_validated}"
    COMMAND shoal-baseline-bfs --graph ${bfsb_data}/loops_duplicates.txt --root 0 --json)
  shoal_app_test(bfs_baseline_disconnected_np${np} NP ${np} EXPECT zero MAX_S 30
    REGEX "\"depth\":2,\"edges\":4,\"reached\":4,\"root\":0.*${bfsb_validated}"
    COMMAND shoal-baseline-bfs --graph ${bfsb_data}/disconnected.txt --root 0 --json)
  shoal_app_test(bfs_baseline_disconnected_all_keys_np${np} NP ${np} EXPECT zero MAX_S 30
    REGEX "10 vertices, 8 edges, 7 search keys.*${bfsb_validated}"
    COMMAND shoal-baseline-bfs --graph ${bfsb_data}/disconnected.txt --roots 64 --json)
endforeach()

# A parent array that breaks a Graph500 rule fails the run (status 1, FAILED).
shoal_app_test(bfs_baseline_failed_check_fails_np2 NP 2 EXPECT 1 MAX_S 30
  REGEX "validation  FAILED \\(root [0-9]+: "
  COMMAND shoal-baseline-bfs --scale 10 --roots 4 --corrupt-for-test)
shoal_app_test(bfs_baseline_help EXPECT zero MAX_S 30 REGEX "--scale.*--graph.*--root.*--json"
  COMMAND shoal-baseline-bfs --help)

# Bad input, refused on every rank (never a hang).
shoal_app_test(bfs_baseline_missing_file NP 2 EXPECT 2 MAX_S 30
  REGEX "shoal-baseline-bfs: error: --graph .*nosuch.el: cannot open"
  COMMAND shoal-baseline-bfs --graph ${bfsb_data}/nosuch.el)
shoal_app_test(bfs_baseline_missing_file_np1 EXPECT 2 MAX_S 30
  REGEX "shoal-baseline-bfs: error: --graph .*nosuch.el: cannot open"
  COMMAND shoal-baseline-bfs --graph ${bfsb_data}/nosuch.el)
shoal_app_test(bfs_baseline_scale_too_large NP 2 EXPECT 2 MAX_S 30
  REGEX "shoal-baseline-bfs: error: --scale/--edgefactor: .*memory"
  COMMAND shoal-baseline-bfs --scale 40)
shoal_app_test(bfs_baseline_root_out_of_range NP 2 EXPECT 2 MAX_S 30
  REGEX "shoal-baseline-bfs: error: --root 8: no such vertex"
  COMMAND shoal-baseline-bfs --graph ${bfsb_data}/small.txt --root 8)
shoal_app_test(bfs_baseline_malformed_file NP 2 EXPECT 2 MAX_S 30
  REGEX "shoal-baseline-bfs: error: .*malformed.txt:3: malformed"
  COMMAND shoal-baseline-bfs --graph ${bfsb_data}/malformed.txt)
shoal_app_test(bfs_baseline_truncated_file NP 2 EXPECT 2 MAX_S 30
  REGEX "shoal-baseline-bfs: error: .*truncated.mtx:.*truncated"
  COMMAND shoal-baseline-bfs --graph ${bfsb_data}/truncated.mtx)
shoal_app_test(bfs_baseline_no_search_key NP 2 EXPECT 2 MAX_S 30
  REGEX "shoal-baseline-bfs: error: .*no search key"
  COMMAND shoal-baseline-bfs --graph ${bfsb_data}/loops_only.txt)
shoal_app_test(bfs_baseline_bad_flag NP 2 EXPECT 2 MAX_S 30
  REGEX "shoal-baseline-bfs: error: --scale: Value 0 not in range"
  COMMAND shoal-baseline-bfs --scale 0)
