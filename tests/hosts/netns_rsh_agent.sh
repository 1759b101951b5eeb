#!/bin/sh
# OpenMPI's remote-shell agent for hosts that are network namespaces on this machine (tests/hosts/
# two_hosts.py): mpirun --mca plm_rsh_agent THIS calls it as it would call ssh, `THIS [options]
# HOST COMMAND...`; it runs COMMAND through a shell inside HOST's namespace, under a host name of
# its own (a UTS namespace named after the network namespace), as sshd would on a real node.
# ZT_NETNS_HOSTS maps each host to its namespace: "10.231.0.1=ns-a,10.231.0.2=ns-b".
set -eu
while [ $# -gt 0 ]; do
  case "$1" in -*) shift ;; *) break ;; esac
done
host="$1"
shift
ns=$(printf '%s\n' "$ZT_NETNS_HOSTS" | tr ',' '\n' | sed -n "s/^$host=//p")
if [ -z "$ns" ]; then
  echo "[netns_rsh_agent] host $host is not in ZT_NETNS_HOSTS=$ZT_NETNS_HOSTS" >&2
  exit 255
fi
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$ns" "$*"
