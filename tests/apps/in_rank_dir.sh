#!/bin/sh
# in_rank_dir.sh DIR COMMAND...: runs COMMAND (one rank of a job under mpirun)
# in DIR/r<rank>, so that every rank gives the same command line but reads its
# own copy of a relative input file: what a job sees when one node holds a
# stale or damaged copy. The rank comes from Open MPI or MPICH (PMI).
cd "$1/r${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" || exit 2
shift
exec "$@"
