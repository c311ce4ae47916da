#!/usr/bin/env bash
# `make test-cluster`: the distributed tests and the apps across 3 emulated
# hosts (cluster.sh), then a link taken down in the middle of a job. Sets
# the cluster up, always tears it down (on failure and on Ctrl-C too), and
# exits non-zero if any step failed.
#
#   test-cluster.sh [BUILD_DIR]
#
# Variables: CLUSTER_CTEST_ARGS (default -L ^mpi$ -LE ^one_node$ -E _shm(_|$):
# every distributed test but those of --one-sided shm and the others that need
# all their processes on one node (label one_node), which would be refused or
# take another path across hosts: a step below checks that refusal; they run
# in make test),
# CLUSTER_SKIP_CTEST=1, CLUSTER_SKIP_APPS=1, CLUSTER_LINK_DOWN_WATCHDOG_S (5), CLUSTER_LINK_DOWN_GRACE_S
# (how long past the watchdog the job may take to end, 60), CLUSTER_LINK_DOWN_REGEX
# (the runtime's message that must name the lost rank), CLUSTER_LINK_DOWN_RUNS
# (1: how many times the link is pulled, each on a fresh cluster; the times
# from unplug to the job's end are reported as min/median/max), and
# cluster.sh's (CLUSTER_DELAY_US > 0 without netem: the shoal-wire switch of
# BUILD_DIR).
set -uo pipefail

