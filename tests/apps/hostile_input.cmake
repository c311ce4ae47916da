# Hostile command lines the driver refuses for every app (issue 16): an empty
# value (CLI11 alone takes it as "keep the default"), a value of binary bytes
# (escaped in the message, not sent raw to the terminal), and results that
# cannot be written (status 3 with a message, not 0 with the output lost).
if(NOT TARGET shoal-driver)
  return()
endif()

foreach(app_flag "pointerchase;--hold-us" "uts;--seed" "gups;--log-table")
  list(GET app_flag 0 app)
  list(GET app_flag 1 flag)
  shoal_app_test(driver_empty_value_${app} EXPECT 2 MAX_S 10
    REGEX "shoal ${app}: error: ${flag}: empty value"
    COMMAND sh -c "exec \"$0\" ${app} --cores 1 ${flag} ''" $<TARGET_FILE:shoal-driver>)
endforeach()
shoal_app_test(driver_binary_value_escaped EXPECT 2 MAX_S 10
  REGEX "shoal intsort: error: --class: \\\\x01\\\\x1bX not in"
  COMMAND sh -c "exec \"$0\" intsort --cores 1 --class \"$(printf '\\001\\033X')\"" $<TARGET_FILE:shoal-driver>)
shoal_app_test(driver_summary_stdout_full EXPECT 3 MAX_S 10
  REGEX "shoal: error: cannot write the gups report to standard output: No space left on device"
  COMMAND sh -c "exec \"$0\" gups --cores 1 --log-table 10 > /dev/full" $<TARGET_FILE:shoal-driver>)

# A flag the rest of the command line leaves unused is refused (status 2,
# naming it), not ignored as if it had taken effect; on one process and at
# 2 processes x 2 cores.
function(unused_flag_test name app regex)
  if(NOT app IN_LIST SHOAL_BUILT_APPS)
    return()
  endif()
  shoal_app_test(driver_unused_${name} EXPECT 2 MAX_S 10
    REGEX "shoal ${app}: error: ${regex}" COMMAND shoal-driver ${app} --cores 2 ${ARGN})
  shoal_app_test(driver_unused_${name}_2x2 NP 2 EXPECT 2 MAX_S 20
    REGEX "shoal ${app}: error: ${regex}" COMMAND shoal-driver ${app} --cores 2 ${ARGN})
endfunction()
set(small_graph ${SHOAL_APP_TEST_DATA}/bfs/small.txt)
set(one_text ${SHOAL_APP_TEST_DATA}/wordcount/one.txt)
unused_flag_test(bfs_roots_with_root bfs "--roots excludes --root"
  --graph ${small_graph} --root 1 --roots 5)
unused_flag_test(bfs_cache_slots bfs "--cache-slots: applies to --reduce min only"
  --scale 6 --cache-slots 5)
unused_flag_test(gups_cache_slots gups "--cache-slots: applies to --reduce xor only"
  --log-table 8 --cache-slots 5)
unused_flag_test(pagerank_cache_slots pagerank
  "--cache-slots: applies to --reduce sum or combine \\(--impl channel\\) and --impl combining only"
  --scale 6 --cache-slots 5)
unused_flag_test(cc_seed_with_graph cc "--seed excludes --graph" --graph ${small_graph} --seed 5)
unused_flag_test(pointerchase_cache_slots pointerchase
  "--cache-slots: applies to --reduce dedup or min only" --chasers 4 --cache-slots 5)
unused_flag_test(permutation_cache_slots permutation
  "--cache-slots: applies to --reduce dedup only" --elements 100 --cache-slots 5)
unused_flag_test(permutation_termination_sequential permutation
  "--termination depth: applies to --impl channel only, not --impl sequential"
  --elements 100 --impl sequential --termination depth)
unused_flag_test(permutation_channels_sequential permutation
  "--channels typed: applies to --impl channel only, not --impl sequential"
  --elements 100 --impl sequential --channels typed)
unused_flag_test(wordcount_vocabulary_with_files wordcount
  "--vocabulary: applies to generated Zipf text only, not --files"
  --files ${one_text} --vocabulary 5)
unused_flag_test(wordcount_seed_with_files wordcount
  "--seed: applies to generated Zipf text only, not --files" --files ${one_text} --seed 5)
