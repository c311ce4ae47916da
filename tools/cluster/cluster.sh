#!/usr/bin/env bash
# A cluster of emulated hosts on one machine (issue 16): one network namespace
# per host, each joined by a veth pair to a bridge in a "switch" namespace,
# each host's link shaped by tc (netem delay where the kernel has it, a tbf
# rate limit), and OpenMPI over TCP between them. Needs root (ip netns).
# With a delay (CLUSTER_DELAY_US > 0) on a kernel without netem, the hosts
# are joined instead through shoal-wire (wire.cpp): a user-space switch with
# one TAP device per host (its eth0) that delays and rate limits every frame.
#
#   cluster.sh up        create the hosts (removes a previous cluster first)
#   cluster.sh down      remove them; idempotent, never fails on what is absent
#   cluster.sh status    the namespaces, addresses and qdiscs
#   cluster.sh env       the OMPI_MCA_* settings that make mpirun use the cluster
#   cluster.sh run CMD   CMD inside the first host with those settings: its
#                        mpirun starts ranks on every host through rsh-agent.sh
#   cluster.sh link-down HOST   take HOST's link down (fault injection)
#
# Variables: CLUSTER_PREFIX (shoal), CLUSTER_HOSTS (3), CLUSTER_SUBNET
# (10.77.0), CLUSTER_DELAY_US (0: no delay, veth and tbf), CLUSTER_RATE
# (1gbit), CLUSTER_SLOTS (2), CLUSTER_WIRE (auto: shoal-wire when a delay is
# asked for and netem is missing; 1: always; 0: never), CLUSTER_WIRE_BIN
# (build/bin/shoal-wire).
#
# Host i is namespace <prefix>-h<i> with hostname <prefix>-h<i> (its own UTS
# namespace, so OpenMPI sees distinct nodes), address <subnet>.<i> on eth0.
set -euo pipefail

PREFIX=${CLUSTER_PREFIX:-shoal}
HOSTS=${CLUSTER_HOSTS:-3}
SUBNET=${CLUSTER_SUBNET:-10.77.0}
DELAY_US=${CLUSTER_DELAY_US:-0}
RATE=${CLUSTER_RATE:-1gbit}
SLOTS=${CLUSTER_SLOTS:-2}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WIRE=${CLUSTER_WIRE:-auto}
WIRE_BIN=${CLUSTER_WIRE_BIN:-$HERE/../../build/bin/shoal-wire}
STATE=${CLUSTER_STATE:-/tmp/${PREFIX}-cluster}
SWITCH=${PREFIX}-sw

host_ns() { echo "${PREFIX}-h$1"; }

die() {
  echo "cluster.sh: error: $*" >&2
  exit 2
}

need_root() {
  [ "$(id -u)" = 0 ] || die "needs root (ip netns add); run as root or through sudo"
  command -v ip >/dev/null || die "'ip' (iproute2) not found"
  command -v tc >/dev/null || [ -x /usr/sbin/tc ] || die "'tc' (iproute2) not found"
}

tc_cmd() { command -v tc 2>/dev/null || echo /usr/sbin/tc; }

down() {
  local i
  # The switch process (wire mode): by its recorded pid, never by name.
  if [ -s "$STATE/wire.pid" ]; then
    kill "$(cat "$STATE/wire.pid")" 2>/dev/null || true
  fi
  for ((i = 1; i <= HOSTS; i++)); do
    ip netns pids "$(host_ns "$i")" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$(host_ns "$i")" 2>/dev/null || true
  done
  ip netns del "$SWITCH" 2>/dev/null || true
  rm -rf "$STATE"
}

# Shapes host i's egress: netem delay plus its rate when a delay is asked
# for and the kernel has netem (sch_netem), else a tbf rate limit alone
# (without netem, a delay is shoal-wire's: see use_wire).
shape() {
  local ns=$1 dev=$2 tc
  tc=$(tc_cmd)
  if [ "$DELAY_US" -gt 0 ] && ip netns exec "$ns" "$tc" qdisc add dev "$dev" root netem \
    delay "${DELAY_US}us" rate "$RATE" 2>/dev/null; then
    echo "netem delay ${DELAY_US}us rate $RATE" >"$STATE/shaping"
    return
  fi
  ip netns exec "$ns" "$tc" qdisc add dev "$dev" root tbf rate "$RATE" burst 256kb latency 10ms ||
    die "tc: cannot shape $dev in $ns"
  if [ ! -e "$STATE/shaping" ] && [ "$DELAY_US" -gt 0 ]; then
    echo "cluster.sh: warning: this kernel has no netem qdisc and CLUSTER_WIRE=0: links are" \
      "rate limited ($RATE) but not delayed" >&2
  fi
  echo "tbf rate $RATE (no delay)" >"$STATE/shaping"
}

