#!/bin/sh
# Runs one rank's command (tests/hosts/two_hosts.py) and records, in $ZT_RANK_STATUS_DIR, the
# network namespace the rank ran in (rankR.ns) and its exit code with the time it ended
# (rankR.rc: "CODE EPOCH_SECONDS"): a rank on a host cut off from mpirun can report neither.
rank="${OMPI_COMM_WORLD_RANK:-${RANK:-0}}"
ip netns identify $$ > "$ZT_RANK_STATUS_DIR/rank$rank.ns"
"$@"
rc=$?
echo "$rc $(date +%s.%N)" > "$ZT_RANK_STATUS_DIR/rank$rank.rc"
exit $rc
