#!/bin/sh
# A job dies whole (issue 17): `zerotrain launch` killed with SIGKILL takes its ranks with it
# (each child holds a parent-death signal). Usage: launcher_death.sh ZEROTRAIN WORKDIR
set -eu
zt="$1"
dir="$2"
rm -rf "$dir"
mkdir -p "$dir"
"$zt" launch -n 2 -- sh -c 'echo $$ > "$0/rank_$RANK.pid"; exec sleep 60' "$dir" > "$dir/out.log" 2>&1 &
launcher=$!
# A process counts as gone once it exited (a zombie waiting for its reaper is gone too).
running() {
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ "$state" != Z ]
}
i=0
while [ ! -s "$dir/rank_0.pid" ] || [ ! -s "$dir/rank_1.pid" ]; do
  i=$((i + 1))
  if [ $i -gt 100 ]; then
    echo "the ranks did not start"
    cat "$dir/out.log"
    kill -9 "$launcher"
    exit 1
  fi
  sleep 0.1
done
kill -9 "$launcher"
i=0
while [ $i -lt 50 ]; do
  alive=0
  for f in "$dir"/rank_*.pid; do
    if running "$(cat "$f")"; then alive=1; fi
  done
  if [ $alive = 0 ]; then
    echo "every rank ended after the launcher's SIGKILL"
    exit 0
  fi
  i=$((i + 1))
  sleep 0.1
done
echo "a rank outlived the launcher's SIGKILL by 5 s"
for f in "$dir"/rank_*.pid; do kill -9 "$(cat "$f")" 2>/dev/null || true; done
exit 1
