#!/bin/sh
# Runs the rest of the command line with the words of $2 appended on MPI
# rank $1 only (OpenMPI's or MPICH's rank variable): a bad flag on one rank
# must still end the whole job with a clear message (tests/apps/*.cmake).
rank=$1
extra=$2
shift 2
if [ "${OMPI_COMM_WORLD_RANK:-$PMI_RANK}" = "$rank" ]; then
  # shellcheck disable=SC2086 # the extra words are split on purpose
  exec "$@" $extra
fi
exec "$@"
