# The driver's --output FILE (issue 16): rank 0 writes the results to a file
# and checks every write, because under mpirun a rank's standard output is a
# pipe to the launcher and `--json > /dev/full` cannot fail in the rank
# (apps/common/plain/report_output.hpp). Each at 1 process and at 2 x 2.
if(NOT TARGET shoal-driver)
  return()
endif()
set(exe $<TARGET_FILE:shoal-driver>)
set(gups_args gups --log-table 10 --json)
set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/report_output)
file(MAKE_DIRECTORY ${out_dir})

foreach(shape "1;1" "2;2")
  list(GET shape 0 np)
  list(GET shape 1 cores)
  set(launch)
  if(np GREATER 1)
    if(NOT SHOAL_HAVE_MPI)
      continue()
    endif()
    set(launch ${SHOAL_MPIEXEC} -np ${np})
  endif()
  set(suffix ${np}x${cores})
  # The results land in the file, whole (the command then prints it).
  set(file ${out_dir}/gups_${suffix}.json)
  shoal_app_test(driver_output_file_${suffix} EXPECT zero MAX_S 30
    REGEX "^\\{\"app\":\"gups\".*\"ranks\":${np},.*\"validated\":true"
    COMMAND sh -c "rm -f \"$0\" && \"$@\" >/dev/null && cat \"$0\"" ${file}
            ${launch} ${exe} ${gups_args} --cores ${cores} --output ${file})
  # A write error ends the run with status 3 and a message naming the file.
  shoal_app_test(driver_output_full_${suffix} EXPECT 3 MAX_S 30
    REGEX "shoal: error: cannot write the gups report to '/dev/full': No space left on device"
    COMMAND ${launch} ${exe} ${gups_args} --cores ${cores} --output /dev/full)
  # A file that cannot be opened is refused before the run (status 2).
  shoal_app_test(driver_output_bad_path_${suffix} EXPECT 2 MAX_S 20
    REGEX "shoal gups: error: --output: cannot open '${out_dir}/no/such/dir' for writing: No such file or directory"
    COMMAND ${launch} ${exe} ${gups_args} --cores ${cores} --output ${out_dir}/no/such/dir)
  # --output naming an input file (here by another spelling) is refused
  # before it is opened: opening it emptied the graph, then blamed the graph
  # for being empty. The copy must keep its bytes (an emptied copy, or a run
  # that succeeds, fails this; the message pins the cause; no '|' in the
  # script: run_expect.cmake splits commands there).
  set(graph ${out_dir}/graph_${suffix}.txt)
  shoal_app_test(driver_output_is_input_${suffix} EXPECT 2 MAX_S 20
    REGEX "shoal bfs: error: --output [^ ]*/report_output/\\./graph_${suffix}.txt: is the --graph input file.* the results would overwrite it"
    COMMAND sh -c "cp \"$0\" \"$1\" && g=\"$1\" && shift && ! \"$@\" && test -s \"$g\" && exit 2"
            ${SHOAL_APP_TEST_DATA}/bfs/small.txt ${graph} ${launch} ${exe} bfs --cores ${cores}
            --graph ${graph} --output ${out_dir}/./graph_${suffix}.txt)
endforeach()
shoal_app_test(driver_output_empty EXPECT 2 MAX_S 10
  REGEX "shoal gups: error: --output: empty value"
  COMMAND sh -c "exec \"$0\" gups --log-table 10 --cores 1 --output ''" ${exe})
shoal_app_test(driver_suite_output_bad_path EXPECT 2 MAX_S 10
  REGEX "shoal suite: error: --output: cannot open '${out_dir}/no/such/dir' for writing"
  COMMAND ${exe} suite --cores 1 --output ${out_dir}/no/such/dir)
# A different --output on one rank only: refused like any other argument.
if(SHOAL_HAVE_MPI)
  shoal_app_test(driver_output_rank1_differs EXPECT 2 MAX_S 20
    REGEX "rank 1's arguments: 'gups --log-table 10 --json --output /dev/full'"
    COMMAND ${SHOAL_MPIEXEC} -np 1 ${exe} ${gups_args} --cores 1 --output ${out_dir}/rank0.json
            : -np 1 ${exe} ${gups_args} --cores 1 --output /dev/full)
endif()
