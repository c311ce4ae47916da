# `shoal kmer` (k-mer counting, issue 12 item 4) and its FASTA/FASTQ reader.
#
# seq_file_test: the reader on buffers and files (every refused input).
add_executable(seq_file_test ${CMAKE_CURRENT_SOURCE_DIR}/seq_file_test.cpp)
target_link_libraries(seq_file_test PRIVATE shoal_apps_plain GTest::gtest GTest::gtest_main)
shoal_apply_defaults(seq_file_test)
add_test(NAME app_seq_file COMMAND seq_file_test)
set_tests_properties(app_seq_file PROPERTIES LABELS apps TIMEOUT 60)

# `shoal kmer` (bcl and bcl-buffer impls, the sequential impl) and
# shoal-baseline-kmer. Every run checks itself exactly against a sequential
# std::unordered_map count (the solid k-mers, their counts, the
# occurrences); --inject-fault count proves the check can fail; bad input
# exits 2 with a message naming the flag or file:line.
if(NOT TARGET shoal-driver OR NOT "kmer" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()
set(shoal_exe $<TARGET_FILE:shoal-driver>)
set(kmer_data ${SHOAL_APP_TEST_DATA}/kmer)
# Small generated reads: 300 reads of 60 bases from a 3000-base genome
# (6x coverage, 1% errors): 12,000 k-mers of 21, about half solid.
set(kmer_small --read-count 300 --read-length 60 --genome-length 3000 --error-rate 0.01)

# A validated, exact run's JSON (keys in JSON order).
function(kmer_ok out impl cores ranks)
  set(${out} "\"cores\":${cores},.*\"exact\":true,\"impl\":\"${impl}\",.*\"ranks\":${ranks},.*\"validated\":true" PARENT_SCOPE)
endfunction()

foreach(impl bcl bcl-buffer)
  foreach(shape "1|1" "1|2" "2|1" "2|2")
    string(REPLACE "|" ";" s "${shape}")
    list(GET s 0 np)
    list(GET s 1 cores)
    math(EXPR total "${np} * ${cores}")
    kmer_ok(re ${impl} ${total} ${np})
    shoal_app_test(kmer_${impl}_${np}x${cores} NP ${np} EXPECT zero MAX_S 60 REGEX "${re}"
      COMMAND shoal-driver kmer --impl ${impl} --cores ${cores} ${kmer_small} --json)
  endforeach()
endforeach()
# add and add_existing on every one-sided backend (remote fetch_add on a
# bucket's value), both impls.
foreach(backend shm rma am)
  foreach(impl bcl bcl-buffer)
    kmer_ok(re ${impl} 2 2)
    shoal_app_test(kmer_${impl}_${backend}_2x1 NP 2 EXPECT zero MAX_S 60 REGEX "${re}"
      COMMAND shoal-driver kmer --impl ${impl} --cores 1 --one-sided ${backend} ${kmer_small} --json)
  endforeach()
endforeach()
# The driver runs kmer (and isx) with --one-sided node unless the user chose
# (tools/shoal.cpp): the node-shared heap here; the user's flag wins.
shoal_app_test(kmer_defaults_to_node_2x1 NP 2 EXPECT zero MAX_S 60
  REGEX "one-sided backend: shm \\(the global heap in node-shared memory, chosen by --one-sided node: all 2 processes on one node"
  COMMAND shoal-driver kmer --cores 1 ${kmer_small} --verbose)
shoal_app_test(kmer_user_one_sided_wins_2x1 NP 2 EXPECT zero MAX_S 60
  REGEX "one-sided backend: am \\(delegates to the owning core\\)"
  COMMAND shoal-driver kmer --cores 1 --one-sided am ${kmer_small} --verbose)
kmer_ok(re bcl 2 1)
shoal_app_test(kmer_bcl_direct_1x2 EXPECT zero MAX_S 60 REGEX "${re}"
  COMMAND shoal-driver kmer --cores 2 --one-sided direct ${kmer_small} --json)
kmer_ok(re bcl-buffer 6 3)
shoal_app_test(kmer_bcl-buffer_3x2 NP 3 EXPECT zero MAX_S 60 REGEX "${re}"
  COMMAND shoal-driver kmer --impl bcl-buffer --cores 2 ${kmer_small} --k 31 --json)
kmer_ok(re sequential 1 1)
shoal_app_test(kmer_sequential EXPECT zero MAX_S 60 REGEX "${re}"
  COMMAND shoal-driver kmer --impl sequential --cores 1 ${kmer_small} --json)
# Without errors every read's k-mers are the genome's: at 6x coverage few
# are singletons; k = 1 folds to two canonical k-mers (A/T and C/G).
shoal_app_test(kmer_no_errors_k1 EXPECT zero MAX_S 60
  REGEX "\"distinct_kmers\":2,.*\"exact\":true,.*\"solid_kmers\":2,.*\"validated\":true"
  COMMAND shoal-driver kmer --cores 2 --k 1 --read-count 100 --read-length 50
          --genome-length 1000 --error-rate 0 --json)
shoal_app_test(kmer_summary EXPECT zero MAX_S 60
  REGEX "kmer \\(bcl\\).*problem +300 generated reads of 60 bases \\(genome of 3000 bases, error rate 0.01, seed 1\\), k = 21.*rate +[0-9.e+-]+ Mkmers/s.*validation +PASSED"
  COMMAND shoal-driver kmer --cores 2 ${kmer_small})

# A user's files: FASTA (multi-line, lower case, N) and FASTQ.
kmer_ok(re bcl 2 2)
shoal_app_test(kmer_fasta_2x1 NP 2 EXPECT zero MAX_S 60
  REGEX "\"kmers\":671,.*\"solid_kmers\":209,.*\"validated\":true"
  COMMAND shoal-driver kmer --cores 1 --k 15 --reads ${kmer_data}/reads.fa --json)
shoal_app_test(kmer_fastq_1x2 EXPECT zero MAX_S 60
  REGEX "\"impl\":\"bcl-buffer\",\"k\":31,\"kmers\":357,.*\"solid_kmers\":81,.*\"validated\":true"
  COMMAND shoal-driver kmer --impl bcl-buffer --cores 2 --k 31 --reads ${kmer_data}/reads.fq --json)

# The check can fail: one count spoiled, in the map (bcl, bcl-buffer) or in
# the sorted runs (sequential).
shoal_app_test(kmer_fault_bcl_2x2 NP 2 EXPECT 1 MAX_S 60
  REGEX "\"exact\":false,.*\"validated\":false"
  COMMAND shoal-driver kmer --cores 2 --one-sided shm ${kmer_small} --inject-fault count --json)
shoal_app_test(kmer_fault_bcl-buffer_1x2 EXPECT 1 MAX_S 60
  REGEX "their counts NOT the reference's"
  COMMAND shoal-driver kmer --impl bcl-buffer --cores 2 ${kmer_small} --inject-fault count)
shoal_app_test(kmer_fault_sequential EXPECT 1 MAX_S 60
  REGEX "\"exact\":false,.*\"validated\":false"
  COMMAND shoal-driver kmer --impl sequential --cores 1 ${kmer_small} --inject-fault count --json)

# Bad input: exit 2, the flag or file:line named.
shoal_app_bad_input_tests(kmer
    "k_0|--k 0: out of range.*expected 1 .. 31|--k|0"
    "k_32|--k 32: out of range.*expected 1 .. 31|--k|32"
    "k_text|--k: expected an integer.*got 'abc'|--k|abc"
    "reads_directory|--reads /: is a directory|--reads|/"
    "reads_missing|--reads /no/such/reads.fq: cannot open|--reads|/no/such/reads.fq"
    "reads_quality|bad_quality.fq:8: record 'r2' \\(line 5\\): 9 quality bytes for 10 bases|--reads|${kmer_data}/bad_quality.fq"
    "reads_with_seed|--seed is for generated reads.*it cannot go with --reads|--reads|${kmer_data}/reads.fa|--seed|3"
    "reads_not_dna|cc.cmake:1: not a FASTA or FASTQ file: the first line starts with '#'|--reads|${CMAKE_CURRENT_SOURCE_DIR}/cc.cmake"
    "error_rate_2|--error-rate 2: out of range.*expected 0 .. 1|--error-rate|2"
    "read_length_below_k|--read-length 10: out of range.*expected --k \\(21\\)|--read-length|10"
    "read_count_0|--read-count 0: out of range|--read-count|0"
    "impl_bogus|--impl: bogus not in|--impl|bogus"
    "memory|--read-count 10000000000 --read-length 100: the count needs .*more than this machine's|--read-count|10000000000"
    "heap|2000000 k-mer windows: the filter and table need .* of each core's global heap slice.*raise --heap-mb|--heap-mb|16|--read-count|25000")
shoal_app_test(kmer_bad_reads_empty EXPECT 2 MAX_S 20 REGEX "shoal kmer: error: --reads: empty value"
  COMMAND sh -c "exec \"$0\" kmer --cores 1 --reads ''" $<TARGET_FILE:shoal-driver>)
# Only rank 1 is wrong: the whole job ends at once, naming it.
if(SHOAL_HAVE_MPI)
  shoal_app_test(kmer_bad_rank1_only EXPECT 2 MAX_S 20
    REGEX "rank 1's arguments: 'kmer --read-count 100 --cores 1 --k 32'|rank\\(s\\) 1 were given other arguments"
    COMMAND ${SHOAL_MPIEXEC} -np 1 ${shoal_exe} kmer --read-count 100 --cores 1 --k 21
            : -np 1 ${shoal_exe} kmer --read-count 100 --cores 1 --k 32)
endif()

# The baseline: same problem, same check.
if(NOT TARGET shoal-baseline-kmer)
  return()
endif()
foreach(np 1 2 3)
  kmer_ok(re mpi-alltoallv ${np} ${np})
  shoal_app_test(kmer_baseline_np${np} NP ${np} EXPECT zero MAX_S 60 REGEX "${re}"
    COMMAND shoal-baseline-kmer ${kmer_small} --json)
endforeach()
shoal_app_test(kmer_baseline_fastq_np2 NP 2 EXPECT zero MAX_S 60
  REGEX "\"kmers\":357,.*\"solid_kmers\":81,.*\"validated\":true"
  COMMAND shoal-baseline-kmer --k 31 --reads ${kmer_data}/reads.fq --json)
shoal_app_test(kmer_baseline_fault NP 2 EXPECT 1 MAX_S 60
  REGEX "\"exact\":false,.*\"validated\":false"
  COMMAND shoal-baseline-kmer ${kmer_small} --inject-fault count --json)
shoal_app_test(kmer_baseline_bad_k NP 2 EXPECT 2 MAX_S 20
  REGEX "shoal-baseline-kmer: error: --k 0: out of range"
  COMMAND shoal-baseline-kmer --k 0)
