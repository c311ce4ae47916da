#!/bin/bash
# Interleaved pairs of runs, by hand: pairs.sh ROUNDS LABEL1 "CMD1" LABEL2 "CMD2" ...
# Each round runs every command once (order reversed every other round) and
# prints "round label rate unit validated=... [edges_examined] seconds per
# iteration" from the run's --json (used for bench/results/new_impls.md).
reps=$1; shift
labels=(); cmds=()
while [ $# -gt 0 ]; do labels+=("$1"); cmds+=("$2"); shift 2; done
n=${#labels[@]}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for r in $(seq 1 $reps); do
  if [ $((r % 2)) = 1 ]; then order=$(seq 0 $((n-1))); else order=$(seq $((n-1)) -1 0); fi
  for i in $order; do
    out=$(timeout 300 bash -c "${cmds[$i]}" 2>/dev/null | tail -1)
    echo "$r ${labels[$i]} $(echo "$out" | python3 -c "import json,sys
try:
  d=json.loads(sys.stdin.read()); print(d['rate'], d['rate_unit'], 'validated=%s'%d['validated'], d.get('edges_examined_per_search',''), round(d['time_s']/max(d.get('iterations',1),1),4))
except Exception as e: print('FAILED', e)")"
  done
done
