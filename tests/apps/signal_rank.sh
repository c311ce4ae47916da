#!/bin/bash
# signal_rank.sh SIGNAL DELAY_S LAUNCHER...: runs the launcher command (a job of
# several ranks, started with --verbose), waits until rank 0 has printed its
# configuration (every rank is then past MPI start-up and the start-up check)
# and DELAY_S seconds more, sends SIGNAL to its rank 1, and exits with the
# job's status. A fixed delay alone was not enough: under a sanitizer on a
# loaded machine the signal came while MPI was still starting. Prints how
# long the job took to end after the signal. Whatever happens, the signalled
# process is resumed and killed at the end, so that a stopped rank never
# outlives the test.
set -u
sig=$1
delay=$2
shift 2
log=$(mktemp)
"$@" 2> >(tee "$log" >&2) &
job=$!
target=
cleanup() {
  if [ -n "$target" ]; then
    kill -CONT "$target" 2>/dev/null
    kill -KILL "$target" 2>/dev/null
  fi
  rm -f "$log"
}
trap cleanup EXIT
until grep -q '^shoal: configuration' "$log"; do
  if ! kill -0 "$job" 2>/dev/null; then
    echo "signal_rank.sh: the job ended before rank 0 printed its configuration" >&2
    wait "$job"
    exit 125
  fi
  sleep 0.1
done
sleep "$delay"
# Rank 1: a descendant of the launcher whose environment says so (OpenMPI,
# MPICH/Hydra and PMIx launchers set one of these).
for pid in $(pgrep -P "$job") $(pgrep -P "$(pgrep -P "$job" | tr '\n' ',' | sed 's/,$//')" 2>/dev/null); do
  if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null |
      grep -Eq '^(OMPI_COMM_WORLD_RANK|PMI_RANK|PMIX_RANK)=1$'; then
    target=$pid
  fi
done
if [ -z "$target" ]; then
  echo "signal_rank.sh: no rank 1 found under process $job" >&2
  kill -KILL "$job"
  exit 125
fi
start=$(date +%s.%N)
kill "-$sig" "$target"
wait "$job"
status=$?
echo "signal_rank.sh: SIG$sig to rank 1 (process $target); the job ended $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s later with status $status" >&2
exit "$status"
