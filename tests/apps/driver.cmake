# The driver itself: its help, and command lines it must refuse.
set(bundled)
foreach(app IN LISTS SHOAL_ALL_APPS)  # the driver lists them in this order
  if(app IN_LIST SHOAL_BUILT_APPS)
    list(APPEND bundled ${app})
  endif()
endforeach()
list(JOIN bundled ".*" bundled)
shoal_app_test(driver_help_lists_the_apps EXPECT zero MAX_S 30
  REGEX "${bundled}.*suite"
  COMMAND shoal-driver --help)
shoal_app_test(driver_app_help_lists_impls EXPECT zero MAX_S 30
  REGEX "--impl.*--json"
  COMMAND shoal-driver gups --help)
shoal_app_test(driver_unknown_app_refused EXPECT 2 MAX_S 30
  REGEX "shoal: error: unknown app .nosuchapp. \\(known: [a-z ]*suite; see shoal --help\\)"
  COMMAND shoal-driver nosuchapp)
shoal_app_test(driver_unknown_impl_refused EXPECT 2 MAX_S 30
  REGEX "--impl: nosuchimpl not in"
  COMMAND shoal-driver gups --impl nosuchimpl)
shoal_app_test(driver_bad_runtime_flag_refused EXPECT 2 MAX_S 30
  REGEX "shoal: error: --cores: expected an integer"
  COMMAND shoal-driver uts --cores -3)
shoal_app_test(driver_no_app_refused EXPECT 2 MAX_S 30
  REGEX "shoal: error: no app named \\(usage: shoal <app> \\[flags\\]"
  COMMAND shoal-driver --cores 1)
shoal_app_test(driver_flag_before_app_refused EXPECT 2 MAX_S 30
  REGEX "shoal: error: unknown flag '--bogus' before the app's name"
  COMMAND shoal-driver --bogus gups)
if(SHOAL_HAVE_MPI)
  shoal_app_test(driver_flag_before_app_refused_2x2 NP 2 EXPECT 2 MAX_S 30
    REGEX "shoal: error: unknown flag '--bogus' before the app's name"
    COMMAND shoal-driver --cores 2 --bogus gups)
endif()
