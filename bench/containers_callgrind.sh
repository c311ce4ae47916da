#!/bin/bash
# Instructions per container operation of one bench-containers kernel (callgrind): the
# difference between runs of N1 and N2 operations per core, over the extra operations.
# usage: [EXE=build/bin/bench-containers] bench/containers_callgrind.sh KERNEL NP CORES N1 N2
# KERNEL keys_only gives the benchmark loop's own share (key generation, no container), to
# subtract. Profiles stay in ${TMPDIR:-/tmp}/containers_cg.KERNEL.NPxCORES.N.PID (callgrind_annotate).
# At NP > 1 the figure includes each process's idle polling and varies run to run.
k=$1; np=$2; c=$3; n1=$4; n2=$5
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tot() {
  rm -f ${TMPDIR:-/tmp}/containers_cg.$k.${np}x$c.$1.*
  if [ $np = 1 ]; then
    valgrind --tool=callgrind --callgrind-out-file=${TMPDIR:-/tmp}/containers_cg.$k.${np}x$c.$1.%p ${EXE:-./build/bin/bench-containers} --only $k --reps 1 --ops-per-core $1 --key-bits 20 --cores $c --idle sleep >/dev/null 2>&1
  else
    mpirun --oversubscribe -np $np valgrind --tool=callgrind --callgrind-out-file=${TMPDIR:-/tmp}/containers_cg.$k.${np}x$c.$1.%p ${EXE:-./build/bin/bench-containers} --only $k --reps 1 --ops-per-core $1 --key-bits 20 --cores $c --idle sleep >/dev/null 2>&1
  fi
  cat ${TMPDIR:-/tmp}/containers_cg.$k.${np}x$c.$1.* | grep "^totals:" | awk '{s+=$2} END {print s}'
}
a=$(tot $n1); b=$(tot $n2)
echo "$k ${np}x$c: Ir($n1)=$a Ir($n2)=$b per-op=$(python3 -c "print(round(($b-$a)/(($n2-$n1)*$np*$c),1))")"
