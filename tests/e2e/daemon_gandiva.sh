#!/usr/bin/env bash
# Gandiva's time-slicing in the live daemon: two one-GPU jobs on one GPU take turns every
# quantum through SIGSTOP/SIGCONT; a stopped job makes no progress; both finish; packing,
# migration and resizing are off in the daemon, and refused with a clear message if asked for.
# usage: daemon_gandiva.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

# the daemon refuses the mechanisms it cannot run (they default to off there)
out=$(timeout 20 "$bin" serve --cluster 1x1 --policy gandiva --set pack=on --db "$tmp/x.db" \
      --listen 127.0.0.1:0 2>&1)
rc=$?
check "gandiva with packing is refused in the daemon (exit 2)" [ "$rc" -eq 2 ]
check "... saying why" grep -q "supports time-slicing only" <<< "$out"

d_start live --cluster 1x1 --policy gandiva --set quantum=2s || { finish; exit 1; }
# each job counts to 6 once a second, logging the wall clock
job='for i in 1 2 3 4 5 6; do echo "$GSCHED_JOB_ID $i $(date +%s)"; sleep 1; done'
a=$(gsub --gpus 1 --name a -- sh -c "$job")
b=$(gsub --gpus 1 --name b -- sh -c "$job")
check "both submitted" [ -n "$a" ] && [ -n "$b" ]
check "a done" wait_state "$a" DONE 60
check "b done" wait_state "$b" DONE 60
ev_a=$(g describe job "$a")
ev_b=$(g describe job "$b")
check "a was suspended" grep -q suspended <<< "$ev_a"
check "a continued" grep -q continued <<< "$ev_a"
check "b waited for its turn, then ran" grep -q started <<< "$ev_b"
check "the turns alternate (at least 2 suspends of a)" [ "$(grep -c suspended <<< "$ev_a")" -ge 2 ]
# a stopped process does not count: its 6 lines span more than 6 s (it was stopped meanwhile)
la=$(g logs "$a" | grep -E "^$a [0-9]" )
first=$(head -1 <<< "$la" | cut -d' ' -f3) last=$(tail -1 <<< "$la" | cut -d' ' -f3)
check "a counted to 6" [ "$(wc -l <<< "$la")" -eq 6 ]
check "a was stopped while b ran (span > 6 s)" [ $((last - first)) -gt 6 ]
d_stop
finish
