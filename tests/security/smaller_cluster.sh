#!/usr/bin/env bash
# Issue 11 item 9: after a restart on a smaller cluster, a running job that no longer fit was
# requeued as pending forever and blocked fifo ("Priority" while GPUs were free).  Issue 14
# (HiveD's work-preserving reconfiguration): a job running when the daemon stopped keeps
# running on the smaller cluster - adopted on the GPUs that remain, the others no longer
# counted, logged - and ends when its tasks end (here: cancelled); a pending job that can
# never run on the new cluster ends REJECTED with the reason ("needs 8 GPUs but the cluster
# has 4"), logged; the jobs that fit run as soon as GPUs are free: nothing waits for ever.
# usage: smaller_cluster.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

logged() {
  for _ in $(seq 100); do grep -Eq -- "$1" "$DDIR/daemon.log" && return 0; sleep 0.1; done
  return 1
}
printf 'name: big\ntasks: 2\ngpus: 4\ncommand: sleep 300\n' > "$tmp/big.yaml"

d_start sc --cluster 2x4 || exit 1
big=$(gsub "$tmp/big.yaml")
check "the 8-GPU job runs on the 2x4 cluster" wait_state "$big" RUNNING 20
pend=$(gsub "$tmp/big.yaml")
small=$(gsub -g 1 --name small -- true)
check "a second 8-GPU job waits" wait_state "$pend" PENDING 10
pids=$(cat "$DDIR"/gsched.d/runs/"$big".*/task-*.pid 2>/dev/null | cut -d' ' -f1)
check "the running job's tasks are known" [ -n "$pids" ]
check "graceful stop (tasks keep running)" d_stop

# restart on a smaller cluster: 4 GPUs
d_start sc --cluster 1x4 || exit 1
check "the running job that no longer fits runs on" [ "$(state "$big")" = RUNNING ]
check "logged: the GPUs it no longer has are not counted" logged "job $big: 4 of its 8 GPU\(s\) are not in this cluster: it runs on"
check "logged: it could never run here again" logged "job $big: can never run on this cluster again \(needs 8 GPUs but the cluster has 4\)"
check "the pending job that no longer fits is rejected" wait_state "$pend" REJECTED 20
r=$(field "$pend" Reason)
check "with the reason ($r)" contains "$r" "needs 8 GPUs but the cluster has 4"
check "its rejection is logged" logged "job $pend rejected: needs 8 GPUs"
ev=$(events "$pend")
check "its events say why (got: $ev)" has "$ev" rejected
check "the small job waits for the running one's GPUs" [ "$(state "$small")" = PENDING ]
check "the running job is cancelled" g cancel "$big"
gone() {
  local p a
  for _ in $(seq 50); do
    a=0
    for p in $pids; do ps -o stat= -p "$p" 2>/dev/null | grep -qv Z && a=1; done
    [ "$a" = 0 ] && return 0
    sleep 0.1
  done
  return 1
}
check "its tasks were killed (on the node still there and on the one gone)" gone
check "the small job then runs" wait_state "$small" DONE 20
check "nothing left pending" wait_idle 10
check "SIGTERM stops cleanly" d_stop
finish
