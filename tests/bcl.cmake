# BCL's data structures (include/shoal/bcl/) under mpirun, every one-sided
# backend forced, at 1 x 2, 2 x 1, 2 x 2 and 3 x 2 processes x cores; misuse ends
# the job with a clear message. Included from tests/CMakeLists.txt where MPI
# was found.
shoal_mpi_program(bcl_job mpi/bcl_job.cpp)
shoal_one_sided_tests(bcl bcl_job MAX_S 120 CHECKS 26 SHAPES 1:2 2:1 2:2 3:2)
shoal_mpi_test(bcl_hash_map_local_insert_on_another_rank EXPECT nonzero MAX_S 60
  REGEX "insert with promise local of a key whose home core [23] is on rank 1, called on rank 0"
  COMMAND ${SHOAL_MPIEXEC} -np 2 ${bcl_job} --cores 2 --misuse local-remote)
shoal_mpi_test(bcl_circular_queue_local_pop_on_another_rank EXPECT nonzero MAX_S 60
  REGEX "circular_queue\\(host core 3, capacity 8\\): local_nonatomic_pop called on rank 0, but the queue lives on rank 1"
  COMMAND ${SHOAL_MPIEXEC} -np 2 ${bcl_job} --cores 2 --misuse local-pop-remote)
shoal_mpi_test(bcl_fast_queue_local_touch_on_another_rank EXPECT nonzero MAX_S 60
  REGEX "fast_queue\\(host core 3, capacity 8\\): local_nonatomic_touch called on rank 0, but the queue lives on rank 1"
  COMMAND ${SHOAL_MPIEXEC} -np 2 ${bcl_job} --cores 2 --misuse touch-remote)
# One-sided or delegate (bcl/path.hpp): every check forced each way at 1 x 2
# (shm) and 2 x 2 (shm, rma, am), the tables' path named by --verbose (the
# runs above take what auto picks, which depends on measured costs: these
# keep both paths tested on every backend), and a bad SHOAL_BCL_PATH on one
# rank only ends the job, status 2, naming the variable.
# The queues (fast, circular, checksum: short runs in one delegate, long
# ones reserved by a delegate) likewise, also at 2 x 1 and 3 x 2.
foreach(run "1;2;shm" "2;1;shm" "2;2;shm" "2;2;rma" "2;2;am" "3;2;rma")
  list(GET run 0 np)
  list(GET run 1 cores)
  list(GET run 2 backend)
  foreach(way onesided delegate)
    shoal_mpi_test(bcl_path_${way}_${backend}_np${np}_cores${cores} EXPECT zero MAX_S 120
      REGEX "bcl ${backend}: 26 checks, 0 wrong values: PASSED.*path ${way}, find_only path ${way}.*insert path ${way}, find path ${way}.*bcl circular_queue\\([^)]*\\) made on core 0: path ${way}.*bcl checksum_queue\\([^)]*\\) made on core 0: path ${way}.*bcl fast_queue\\([^)]*\\) made on core 0: path ${way}"
      COMMAND ${CMAKE_COMMAND} -E env SHOAL_BCL_PATH=${way}
              ${SHOAL_MPIEXEC} -np ${np} ${bcl_job} --cores ${cores} --one-sided ${backend}
              --transport mpi --verbose)
  endforeach()
endforeach()
shoal_mpi_test(bcl_path_bad_word_on_one_rank EXPECT 2 MAX_S 60
  REGEX "SHOAL_BCL_PATH: expected one of onesided, delegate, auto, got 'sideways'"
  COMMAND ${SHOAL_MPIEXEC} -np 2 sh ${CMAKE_CURRENT_SOURCE_DIR}/mpi/bcl_job_one_rank_env.sh 1
          SHOAL_BCL_PATH sideways ${bcl_job} --cores 2 --transport mpi)
shoal_mpi_test(bcl_path_differs_between_ranks EXPECT 2 MAX_S 60
  REGEX "SHOAL_BCL_PATH differs between processes: delegate on rank 1, auto where the container was made"
  COMMAND ${SHOAL_MPIEXEC} -np 2 sh ${CMAKE_CURRENT_SOURCE_DIR}/mpi/bcl_job_one_rank_env.sh 1
          SHOAL_BCL_PATH delegate ${bcl_job} --cores 2 --transport mpi)