# Whether this kernel has the netem qdisc: tried on a dummy device in a
# scratch namespace.
have_netem() {
  local probe=${PREFIX}-probe ok=1
  ip netns add "$probe" 2>/dev/null || return 1
  ip -n "$probe" link add d0 type dummy 2>/dev/null &&
    ip netns exec "$probe" "$(tc_cmd)" qdisc add dev d0 root netem delay 1us 2>/dev/null && ok=0
  ip netns del "$probe" 2>/dev/null || true
  return $ok
}

# CLUSTER_RATE in bits per second for shoal-wire: tc's units (bit, kbit,
# mbit, gbit; a bare number is bits).
rate_bps() {
  local r=${1,,} n unit
  n=${r%%[a-z]*}
  unit=${r#"$n"}
  [[ $n =~ ^[0-9]+$ ]] || die "CLUSTER_RATE=$1: expected a number with bit, kbit, mbit or gbit"
  case "$unit" in
    "" | bit) echo "$n" ;;
    kbit) echo $((n * 1000)) ;;
    mbit) echo $((n * 1000000)) ;;
    gbit) echo $((n * 1000000000)) ;;
    *) die "CLUSTER_RATE=$1: unknown unit '$unit' (bit, kbit, mbit or gbit)" ;;
  esac
}

use_wire() {
  case "$WIRE" in
    1) return 0 ;;
    0) return 1 ;;
    auto) [ "$DELAY_US" -gt 0 ] && ! have_netem ;;
    *) die "CLUSTER_WIRE=$WIRE: expected auto, 1 or 0" ;;
  esac
}

# Starts shoal-wire with one TAP device <prefix>-t<i> per host, in the root
# namespace (so that removing a host's namespace does not kill it); each
# device is then moved into its host and renamed eth0.
start_wire() {
  [ -x "$WIRE_BIN" ] || die "shoal-wire not found at $WIRE_BIN (build it: cmake --build build" \
    "--target shoal-wire; or set CLUSTER_WIRE_BIN)"
  local -a taps=()
  local i
  for ((i = 1; i <= HOSTS; i++)); do taps+=(--tap "${PREFIX}-t$i"); done
  setsid "$WIRE_BIN" "${taps[@]}" --delay-us "$DELAY_US" --rate-bps "$(rate_bps "$RATE")" \
    --ready "$STATE/wire.ready" >"$STATE/wire.log" 2>&1 </dev/null &
  echo $! >"$STATE/wire.pid"
  for ((i = 0; i < 50; i++)); do
    [ -e "$STATE/wire.ready" ] && break
    kill -0 "$(cat "$STATE/wire.pid")" 2>/dev/null ||
      die "shoal-wire failed: $(cat "$STATE/wire.log")"
    sleep 0.1
  done
  [ -e "$STATE/wire.ready" ] || { down; die "shoal-wire did not start within 5 s"; }
  echo "shoal-wire delay ${DELAY_US}us rate $RATE (user-space switch: no netem)" >"$STATE/shaping"
}

# Host i's eth0: a veth pair into the switch namespace's bridge, shaped by
# tc; or, in wire mode, shoal-wire's TAP device (shaped by shoal-wire).
link_host() {
  local i=$1 ns=$2
  if [ -e "$STATE/wire.pid" ]; then
    ip link set "${PREFIX}-t$i" netns "$ns"
    ip -n "$ns" link set "${PREFIX}-t$i" name eth0
    return
  fi
  ip link add eth0 netns "$ns" type veth peer name "p$i" netns "$SWITCH"
  ip -n "$SWITCH" link set "p$i" master br0
  ip -n "$SWITCH" link set "p$i" up
}

