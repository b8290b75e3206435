#!/usr/bin/env bash
# Issue 11 item 8: an unwritable state directory failed every job (exit 126) while
# `gsched nodes` said idle.  Now a launch that fails because the executor cannot create its
# run or log directory (read-only, full, permissions) drains the nodes with that reason
# (`gsched nodes`, the API), the job is requeued without counting against its launch attempts
# (no job is burned through the broken directory), running jobs go on, and the nodes come back
# by themselves once the directory is writable again (re-checked every 5 s, logged).  A daemon
# started on an unwritable state directory starts drained.
# Root: the directories are covered by read-only bind mounts; otherwise chmod 0500.
# usage: statedir_drain.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

MOUNTS=""
cleanup_mounts() { local m; for m in $MOUNTS; do umount "$m" 2>/dev/null; done; MOUNTS=""; }
trap 'cleanup_mounts; chmod -R u+rwx "$tmp" 2>/dev/null; d_cleanup' EXIT

mode=""
if [ "$(id -u)" -eq 0 ]; then
  mkdir -p "$tmp/probe"
  if mount --bind "$tmp/probe" "$tmp/probe" 2>/dev/null; then
    umount "$tmp/probe"; mode=bind
  fi
else
  mode=chmod
fi
if [ -z "$mode" ]; then echo "SKIP: root without permission to bind-mount (container without CAP_SYS_ADMIN)"; exit 77; fi

# brk: make the state directory's runs/ and the log directory unwritable; fix: undo
brk() {
  local d
  for d in "$st/runs" "$DDIR/logs"; do
    if [ $mode = bind ]; then
      mount --bind "$d" "$d" && MOUNTS="$d $MOUNTS" && mount -o remount,bind,ro "$d"
    else
      chmod 0500 "$d"
    fi
  done
}
fix() {
  if [ $mode = bind ]; then cleanup_mounts; else chmod 0700 "$st/runs" "$DDIR/logs"; fi
}
logged() {
  for _ in $(seq "${2:-100}"); do grep -Eq -- "$1" "$DDIR/daemon.log" && return 0; sleep 0.1; done
  return 1
}
count() { local n=0 e; for e in $1; do [ "$e" = "$2" ] && n=$((n+1)); done; echo "$n"; }
nodes_say() { g nodes 2>&1 | grep -Eq -- "$1"; }

d_start dr --cluster 1x2 --launch-attempts 2 || exit 1
st=$DDIR/gsched.d
run=$(gsub -g 1 --name running -- sleep 300)
check "a job runs before the breakage" wait_state "$run" RUNNING 20
# RUNNING comes before the fork: wait until its task is really there (its pid file written)
started() {
  for _ in $(seq 100); do ls "$st"/runs/"$run".*/task-0.pid > /dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}
check "its task started" started
brk
j=$(gsub -g 1 --name victim -- true)
check "the node is drained after the failed launch" logged "draining every node" 100
check "the job whose launch hit it is back in the queue" wait_state "$j" PENDING 10
sleep 2
check "it stays pending (not burned through the directory)" [ "$(state "$j")" = PENDING ]
ev=$(events "$j")
check "one launch failure, not counted, no more tries (events: $ev)" [ "$(count "$ev" launch-failed)" -eq 1 ]
check "the job did not fail" [ "$(count "$ev" failed)" -eq 0 ]
check "the running job goes on" [ "$(state "$run")" = RUNNING ]
check "gsched nodes says draining" nodes_say "draining"
check "gsched nodes gives the reason" nodes_say "REASON.*|cannot create (run )?director"
api_has() { dcurl -s "$URL/v1/$1" | grep -Eq -- "$2"; }
check "the API gives the reason" api_has nodes '"reason": *"cannot create'
check "the health endpoint counts no free GPU" api_has health '"free": *0'
fix
check "the re-check brings the nodes back (logged)" logged "can launch tasks again" 150
check "the waiting job runs once the directory is writable" wait_state "$j" DONE 20
check "nodes no longer drained" sh -c "! '$bin' nodes --server '$SERVER' | grep -q drain"
g cancel "$run" > /dev/null
check "the running job ended normally" wait_state "$run" CANCELLED 20
check "SIGTERM stops cleanly" d_stop

# a daemon started on an unwritable state directory starts drained, and recovers
brk
: > "$DDIR/daemon.log"
d_start dr --cluster 1x2 || exit 1
check "started drained" logged "draining every node" 100
check "gsched nodes says drained" nodes_say "drained"
j2=$(gsub -g 1 --name later -- true)
sleep 1
check "nothing starts while drained" [ "$(state "$j2")" = PENDING ]
check "no launch attempted" [ "$(count "$(events "$j2")" launch-failed)" -eq 0 ]
fix
check "back in service" logged "can launch tasks again" 150
check "the job runs" wait_state "$j2" DONE 20
check "SIGTERM stops cleanly" d_stop
finish