# The calibration file make bench-bcl writes (bench/bcl_costs.py) is what
# auto reads: every check passes with the table's choice from its figures.
shoal_mpi_test(bcl_path_auto_from_calibration_file EXPECT zero MAX_S 120 ONE_NODE
  REGEX "bcl shm: 26 checks, 0 wrong values: PASSED.*auto, costs [^ ]*bench/results/bcl_calibration.txt: insert\\+find one-sided"
  COMMAND ${CMAKE_COMMAND} -E env SHOAL_BCL_CALIBRATION=${PROJECT_SOURCE_DIR}/bench/results/bcl_calibration.txt
          ${SHOAL_MPIEXEC} -np 2 ${bcl_job} --cores 2 --one-sided shm --transport mpi --verbose)
# fast_queue's choice under auto (a push, A + W, against D) from a
# calibration file that makes each side win, at 2 x 2 (one process:
# test_bcl_path.cpp); the one-sided file's figures are the rma row of
# bench/results/bcl_costs.md, under which the older push + pop comparison
# picked delegate.
foreach(way onesided delegate)
  if(way STREQUAL "onesided")
    set(figures "A\\+W = 1963 ns, delegate D = 2258 ns")
  else()
    set(figures "A\\+W = 3168 ns, delegate D = 2258 ns")
  endif()
  shoal_mpi_test(bcl_path_fast_queue_calibrated_${way}_np2 EXPECT zero MAX_S 120 ONE_NODE
    REGEX "bcl shm: 26 checks, 0 wrong values: PASSED.*bcl fast_queue\\(host core 0, capacity [0-9]+\\) made on core 0: path ${way} \\(auto, costs [^ ]*bcl_costs_fast_queue_${way}.txt: push one-sided ${figures}\\)"
    COMMAND ${CMAKE_COMMAND} -E env
            SHOAL_BCL_CALIBRATION=${CMAKE_CURRENT_SOURCE_DIR}/mpi/bcl_costs_fast_queue_${way}.txt
            ${SHOAL_MPIEXEC} -np 2 ${bcl_job} --cores 2 --one-sided shm --transport mpi --verbose)
endforeach()
# Neither variable set: auto measures the costs at the first make and says so.
shoal_mpi_test(bcl_path_auto_measured_shm_np2_cores2 EXPECT zero MAX_S 120
  REGEX "bcl shm: 26 checks, 0 wrong values: PASSED.*auto, costs measured at start-up: insert\\+find one-sided 4A\\+W\\+R\\+F = [0-9]+ ns, delegate 2D = [0-9]+ ns.*bcl circular_queue\\(host core 3, capacity 8\\) made on core 0: path (onesided|delegate) \\(auto, costs measured at start-up: push\\+pop one-sided 4A\\+W\\+R\\+F = [0-9]+ ns, delegate 2D = [0-9]+ ns\\)"
  COMMAND ${SHOAL_MPIEXEC} -np 2 ${bcl_job} --cores 2 --one-sided shm --transport mpi --verbose)
# Serialised values (bcl/object.hpp, mpi/bcl_object_job.cpp): strings,
# vectors and a user type through serial pointers, at 2 x 2 and 3 x 2 under
# every multi-process backend, each path forced at 2 x 2 under rma and am
# and at 2 x 1 under shm (the default runs take what auto picks; the queues
# are circular_queue and checksum_queue of strings, fast_queue of vectors);
# a full arena on the last rank only ends the job, status 2, naming the
# table and the option.
shoal_mpi_program(bcl_object_job mpi/bcl_object_job.cpp)
shoal_one_sided_tests(bcl_object bcl_object_job MAX_S 60 CHECKS 9 SHAPES 2:2 3:2)
foreach(run "2;1;shm" "2;2;rma" "2;2;am")
  list(GET run 0 np)
  list(GET run 1 cores)
  list(GET run 2 backend)
  foreach(way onesided delegate)
    shoal_mpi_test(bcl_object_path_${way}_${backend}_np${np}_cores${cores} EXPECT zero MAX_S 60
      REGEX "bcl_object ${backend}: 9 checks, 0 wrong values: PASSED"
      COMMAND ${CMAKE_COMMAND} -E env SHOAL_BCL_PATH=${way}
              ${SHOAL_MPIEXEC} -np ${np} ${bcl_object_job} --cores ${cores} --one-sided ${backend}
              --transport mpi)
  endforeach()
endforeach()
shoal_mpi_test(bcl_object_arena_full_on_one_rank EXPECT 2 MAX_S 60
  REGEX "hash_map<8-byte key, serialised value>\\(64 buckets per core\\): a value of 104 serialised bytes does not fit core 3's arena .*raise arena_bytes_per_core of make\\(\\)"
  COMMAND ${SHOAL_MPIEXEC} -np 2 ${bcl_object_job} --cores 2 --transport mpi --one-sided rma
          --misuse arena-full)
