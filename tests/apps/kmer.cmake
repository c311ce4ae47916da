# `shoal kmer` (k-mer counting, issue 12 item 4) and its FASTA/FASTQ reader.
#
# seq_file_test: the reader on buffers and files (every refused input).
add_executable(seq_file_test ${CMAKE_CURRENT_SOURCE_DIR}/seq_file_test.cpp)
target_link_libraries(seq_file_test PRIVATE shoal_apps_plain GTest::gtest GTest::gtest_main)
shoal_apply_defaults(seq_file_test)
add_test(NAME app_seq_file COMMAND seq_file_test)
set_tests_properties(app_seq_file PROPERTIES LABELS apps TIMEOUT 60)