BUILD=${1:-build}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLUSTER=$HERE/cluster.sh
SHOAL=$(cd "$BUILD" 2>/dev/null && pwd)/bin/shoal
WATCHDOG_S=${CLUSTER_LINK_DOWN_WATCHDOG_S:-5}
GRACE_S=${CLUSTER_LINK_DOWN_GRACE_S:-60}
LINK_DOWN_REGEX=${CLUSTER_LINK_DOWN_REGEX:-shoal: fatal on rank [0-9]+: .*rank 2}
LINK_DOWN_RUNS=${CLUSTER_LINK_DOWN_RUNS:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CLUSTER_WIRE_BIN=${CLUSTER_WIRE_BIN:-$(cd "$BUILD" 2>/dev/null && pwd)/bin/shoal-wire}

[ -x "$SHOAL" ] || { echo "test-cluster: error: $BUILD/bin/shoal not built (make build)" >&2; exit 2; }

failed=()
cleanup() { "$CLUSTER" down; }
trap cleanup EXIT
trap 'exit 130' INT TERM

"$CLUSTER" up || exit 2

step() { echo; echo "== test-cluster: $*"; }

CTEST_ARGS=${CLUSTER_CTEST_ARGS:--L ^mpi$ -LE ^one_node$ -E _shm(_|$)}
if [ "${CLUSTER_SKIP_CTEST:-0}" != 1 ]; then
  # shellcheck disable=SC2086  # the arguments are meant to split
  step "ctest $CTEST_ARGS across the hosts"
  "$CLUSTER" run ctest --test-dir "$BUILD" --output-on-failure --timeout 300 \
    $CTEST_ARGS || failed+=("ctest $CTEST_ARGS")
fi

# Node-shared memory across hosts: refused at start-up, naming the rank.
step "--one-sided shm across hosts is refused"
out=$(timeout 60 "$CLUSTER" run mpirun -np 2 "$SHOAL" gups --log-table 10 --cores 1 \
  --one-sided shm 2>&1)
rc=$?
if [ $rc = 2 ] && grep -q "one-sided shm needs every process of the job on one node, but rank 1" \
  <<<"$out"; then
  echo "refused: status 2, $(grep -o 'shoal: error: [^;]*' <<<"$out" | head -n 1)"
else
  echo "$out" | tail -n 10
  failed+=("--one-sided shm across hosts: status $rc, not the refusal")
fi

# Messages within a node through its shared-memory segments, between nodes
# through MPI, in one job: 6 ranks, two on each host (ranks are placed one
# per host in turn), every counter validated; rank 0 names its node's path.
# Then one rank a host: no segment to open, and --verbose says so.
node_messages_step() {  # node_messages_step NP REGEX
  step "mpirun -np $1 shoal histogram --verbose: $2"
  local out rc
  out=$(timeout 120 "$CLUSTER" run mpirun -np "$1" "$SHOAL" histogram --requests-per-core 200000 \
    --cores 1 --verbose 2>&1)
  rc=$?
  if [ $rc = 0 ] && grep -q "validation  *PASSED" <<<"$out" && grep -Eq "$2" <<<"$out"; then
    grep -E "$2" <<<"$out" | head -n 1
  else
    echo "$out" | tail -n 10
    failed+=("node messages at $1 ranks: status $rc, or no '$2'")
  fi
}
node_messages_step 6 "messages within the node: shm \(2 ranks on this node, "
node_messages_step 3 "messages within the node: none \(no other rank on this node\)"

# Apps on 3 hosts (one rank each, 2 cores), each validated by itself.
apps=(
  "gups --log-table 20"
  "gups --log-table 20 --impl delegate"
  "bfs --scale 16 --roots 16"
  "bfs --scale 16 --roots 16 --impl async"
  "histogram --requests-per-core 1000000"
  "indexgather --requests-per-core 500000"
  "pagerank --scale 14"
  "uts --tree T1"
  "intsort --class W"
  "chma --tasks 2048 --length 64"
  "permutation --elements 1000000"
  "randomwalk --scale 14 --length 64"
  "pointerchase --rounds 5000"
)
[ "${CLUSTER_SKIP_APPS:-0}" = 1 ] && apps=()
for a in "${apps[@]}"; do
  step "mpirun -np 3 shoal $a --cores 2"
  # shellcheck disable=SC2086
  if out=$(timeout 300 "$CLUSTER" run mpirun -np 3 "$SHOAL" $a --cores 2 --json 2>&1) &&
    grep -q '"validated":true' <<<"$out"; then
    # The job's rate; apps that time several searches list more time_s fields.
    grep -o -E '"(rate|rate_unit|validated)":("[^"]*"|[^,}]*)' <<<"$out" | tr '\n' ' '
    echo
  else
    echo "$out" | tail -n 20
    failed+=("$a")
  fi
done

# A link taken down mid-run: host 3's cable pulled while gups runs. The job
# must end, non-zero, within the watchdog time (plus the launcher's grace),
# with the runtime's message naming the rank it lost; a job still running
# past that is killed and reported. Each run on a fresh cluster.
link_down_times=()
link_down_once() {
  local run=$1 log job host3 pid t unplugged limit ended rc elapsed said=""
  step "link down $run/$LINK_DOWN_RUNS: host 3 unplugged during gups (--watchdog-s $WATCHDOG_S)"
  log=$(mktemp)
  "$CLUSTER" run mpirun -np 3 "$SHOAL" gups --log-table 24 --cores 2 --watchdog-s "$WATCHDOG_S" \
    >"$log" 2>&1 &
  job=$!
  # Unplug once host 3's rank runs (start-up is slow on a loaded machine), and
  # 2 s into the job.
  host3=${CLUSTER_PREFIX:-shoal}-h3
  for ((t = 0; t < 300; t++)); do
    for pid in $(ip netns pids "$host3" 2>/dev/null); do
      [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = shoal ] && break 2
    done
    sleep 0.1
  done
  sleep 2
  unplugged=$(date +%s.%N)
  "$CLUSTER" link-down 3
  limit=$((WATCHDOG_S + GRACE_S))
  ended=0
  for ((t = 0; t < limit * 10; t++)); do
    # When shoal's message came (to 0.1 s): the job's end follows later, as
    # the launcher tears down the ranks across the dead link.
    if [ -z "$said" ] && grep -q -E "$LINK_DOWN_REGEX" "$log"; then
      said=$(awk -v a="$unplugged" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    fi
    if ! kill -0 "$job" 2>/dev/null; then
      ended=1
      break
    fi
    sleep 0.1
  done
  if [ $ended = 1 ]; then
    wait "$job"
    rc=$?
  else
    rc=timeout
    kill -- "$job" 2>/dev/null  # not left running into the next bring-up
    wait "$job" 2>/dev/null
  fi
  elapsed=$(awk -v a="$unplugged" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  echo "link down: ended=$ended rc=$rc after ${elapsed}s from the unplug (shoal's message" \
    "after ${said:-?}s); last lines of output:"
  tail -n 16 "$log" | cut -c1-300
  if [ $ended = 0 ]; then
    failed+=("link down $run: the job was still running ${limit}s after the unplug")
  elif [ "$rc" = 0 ]; then
    failed+=("link down $run: the job exited 0")
  elif ! grep -q -E "$LINK_DOWN_REGEX" "$log"; then
    # The launcher notices the lost host too (cluster.sh turns on its TCP
    # keepalive), but only the runtime can say which rank stopped answering.
    failed+=("link down $run: the job ended, but no message from shoal matches '$LINK_DOWN_REGEX'")
  else
    link_down_times+=("$elapsed rc=$rc ${said:-nan}")
  fi
  rm -f "$log"
}
for ((run = 1; run <= LINK_DOWN_RUNS; run++)); do
  if [ "$run" -gt 1 ]; then
    "$CLUSTER" up >/dev/null || { failed+=("link down $run: cluster.sh up"); break; }
  fi
  link_down_once "$run"
done
if [ ${#link_down_times[@]} -gt 0 ]; then
  printf '%s\n' "${link_down_times[@]}" | awk '
    function median(v, n,   i, j, x) {  # sorts v[1..n] in place
      for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j > 0 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    { t[NR] = $1; rc[$2]++; m[NR] = $3 }
    END {
      te = median(t, NR); tm = median(m, NR)
      printf "link down: %d run(s) ended with the message; from the unplug, the job ended after min %.1f s, median %.1f s, max %.1f s; the message came after min %.1f s, median %.1f s, max %.1f s;", NR, t[1], te, t[NR], m[1], tm, m[NR]
      for (s in rc) printf " %s x%d", s, rc[s]
      printf "\n"
    }'
fi

echo
if [ ${#failed[@]} -eq 0 ]; then
  echo "test-cluster: every step passed"
  exit 0
fi
echo "test-cluster: ${#failed[@]} step(s) FAILED:"
printf '  %s\n' "${failed[@]}"
exit 1
