# shoal-wire (tools/cluster/wire.cpp), the emulated cluster's switch: bad
# arguments name the flag and exit 2 before any device is made. Its
# forwarding needs root and namespaces: `make test-cluster` with
# CLUSTER_DELAY_US > 0 on a kernel without netem (or CLUSTER_WIRE=1).
if(NOT TARGET shoal-wire)
  return()
endif()
shoal_app_test(wire_bad_delay EXPECT 2 MAX_S 10
  REGEX "shoal-wire: error: --delay-us: expected an integer in \\[0, 1000000\\], got '25x'"
  COMMAND shoal-wire --tap a --tap b --delay-us 25x)
shoal_app_test(wire_one_port EXPECT 2 MAX_S 10
  REGEX "shoal-wire: error: --tap: at least two ports"
  COMMAND shoal-wire --tap a)
shoal_app_test(wire_missing_value EXPECT 2 MAX_S 10
  REGEX "shoal-wire: error: --rate-bps: missing value"
  COMMAND shoal-wire --tap a --tap b --rate-bps)
