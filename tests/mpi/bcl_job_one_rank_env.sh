#!/bin/sh
# Runs the rest of the command line with environment variable $2 set to $3
# on MPI rank $1 only (OpenMPI's or MPICH's rank variable): a bad value on
# one rank must still end the whole job with a clear message (tests/bcl.cmake).
rank=$1
name=$2
value=$3
shift 3
if [ "${OMPI_COMM_WORLD_RANK:-$PMI_RANK}" = "$rank" ]; then
  export "$name=$value"
fi
exec "$@"