up() {
  need_root
  [ "$HOSTS" -ge 2 ] && [ "$HOSTS" -le 200 ] || die "CLUSTER_HOSTS=$HOSTS: expected 2 .. 200"
  [[ $DELAY_US =~ ^[0-9]+$ ]] && [ "$DELAY_US" -le 1000000 ] ||
    die "CLUSTER_DELAY_US=$DELAY_US: expected an integer in [0, 1000000]"
  down
  mkdir -p "$STATE"
  local wire=0
  use_wire && wire=1
  # Anything below fails the whole bring-up: leave nothing half made.
  trap 'echo "cluster.sh: bring-up failed; removing what was made" >&2; down' ERR
  if [ $wire = 1 ]; then
    start_wire
  else
    ip netns add "$SWITCH"
    ip -n "$SWITCH" link set lo up
    ip -n "$SWITCH" link add br0 type bridge
    ip -n "$SWITCH" link set br0 up
  fi
  local i ns
  : >"$STATE/hostfile"
  for ((i = 1; i <= HOSTS; i++)); do
    ns=$(host_ns "$i")
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    link_host "$i" "$ns"
    ip -n "$ns" addr add "$SUBNET.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    # Unacknowledged data gives up after ~6 s instead of ~15 min, so that a
    # launcher sending to a host whose link is down fails and ends the job.
    ip netns exec "$ns" sh -c 'echo 4 > /proc/sys/net/ipv4/tcp_retries2'
    [ $wire = 1 ] || shape "$ns" eth0
    echo "$ns slots=$SLOTS" >>"$STATE/hostfile"
  done
  trap - ERR
  # Every host reaches the others before anything is launched (ping is not
  # always installed; mpirun's own connection then tells).
  if command -v ping >/dev/null; then
    for ((i = 2; i <= HOSTS; i++)); do
      ip netns exec "$(host_ns 1)" ping -c 1 -W 2 "$SUBNET.$i" >/dev/null ||
        { down; die "host 1 cannot reach $SUBNET.$i"; }
    done
  fi
  echo "cluster: $HOSTS hosts $(host_ns 1) .. $(host_ns "$HOSTS") on $SUBNET.0/24," \
    "$(cat "$STATE/shaping")"
}

# mpirun reads these from its environment: launch through the agent, map one
# rank per host in turn, TCP only (no shared memory between "hosts"), on the
# cluster's subnet only. The hosts share the machine's cores, so ranks are
# oversubscribed although each host's slots are not: MPI must yield while it
# waits (mpirun --oversubscribe would set this), or a busy-polling rank starves
# the others (the MPI baselines ran 30x slower without it). The cluster needs
# root, so mpirun runs as root: OpenMPI wants that confirmed. TCP keepalive on
# the launcher's own connections (default: first probe after 300 s idle) lets
# mpirun notice a host whose link is down within about 20 s, as a cluster's
# resource manager would, instead of waiting for that host's daemon forever;
# later than the runtime's own watchdog (5 s in test-cluster.sh), which
# names the rank it lost.
mca_env() {
  cat <<EOF
OMPI_MCA_plm_rsh_agent=$HERE/rsh-agent.sh
OMPI_MCA_orte_default_hostfile=$STATE/hostfile
OMPI_MCA_rmaps_base_mapping_policy=node
OMPI_MCA_rmaps_base_oversubscribe=1
OMPI_MCA_btl=tcp,self
OMPI_MCA_btl_tcp_if_include=$SUBNET.0/24
OMPI_MCA_oob_tcp_if_include=$SUBNET.0/24
OMPI_MCA_pml=ob1
OMPI_MCA_mpi_yield_when_idle=1
OMPI_MCA_oob_tcp_keepalive_time=10
OMPI_MCA_oob_tcp_keepalive_intvl=3
OMPI_MCA_oob_tcp_keepalive_probes=3
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
CLUSTER_PREFIX=$PREFIX
EOF
}

run() {
  need_root
  [ -e "$STATE/hostfile" ] || die "no cluster is up (cluster.sh up first)"
  [ $# -gt 0 ] || die "run: no command"
  local -a env_args
  mapfile -t env_args < <(mca_env)
  exec ip netns exec "$(host_ns 1)" unshare --uts -- \
    env "${env_args[@]}" sh -c 'hostname "$0" && exec "$@"' "$(host_ns 1)" "$@"
}

link_down() {
  need_root
  local i=${1:?link-down: which host (1 .. $HOSTS)?}
  # In wire mode there is no switch port: the host's side alone (its TAP
  # device then neither sends nor receives).
  if [ ! -e "$STATE/wire.pid" ]; then
    ip -n "$SWITCH" link set "p$i" down
  fi
  ip -n "$(host_ns "$i")" link set eth0 down
}

status() {
  local i ns
  [ -e "$STATE/shaping" ] && echo "links: $(cat "$STATE/shaping")"
  for ((i = 1; i <= HOSTS; i++)); do
    ns=$(host_ns "$i")
    if ip netns list | grep -qw "$ns"; then
      echo "$ns: $(ip -n "$ns" -br addr show eth0 2>/dev/null)"
      ip netns exec "$ns" "$(tc_cmd)" qdisc show dev eth0 2>/dev/null | sed 's/^/  /'
    else
      echo "$ns: absent"
    fi
  done
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  env) mca_env ;;
  run) shift; run "$@" ;;
  link-down) shift; link_down "$@" ;;
  *) die "usage: cluster.sh up|down|status|env|run CMD...|link-down HOST" ;;
esac
