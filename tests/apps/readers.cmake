# The input readers (graph files, string pools) and the memory check on
# buffers, without the runtime: tests/apps/readers_test.cpp.
add_executable(readers_test ${CMAKE_CURRENT_SOURCE_DIR}/readers_test.cpp)
target_link_libraries(readers_test PRIVATE shoal_apps_plain GTest::gtest GTest::gtest_main)
if("chma" IN_LIST SHOAL_BUILT_APPS)
  target_compile_definitions(readers_test PRIVATE SHOAL_READERS_TEST_CHMA=1)
endif()
shoal_apply_defaults(readers_test)
add_test(NAME app_common_readers COMMAND readers_test)
set_tests_properties(app_common_readers PROPERTIES LABELS apps TIMEOUT 60)
