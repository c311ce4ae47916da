# shoal uts: every implementation on 1 process x 2 cores and 2 processes x 1 core.
# - T1 and T3 must give the counts published with the UTS sample workloads
#   (nodes, leaves and depth, matched in the JSON, plus the app's own verdict);
# - the UTS reference's default tree (geometric linear, gen_mx 6, b0 4, seed 0)
#   must give its published 1732 nodes and 1050 leaves;
# - a small tree of every type and shape is checked by the app against an
#   untimed sequential search (the node counts in the regexes pin the trees'
#   sizes, so that a degenerate tree cannot pass);
# - bad input is refused with a message naming the flag, on every rank.
# T1 and T3 (about 4 million nodes each) take 0.2-1 s per run here.

set(uts_ok "\"validated\":true")
set(uts_t1 "\"depth\":10,.*\"leaves\":3305118,\"nodes\":4130071,.*\"tree\":\"T1\",${uts_ok}")
set(uts_t3 "\"depth\":1572,.*\"leaves\":3599034,\"nodes\":4112897,.*\"tree\":\"T3\",${uts_ok}")

foreach(impl implicit in-memory sequential)
  foreach(tree t1 t3)
    string(TOUPPER ${tree} name)
    shoal_app_test(uts_${tree}_${impl}_np1 EXPECT zero MAX_S 60 REGEX "${uts_${tree}}"
      COMMAND shoal-driver uts --tree ${name} --impl ${impl} --cores 2 --json)
    shoal_app_test(uts_${tree}_${impl}_np2 NP 2 EXPECT zero MAX_S 60 REGEX "${uts_${tree}}"
      COMMAND shoal-driver uts --tree ${name} --impl ${impl} --cores 1 --json)
  endforeach()
endforeach()

# The default parameters of the UTS reference code and their published counts.
shoal_app_test(uts_default_tree_np1 EXPECT zero MAX_S 30
  REGEX "\"depth\":6,.*\"leaves\":1050,\"nodes\":1732,.*${uts_ok}"
  COMMAND shoal-driver uts --seed 0 --cores 2 --json)
shoal_app_test(uts_default_tree_np2 NP 2 EXPECT zero MAX_S 30
  REGEX "\"depth\":6,.*\"leaves\":1050,\"nodes\":1732,.*${uts_ok}"
  COMMAND shoal-driver uts --seed 0 --cores 1 --json)

# Small trees of every type and shape: name, expected node count, parameters.
set(uts_small_trees
  "binomial|41053|--type|binomial|--b0|1000|--q|0.24|--m|4|--seed|3"
  "linear|23735|--type|geometric|--shape|linear|--gen-mx|12|--b0|4|--seed|1"
  "expdec|24171|--type|geometric|--shape|expdec|--gen-mx|8|--b0|5|--seed|7"
  "cyclic|2605|--type|geometric|--shape|cyclic|--gen-mx|6|--b0|5|--seed|9"
  "fixed|111508|--type|geometric|--shape|fixed|--gen-mx|8|--b0|4|--seed|1"
  "hybrid|9878|--type|hybrid|--shape|linear|--gen-mx|12|--b0|4|--q|0.22|--m|4|--seed|1")
foreach(entry IN LISTS uts_small_trees)
  string(REPLACE "|" ";" fields "${entry}")
  list(POP_FRONT fields tree nodes)
  set(re "\"nodes\":${nodes},.*\"tree\":\"custom\",${uts_ok}")
  foreach(impl implicit in-memory sequential)
    shoal_app_test(uts_small_${tree}_${impl}_np1 EXPECT zero MAX_S 30 REGEX "${re}"
      COMMAND shoal-driver uts ${fields} --impl ${impl} --cores 2 --json)
    shoal_app_test(uts_small_${tree}_${impl}_np2 NP 2 EXPECT zero MAX_S 30 REGEX "${re}"
      COMMAND shoal-driver uts ${fields} --impl ${impl} --cores 1 --json)
  endforeach()
endforeach()

