# Input files that every process reads itself (--graph, --pool, --files, --reads),
# given the same name on every rank but different contents (one node holds a
# stale or damaged copy): tests/apps/in_rank_dir.sh runs each rank of a 2 x 1
# job in data/per_rank/r<rank>. Contents that differ end the job with status 2
# naming the flag, the file and the ranks, before anything is built (they used
# to crash the job, fail validation, or pass on rank 0's copy alone); a file
# bad on rank 1 only is named with its line and the rank that found it.
if(NOT TARGET shoal-driver OR NOT SHOAL_HAVE_MPI)
  return()
endif()

set(per_rank ${CMAKE_CURRENT_SOURCE_DIR}/in_rank_dir.sh ${SHOAL_APP_TEST_DATA}/per_rank
    $<TARGET_FILE:shoal-driver>)
set(differs "rank\\(s\\) 1 read other contents than rank 0")
foreach(app bfs cc pagerank)
  if(NOT app IN_LIST SHOAL_BUILT_APPS)
    continue()
  endif()
  shoal_app_test(per_rank_${app}_graph_differs_refused NP 2 EXPECT 2 MAX_S 20
    REGEX "shoal ${app}: error: --graph graph.txt: ${differs}"
    COMMAND ${per_rank} ${app} --cores 1 --graph graph.txt)
  shoal_app_test(per_rank_${app}_graph_bad_on_rank1_named NP 2 EXPECT 2 MAX_S 20
    REGEX "shoal ${app}: error: bad_on_rank1.txt:2: malformed line '1 x'.* \\(found by rank 1 of 2\\)"
    COMMAND ${per_rank} ${app} --cores 1 --graph bad_on_rank1.txt)
endforeach()
if("chma" IN_LIST SHOAL_BUILT_APPS)
  shoal_app_test(per_rank_chma_pool_differs_refused NP 2 EXPECT 2 MAX_S 20
    REGEX "shoal chma: error: --pool pool.txt: ${differs}"
    COMMAND ${per_rank} chma --cores 1 --pool pool.txt --tasks 4 --length 4)
endif()
if("wordcount" IN_LIST SHOAL_BUILT_APPS)
  # Core 1 (rank 1) counts same.txt, core 0 words.txt: rank 1's own words.txt
  # is never counted, yet it differs from the one rank 0 validates against.
  shoal_app_test(per_rank_wordcount_files_differ_refused NP 2 EXPECT 2 MAX_S 20
    REGEX "shoal wordcount: error: --files words.txt same.txt: ${differs}"
    COMMAND ${per_rank} wordcount --cores 1 --files words.txt same.txt)
  shoal_app_test(per_rank_wordcount_same_files_pass NP 2 EXPECT zero MAX_S 20
    REGEX "\"distinct\":3,.*\"validated\":true"
    COMMAND ${per_rank} wordcount --cores 2 --files same.txt same.txt --json)
endif()
if("kmer" IN_LIST SHOAL_BUILT_APPS)
  # One base differs in rank 1's reads.fa (its last read's last base).
  shoal_app_test(per_rank_kmer_reads_differ_refused NP 2 EXPECT 2 MAX_S 20
    REGEX "shoal kmer: error: --reads reads.fa: ${differs}"
    COMMAND ${per_rank} kmer --cores 1 --reads reads.fa --k 5)
  shoal_app_test(per_rank_kmer_same_reads_pass NP 2 EXPECT zero MAX_S 20
    REGEX "\"validated\":true"
    COMMAND ${per_rank} kmer --cores 2 --reads same.fa --k 5 --json)
endif()
