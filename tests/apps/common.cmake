# What the apps and baselines share (apps/common/plain/, apps/baselines/
# alltoallv_exchange.hpp), tested on its own: the memory check, and the one
# Alltoallv round of every baseline on 1, 2 and 3 ranks.
add_executable(memory_check_test ${CMAKE_CURRENT_SOURCE_DIR}/memory_check_test.cpp)
target_link_libraries(memory_check_test PRIVATE shoal_apps_plain GTest::gtest GTest::gtest_main)
shoal_apply_defaults(memory_check_test)
add_test(NAME app_common_memory_check COMMAND memory_check_test)
set_tests_properties(app_common_memory_check PROPERTIES LABELS apps TIMEOUT 60)

if(NOT SHOAL_HAVE_MPI OR NOT TARGET MPI::MPI_CXX)
  return()
endif()
add_executable(alltoallv_exchange_test ${CMAKE_CURRENT_SOURCE_DIR}/alltoallv_exchange_test.cpp)
target_link_libraries(alltoallv_exchange_test PRIVATE shoal_apps_plain MPI::MPI_CXX GTest::gtest)
shoal_apply_defaults(alltoallv_exchange_test)
foreach(np 1 2 3)
  shoal_app_test(baseline_alltoallv_exchange_np${np} NP ${np} EXPECT zero MAX_S 30
    REGEX "PASSED.*3 tests"
    COMMAND alltoallv_exchange_test)
endforeach()