# Bad input: a clear message naming the flag, exit status 2, on every rank.
set(uts_bad_inputs
  "unknown_tree|--tree T9: unknown tree \\(known trees: T1, T2, T3|--tree|T9"
  "tree_and_params|--tree T1 and --b0: give a named tree or tree parameters, not both|--tree|T1|--b0|3"
  "unknown_type|--type tall: unknown tree type|--type|tall"
  "unknown_shape|--shape round: unknown shape|--shape|round"
  "q_out_of_range|--q 1.5: must be in \\[0, 1\\]|--type|binomial|--q|1.5"
  "infinite_binomial|--q 0.5 with --m 2: .*expected tree is infinite: q \\* m must be below 1|--type|binomial|--q|0.5|--m|2"
  "gen_mx_zero|--gen-mx 0: must be at least 1|--gen-mx|0"
  "expdec_gen_mx_one|--gen-mx 1: the expdec shape divides by ln\\(gen_mx\\)|--shape|expdec|--gen-mx|1"
  "negative_b0|--b0 -2: must be a finite number at least 0|--b0|-2"
  "seed_too_large|--seed 4294967296: must be in \\[0, 4294967295\\]|--seed|4294967296")
foreach(entry IN LISTS uts_bad_inputs)
  string(REPLACE "|" ";" fields "${entry}")
  list(POP_FRONT fields what message)
  shoal_app_test(uts_bad_${what} EXPECT 2 MAX_S 30 REGEX "shoal uts: error: ${message}"
    COMMAND shoal-driver uts ${fields})
endforeach()
shoal_app_test(uts_bad_unknown_tree_np2 NP 2 EXPECT 2 MAX_S 30
  REGEX "shoal uts: error: --tree T9: unknown tree"
  COMMAND shoal-driver uts --tree T9 --cores 1)
shoal_app_test(uts_bad_number EXPECT 2 MAX_S 30 REGEX "--b0"
  COMMAND shoal-driver uts --b0 many)
# A tree too large for the global heap is bad input (status 2, as for bfs),
# found once the nodes are counted and before the build (it was the runtime's
# "global heap exhausted", status 3, from inside the build).
set(heap_regex "shoal uts: error: --impl in-memory: a tree of [0-9]+ nodes needs about [0-9.]+ MiB of global heap per process \\(16 bytes a node\\), more than --heap-mb 16 \\(16 MiB\\).*raise --heap-mb or use more processes")
shoal_app_test(uts_in_memory_heap_too_small EXPECT 2 MAX_S 30 REGEX "${heap_regex}"
  COMMAND shoal-driver uts --tree T3 --impl in-memory --heap-mb 16 --cores 2)
shoal_app_test(uts_in_memory_heap_too_small_2x2 NP 2 EXPECT 2 MAX_S 30 REGEX "${heap_regex}"
  COMMAND shoal-driver uts --tree T3 --impl in-memory --heap-mb 16 --cores 2)
# Trees whose expected size is far past any run are refused at once (issue 16):
# they ran until killed. The bound is 1e10 expected nodes.
shoal_app_test(uts_geometric_fixed_too_large EXPECT 2 MAX_S 10
  REGEX "shoal uts: error: --b0 4 with --gen-mx 40 \\(geometric \\(fixed\\).*\\): the expected tree has about 1\\.6[0-9]*e\\+24 nodes, more than the 1e\\+10"
  COMMAND shoal-driver uts --cores 1 --type geometric --shape fixed --gen-mx 40 --b0 4)
shoal_app_test(uts_geometric_b0_too_large EXPECT 2 MAX_S 10
  REGEX "shoal uts: error: --b0 1000000000 with --gen-mx 6 .*: the expected tree has about [0-9.]+e\\+[0-9]+ nodes"
  COMMAND shoal-driver uts --cores 1 --b0 1e9)
shoal_app_test(uts_binomial_too_large EXPECT 2 MAX_S 10
  REGEX "shoal uts: error: --b0 1000000000 with --q 0\\.24 and --m 4 .*: the expected tree has about 2\\.5e\\+10 nodes"
  COMMAND shoal-driver uts --cores 1 --type binomial --b0 1e9 --q 0.24 --m 4)
# A tree just under the bound's neighbourhood still runs: T1 as custom flags.
shoal_app_test(uts_geometric_fixed_custom_runs EXPECT zero MAX_S 30
  REGEX "\"nodes\":4130071.*\"validated\":true"
  COMMAND shoal-driver uts --cores 1 --impl sequential --type geometric --shape fixed --gen-mx 10 --b0 4 --seed 19 --json)
# A flag the tree type does not use is refused, not ignored.
shoal_app_test(uts_flag_not_for_type EXPECT 2 MAX_S 10
  REGEX "shoal uts: error: --q: does not apply to a geometric tree \\(--type geometric\\)"
  COMMAND shoal-driver uts --cores 1 --q -1)
shoal_app_test(uts_shape_not_for_binomial EXPECT 2 MAX_S 10
  REGEX "shoal uts: error: --shape: does not apply to a binomial tree"
  COMMAND shoal-driver uts --cores 1 --type binomial --shape fixed --q 0.2 --m 4)
