# The example programs (examples/): each checks itself against a sequential
# answer. Run at 1 process x 2 cores (no launcher) and at 2 processes x 2 cores,
# plus a refused bad flag. Included from tests/CMakeLists.txt (shoal_mpi_test).
set(SHOAL_EXAMPLE_CHECKS
  "task-tree|task_tree: .*: PASSED|--depth|0"
  "connected-components|connected_components: .*: PASSED|--vertices|-3"
  "word-count|word_count: .*: PASSED|--words-per-core|lots"
  "pipeline|pipeline: .*: PASSED|--items|2x")
foreach(check IN LISTS SHOAL_EXAMPLE_CHECKS)
  string(REPLACE "|" ";" parts "${check}")
  list(GET parts 0 name)
  list(GET parts 1 regex)
  list(GET parts 2 flag)
  list(GET parts 3 bad)
  set(exe $<TARGET_FILE:example-${name}>)
  shoal_mpi_test(example_${name}_np1 EXPECT zero MAX_S 100 REGEX "${regex}"
    COMMAND ${exe} --cores 2)
  shoal_mpi_test(example_${name}_np2 EXPECT zero MAX_S 100 REGEX "${regex}"
    COMMAND ${SHOAL_MPIEXEC} -np 2 ${exe} --cores 2)
  shoal_mpi_test(example_${name}_bad_flag EXPECT nonzero MAX_S 30
    REGEX "${flag}: expected an integer"
    COMMAND ${exe} --cores 1 ${flag} ${bad})
endforeach()
