#!/bin/bash
# Instructions per chma --impl map lookup inside message dispatch (callgrind), by the
# difference between --length 192 and 64 runs. Not run by make; see bench/results/chma_map.md.
# usage: bench/containers_chma_callgrind.sh EXE NP CORES
exe=$1; np=$2; c=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tot() {
  rm -f ${TMPDIR:-/tmp}/chma_cg.$np.$1.*
  if [ $np = 1 ]; then
    valgrind --tool=callgrind --callgrind-out-file=${TMPDIR:-/tmp}/chma_cg.$np.$1.%p $exe chma --impl map --pool-size 65536 --tasks 1024 --length $1 --cores $c --idle sleep >/dev/null 2>&1
  else
    mpirun --oversubscribe -np $np valgrind --tool=callgrind --callgrind-out-file=${TMPDIR:-/tmp}/chma_cg.$np.$1.%p $exe chma --impl map --pool-size 65536 --tasks 1024 --length $1 --cores $c --idle sleep >/dev/null 2>&1
  fi
  for f in ${TMPDIR:-/tmp}/chma_cg.$np.$1.*; do callgrind_annotate --inclusive=yes $f 2>/dev/null | grep "aggregator::dispatch(shoal::detail::buffer" | head -1 | awk '{gsub(",","",$1); print $1}'; done | awk '{s+=$1} END {printf "%d\n", s}'
}
a=$(tot 64); b=$(tot 192)
echo "chma map $exe ${np}x$c: per-lookup=$(python3 -c "print(round(($b-$a)/(1024*128),1))")"
