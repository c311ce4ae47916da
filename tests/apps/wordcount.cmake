# `shoal wordcount` (apps/wordcount/): word counts on shoal::counting_set.
#
# Every run validates itself: every (word, count) is gathered to core 0 and
# compared with a sequential count of the same input, and so is the top-K
# ranking ("validated":true). Files (tests/apps/data/wordcount/, shared out
# whole between cores) and generated Zipf text, at 1 x 2 and 2 x 2 processes
# x cores; the known ranking of the files is checked too (the 7, dog 6, then
# a tie at 3 broken by word: a). Bad input exits 2 naming the flag or file
# and line: a missing, empty or binary file, --top 0, a --top over 2^64.
if(NOT TARGET shoal-driver OR NOT "wordcount" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

set(wc_data ${SHOAL_APP_TEST_DATA}/wordcount)
set(wc_files ${wc_data}/one.txt ${wc_data}/two.txt ${wc_data}/three.txt)
set(wc_ranked "\"distinct\":18,.*\"ranking\":\\[\\[\"the\",7\\],\\[\"dog\",6\\],\\[\"a\",3\\]\\].*\"validated\":true,.*\"words\":33")
shoal_app_test(wordcount_files_1x2 EXPECT zero MAX_S 30 REGEX "${wc_ranked}"
  COMMAND shoal-driver wordcount --cores 2 --files ${wc_files} --top 3 --json)
shoal_app_test(wordcount_files_2x2 NP 2 EXPECT zero MAX_S 30 REGEX "${wc_ranked}"
  COMMAND shoal-driver wordcount --cores 2 --files ${wc_files} --top 3 --json)
# More cores than files: the cores without a file still take part.
shoal_app_test(wordcount_files_1x3_one_file EXPECT zero MAX_S 30
  REGEX "\"ranking\":\\[\\[\"dog\",3\\]\\].*\"validated\":true"
  COMMAND shoal-driver wordcount --cores 3 --files ${wc_data}/three.txt --top 1 --json)
foreach(shape "1;2" "2;2" "2;1")
  list(GET shape 0 np)
  list(GET shape 1 cores)
  shoal_app_test(wordcount_zipf_${np}x${cores} NP ${np} EXPECT zero MAX_S 60
    REGEX "\"top\":10,.*\"validated\":true,.*\"words\":[0-9]+"
    COMMAND shoal-driver wordcount --cores ${cores} --words-per-core 100000 --vocabulary 20000
            --seed 5 --json)
endforeach()
# A K above the number of distinct words ranks them all.
shoal_app_test(wordcount_huge_k_ranks_every_word EXPECT zero MAX_S 30
  REGEX "\"distinct\":18,.*\"top\":1000000000,.*\"validated\":true"
  COMMAND shoal-driver wordcount --cores 2 --files ${wc_files} --top 1000000000 --json)

# Bad input: exit 2, a message naming what and where.
shoal_app_test(wordcount_missing_file EXPECT 2 MAX_S 30
  REGEX "shoal wordcount: error: --files .*no_such_file.txt: cannot open"
  COMMAND shoal-driver wordcount --cores 2 --files ${wc_data}/no_such_file.txt)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/wordcount_empty.txt "")
shoal_app_test(wordcount_empty_file EXPECT 2 MAX_S 30
  REGEX "shoal wordcount: error: --files: .*wordcount_empty.txt is empty"
  COMMAND shoal-driver wordcount --cores 2 --files ${wc_data}/one.txt
          ${CMAKE_CURRENT_BINARY_DIR}/wordcount_empty.txt)
# A binary file: the driver's own executable.
shoal_app_test(wordcount_binary_file EXPECT 2 MAX_S 30
  REGEX "shoal wordcount: error: .*shoal:[0-9]+: binary data \\(a NUL byte at column [0-9]+\\)"
  COMMAND shoal-driver wordcount --cores 2 --files $<TARGET_FILE:shoal-driver>)
shoal_app_test(wordcount_binary_file_2x2 NP 2 EXPECT 2 MAX_S 30
  REGEX "binary data \\(a NUL byte"
  COMMAND shoal-driver wordcount --cores 2 --files $<TARGET_FILE:shoal-driver>)
shoal_app_test(wordcount_top_zero EXPECT 2 MAX_S 30
  REGEX "shoal wordcount: error: --top: expected at least 1 word to rank, got 0"
  COMMAND shoal-driver wordcount --cores 2 --top 0)
shoal_app_test(wordcount_top_over_64_bits EXPECT 2 MAX_S 30
  REGEX "--top: expected an integer 0 .. 18446744073709551615, got '99999999999999999999'"
  COMMAND shoal-driver wordcount --cores 2 --top 99999999999999999999)
# A pipe (here bash's process substitution) cannot be read the three times
# wordcount reads a file (check, count, sequential check): refused, where
# the second read ended the job from inside a task (status 3) and a FIFO hung.
foreach(np 1 2)
  shoal_app_test(wordcount_pipe_refused_np${np} NP ${np} EXPECT 2 MAX_S 20
    REGEX "shoal wordcount: error: --files /dev/fd/[0-9]+: not a regular file"
    COMMAND bash -c "exec \"$0\" wordcount --cores 2 --files <(echo a b c)"
            $<TARGET_FILE:shoal-driver>)
endforeach()
# Generated text past 2^40 words (hours, and as long again for the sequential
# check) is refused at once: it ran until killed.
foreach(np 1 2)
  shoal_app_test(wordcount_words_too_many_np${np} NP ${np} EXPECT 2 MAX_S 20
    REGEX "shoal wordcount: error: --words-per-core 18446744073709551615 on [24] cores: [0-9.]+e\\+19 words, more than the 2\\^40 \\(1\\.1e\\+12\\) a run may generate"
    COMMAND shoal-driver wordcount --cores 2 --words-per-core 18446744073709551615)
endforeach()
# Fault injection: one spoiled count must fail validation (exit 1).
shoal_app_test(wordcount_corrupt_fails_validation EXPECT 1 MAX_S 30
  REGEX "counts DIFFER"
  COMMAND shoal-driver wordcount --cores 2 --files ${wc_files} --corrupt)
