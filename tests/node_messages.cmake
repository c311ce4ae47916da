# Messages between processes of one node (--node-messages, mpi_transport.cpp
# and node_mailbox.hpp). Every other multi-process test runs on one node with
# the default, shm; here: the distributed programs again over MPI (so that
# path stays covered), and with 4 slots a rank (SHOAL_NODE_SLOTS), so that
# messages wait for a slot all the time; --verbose names the path; a rank
# that cannot map the segments makes the node fall back to MPI, named; bad
# values of the knobs on one rank, and ranks that disagree, end the job
# naming them. Included from tests/CMakeLists.txt where MPI was found.
foreach(source IN LISTS SHOAL_DIST_SOURCES)
  get_filename_component(name ${source} NAME_WE)
  shoal_mpi_test(${name}_np3_cores2_node_mpi EXPECT zero MAX_S 120 REGEX "PASSED"
    COMMAND ${CMAKE_COMMAND} -E env SHOAL_NODE_MESSAGES=mpi
            ${SHOAL_MPIEXEC} -np 3 $<TARGET_FILE:${name}> --cores 2)
  shoal_mpi_test(${name}_np3_cores2_node_4_slots EXPECT zero MAX_S 120 REGEX "PASSED"
    COMMAND ${CMAKE_COMMAND} -E env SHOAL_NODE_SLOTS=4
            ${SHOAL_MPIEXEC} -np 3 $<TARGET_FILE:${name}> --cores 2)
endforeach()
# The 2 x 1 flood (a sender that computes while its peer's batches pile up)
# with 4 slots: two for the buffers being filled, two for copies.
shoal_mpi_test(dist_phases_flood_np2_cores1_node_4_slots EXPECT zero MAX_S 60 REGEX "PASSED"
  COMMAND ${CMAKE_COMMAND} -E env SHOAL_NODE_SLOTS=4
          ${SHOAL_MPIEXEC} -np 2 $<TARGET_FILE:dist_phases> --cores 1
          --gtest_filter=*FloodFromComputingCores*)
# The transport's buffers (MPI receives, node slots) are made at the first
# init of a process: a later init/finalize cycle may use smaller network
# buffers, and one with larger ones ends the job naming both sizes.
shoal_mpi_test(node_messages_later_cycle_smaller_network_bytes EXPECT zero MAX_S 60
  REGEX "one_sided am: 12 checks, 0 wrong values: PASSED"
  COMMAND ${SHOAL_MPIEXEC} -np 2 ${one_sided_job} --cores 2 --cycles 3
          --later-network-bytes 32768)
shoal_mpi_test(node_messages_later_cycle_larger_network_bytes_refused EXPECT nonzero MAX_S 60
  REGEX "--network-bytes 131072 is above 65536, the first run's in this process"
  COMMAND ${SHOAL_MPIEXEC} -np 2 ${one_sided_job} --cores 2 --cycles 2
          --later-network-bytes 131072)
if(NOT TARGET shoal-driver)
  return()
endif()
# The driver parses the flags; histogram validates every counter.
set(app $<TARGET_FILE:shoal-driver> histogram --requests-per-core 100000)
set(valid "validation +PASSED")
shoal_mpi_test(node_messages_shm_named_by_verbose EXPECT zero MAX_S 60 ONE_NODE
  REGEX "${valid}.*messages within the node: shm \\(3 ranks on this node, 16 slots of 65536 bytes each\\)"
  COMMAND ${SHOAL_MPIEXEC} -np 3 ${app} --cores 2 --verbose)
shoal_mpi_test(node_messages_mpi_named_by_verbose EXPECT zero MAX_S 60
  REGEX "${valid}.*messages within the node: mpi[^ (]"
  COMMAND ${SHOAL_MPIEXEC} -np 2 ${app} --cores 2 --verbose --node-messages mpi)
shoal_mpi_test(node_messages_slots_knob_named_by_verbose EXPECT zero MAX_S 60 ONE_NODE
  REGEX "${valid}.*messages within the node: shm \\(2 ranks on this node, 5 slots of 4096 bytes each\\)"
  COMMAND ${CMAKE_COMMAND} -E env SHOAL_NODE_SLOTS=5
          ${SHOAL_MPIEXEC} -np 2 ${app} --cores 2 --verbose --network-bytes 4096
          --aggregation-bytes 1024)
