# `shoal chma --impl map` (apps/chma/map_container.cpp): the GMT hash-map
# tasks on shoal::set and shoal::array. Validated like every chma run (the
# same schedule on a std::unordered_set<std::string>: size, digest, lookups,
# inserts, and key by key for small maps) on 1 x 1, 1 x 2, 1 x 3, 2 x 1 and
# 2 x 2 processes x cores, the pool file, a map checked by digest; a task
# that inserts wrong strings must fail validation (exit 1).
if(NOT TARGET shoal-driver OR NOT "chma" IN_LIST SHOAL_BUILT_APPS)
  return()
endif()

set(chma_map_ok "\"cores\":CORES,\"impl\":\"map\",.*\"lookups\":25600,.*\"ranks\":RANKS,.*\"validated\":true,\"validation\":\"final map equal, key by key")
foreach(shape "1;1" "1;2" "1;3" "2;1" "2;2")
  list(GET shape 0 np)
  list(GET shape 1 cores)
  math(EXPR total "${np} * ${cores}")
  string(REPLACE "CORES" "${total}" re "${chma_map_ok}")
  string(REPLACE "RANKS" "${np}" re "${re}")
  shoal_app_test(chma_map_${np}x${cores} NP ${np} EXPECT zero MAX_S 30 REGEX "${re}"
    COMMAND shoal-driver chma --impl map --cores ${cores} --pool-size 8192 --tasks 128
            --length 200 --json)
endforeach()
shoal_app_test(chma_map_digest_2x1 NP 2 EXPECT zero MAX_S 30
  REGEX "\"impl\":\"map\",.*\"lookups\":400000,.*\"validated\":true,\"validation\":\"final map's size and digest"
  COMMAND shoal-driver chma --impl map --cores 1 --pool-size 100000 --tasks 400 --length 1000
          --json)
shoal_app_test(chma_map_pool_file_1x2 EXPECT zero MAX_S 30
  REGEX "\"impl\":\"map\",.*\"lookups\":2000,.*\"validated\":true"
  COMMAND shoal-driver chma --impl map --cores 2 --pool ${SHOAL_APP_TEST_DATA}/chma/pool.txt
          --tasks 20 --length 100 --json)
shoal_app_test(chma_map_fault_caught_1x2 EXPECT 1 MAX_S 30 REGEX "\"validated\":false"
  COMMAND shoal-driver chma --impl map --cores 2 --pool-size 8192 --tasks 128 --length 200
          --inject-fault 5 --json)
shoal_app_test(chma_map_fault_caught_2x2 NP 2 EXPECT 1 MAX_S 30 REGEX "\"validated\":false"
  COMMAND shoal-driver chma --impl map --cores 2 --pool-size 8192 --tasks 128 --length 200
          --inject-fault 100 --json)
