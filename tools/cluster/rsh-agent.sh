#!/usr/bin/env bash
# OpenMPI's remote shell for the emulated cluster (plm_rsh_agent; see
# cluster.sh): called as `rsh-agent.sh HOST COMMAND...` where ssh would be,
# it runs COMMAND in HOST's network namespace, under HOST's own hostname,
# through sh as sshd would (OpenMPI passes shell text such as
# "PATH=...; export PATH; orted ...").
set -euo pipefail
prefix=${CLUSTER_PREFIX:-shoal}
host=${1:?rsh-agent.sh: no host}
shift
case "$host" in
  "$prefix"-h[0-9]*) ;;
  *)
    echo "rsh-agent.sh: error: '$host' is not a host of the emulated cluster ($prefix-h<N>)" >&2
    exit 255
    ;;
esac
ip netns list | grep -qw -- "$host" || {
  echo "rsh-agent.sh: error: no network namespace '$host' (cluster.sh up first)" >&2
  exit 255
}
exec ip netns exec "$host" unshare --uts -- sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"
