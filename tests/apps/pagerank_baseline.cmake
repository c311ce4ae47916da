# shoal-baseline-pagerank, the plain-MPI PageRank (MPI_Alltoallv per
# iteration): validated against the same sequential reference as
# `shoal pagerank` on 1, 2 and 3 processes, the hand-computed file graph, a
# lost increment failing, bad input refused on every rank with status 2.
if(NOT TARGET shoal-baseline-pagerank)
  return()
endif()

set(prb_ok "\"validated\":true")
set(prb_data ${SHOAL_APP_TEST_DATA}/pagerank)

shoal_app_test(pagerank_baseline_scale12_np1 EXPECT zero MAX_S 10
  REGEX "\"impl\":\"mpi-alltoallv\".*\"iterations\":[0-9]+.*${prb_ok}"
  COMMAND shoal-baseline-pagerank --scale 12 --json)
shoal_app_test(pagerank_baseline_scale12_np2 NP 2 EXPECT zero MAX_S 10
  REGEX "\"edges_per_s\":[0-9].*\"iterations\":[0-9]+.*${prb_ok}"
  COMMAND shoal-baseline-pagerank --scale 12 --json)
shoal_app_test(pagerank_baseline_three_ranks NP 3 EXPECT zero MAX_S 10 REGEX "${prb_ok}"
  COMMAND shoal-baseline-pagerank --impl channel --scale 11 --json)
shoal_app_test(pagerank_baseline_combining_np2 NP 2 EXPECT zero MAX_S 10
  REGEX "\"impl\":\"mpi-alltoallv-combining\".*\"iterations\":[0-9]+.*${prb_ok}"
  COMMAND shoal-baseline-pagerank --impl combining --scale 12 --json)
set(prb_small_ranks "\"top_ranks\":..\"rank\":0\\.37847[0-9]*,\"vertex\":2},{\"rank\":0\\.36932[0-9]*,\"vertex\":0},{\"rank\":0\\.20458[0-9]*,\"vertex\":1},{\"rank\":0\\.047619[0-9]*,\"vertex\":3}")
shoal_app_test(pagerank_baseline_small_file_np2 NP 2 EXPECT zero MAX_S 10
  REGEX "\"dangling\":1,\"edges\":4,.*${prb_small_ranks}.*${prb_ok}"
  COMMAND shoal-baseline-pagerank --graph ${prb_data}/small.txt --tolerance 1e-14 --iterations 500 --json)
shoal_app_test(pagerank_baseline_corrupt_fails_np2 NP 2 EXPECT 1 MAX_S 10
  REGEX "validation  FAILED \\(max \\|rank - sequential rank\\|"
  COMMAND shoal-baseline-pagerank --scale 10 --corrupt-for-test)
shoal_app_test(pagerank_baseline_malformed_file NP 2 EXPECT 2 MAX_S 10
  REGEX "shoal-baseline-pagerank: error: [^ ]*malformed.txt:3: malformed line"
  COMMAND shoal-baseline-pagerank --graph ${prb_data}/malformed.txt)
shoal_app_test(pagerank_baseline_scale_too_large NP 2 EXPECT 2 MAX_S 10
  REGEX "shoal-baseline-pagerank: error: --scale/--edgefactor: .*memory"
  COMMAND shoal-baseline-pagerank --scale 36)
shoal_app_test(pagerank_baseline_bad_tolerance NP 2 EXPECT 2 MAX_S 10
  REGEX "shoal-baseline-pagerank: error: --tolerance: must be a number > 0"
  COMMAND shoal-baseline-pagerank --tolerance -1)
# The baseline's hidden flag is named in its errors too (status 2).
shoal_app_test(pagerank_baseline_bad_corrupt_value EXPECT 2 MAX_S 10
  REGEX "shoal-baseline-pagerank: error: Could not convert: --corrupt-for-test = zzz"
  COMMAND shoal-baseline-pagerank --scale 10 --corrupt-for-test=zzz)