# Rank 1 alone fails to map (simulated): the node uses MPI, rank 0 names the
# rank and the cause, the counts validate (stdout, then stderr).
shoal_mpi_test(node_messages_fall_back_when_rank1_cannot_map EXPECT zero MAX_S 60 ONE_NODE
  REGEX "${valid}.*messages within the node: mpi \\(rank 1: SHOAL_NODE_MESSAGES_FAIL=1, a simulated failure to map it\\)"
  COMMAND ${SHOAL_MPIEXEC} -np 1 ${app} --cores 2 --verbose
          : -np 1 ${CMAKE_COMMAND} -E env SHOAL_NODE_MESSAGES_FAIL=1 ${app} --cores 2 --verbose)
# A real failure, not a simulated one: 4096 slots of 64 MiB (256 GiB) a rank
# is more than any /dev/shm holds, so posix_fallocate fails at once (tmpfs
# refuses a reservation larger than itself before allocating any of it) and
# the node falls back to MPI, naming the size and the system's reason.
shoal_mpi_test(node_messages_dev_shm_too_small_falls_back EXPECT zero MAX_S 60 ONE_NODE
  REGEX "${valid}.*messages within the node: mpi \\(rank [01]: /dev/shm has no room for 274878042112 bytes: "
  COMMAND ${CMAKE_COMMAND} -E env SHOAL_NODE_SLOTS=4096
          ${SHOAL_MPIEXEC} -np 2 ${app} --cores 2 --verbose --network-bytes 67108864)
shoal_mpi_test(node_messages_bad_fail_knob_on_rank1 EXPECT nonzero MAX_S 30
  REGEX "SHOAL_NODE_MESSAGES_FAIL on rank 1: expected 0 or 1, got 'yes'"
  COMMAND ${SHOAL_MPIEXEC} -np 1 ${app} --cores 1
          : -np 1 ${CMAKE_COMMAND} -E env SHOAL_NODE_MESSAGES_FAIL=yes ${app} --cores 1)
shoal_mpi_test(node_messages_empty_fail_knob_on_rank1 EXPECT nonzero MAX_S 30
  REGEX "SHOAL_NODE_MESSAGES_FAIL on rank 1: expected 0 or 1, got ''"
  COMMAND ${SHOAL_MPIEXEC} -np 1 ${app} --cores 1
          : -np 1 ${CMAKE_COMMAND} -E env SHOAL_NODE_MESSAGES_FAIL= ${app} --cores 1)
shoal_mpi_test(node_messages_empty_slots_knob_on_rank1 EXPECT nonzero MAX_S 30
  REGEX "SHOAL_NODE_SLOTS on rank 1: expected a whole number in \\[4, 4096\\], got ''"
  COMMAND ${SHOAL_MPIEXEC} -np 1 ${app} --cores 1
          : -np 1 ${CMAKE_COMMAND} -E env SHOAL_NODE_SLOTS= ${app} --cores 1)
# 3 and 4097 just outside, an endless number that overflows a long, words.
foreach(bad 3 4097 lots 5x 99999999999999999999999999)
  shoal_mpi_test(node_messages_bad_slots_knob_${bad}_on_rank1 EXPECT nonzero MAX_S 30
    REGEX "SHOAL_NODE_SLOTS on rank 1: expected a whole number in \\[4, 4096\\], got '${bad}'"
    COMMAND ${SHOAL_MPIEXEC} -np 1 ${app} --cores 1
            : -np 1 ${CMAKE_COMMAND} -E env SHOAL_NODE_SLOTS=${bad} ${app} --cores 1)
endforeach()
shoal_mpi_test(node_messages_ranks_disagree EXPECT nonzero MAX_S 30
  REGEX "ranks disagree on --node-messages: rank 1 has mpi, rank 0 has shm"
  COMMAND ${SHOAL_MPIEXEC} -np 1 ${app} --cores 2
          : -np 1 ${app} --cores 2 --node-messages mpi)
shoal_mpi_test(node_messages_unknown_word_named EXPECT nonzero MAX_S 30
  REGEX "--node-messages.*expected one of shm, mpi, got 'fast'"
  COMMAND ${SHOAL_MPIEXEC} -np 2 ${app} --cores 2 --node-messages fast)
