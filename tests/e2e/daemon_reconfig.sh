#!/usr/bin/env bash
# Issue 14, live: a daemon restarted with a changed config (HiveD's work-preserving
# reconfiguration, demo 69).  Running jobs keep running - also on GPUs the new config no
# longer has (a deleted chain, a node left out): they are adopted on the GPUs that remain,
# the others are not counted, and the daemon tracks them until their tasks end; GPUs are
# matched by chain, node name and index, not by position (the GPU indices of the old
# config mean other GPUs in the new one).  Waiting jobs that can never run on the new
# config are rejected with the reason; nothing is left waiting for ever.
#   fifo: 2 nodes -> 1 node: the 2-node job runs on to its end, the 1-node job queued behind
#         it then runs, a 2-node job waiting is rejected ("needs 4 GPUs but the cluster has 2");
#   hived: HiveD-format configs, the M60 chain and node k0 deleted, the default VC shrunk to
#         one node: the M60 job runs on unaccounted, the 2-node default job runs on with its
#         remaining node guaranteed (a same-priority default job waits for it), a waiting M60
#         job is rejected, a vc1 K80 job starts on the free node; restarted once more on the
#         same config, the jobs on GPUs that are gone are adopted again (stored as -1).
# Every wait is bounded; daemons are stopped by pid (lib/daemon.sh).
# usage: daemon_reconfig.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

# each task writes where it runs, then waits for the test's flag FILE (no timing assumptions)
task() { echo "echo \"node \$GSCHED_NODE cvd \$CUDA_VISIBLE_DEVICES\"; while [ ! -f '$tmp/$1' ]; do sleep 0.05; done"; }
release() { touch "$tmp/$1"; }
reason() { field "$1" Reason; }

echo "# fifo: 2x2 -> 1x2"
d_start fifo --cluster 2x2 --policy fifo --grace 2s || { bad "start fifo"; finish; }
a=$(gsub -N 2 -g 2 -- sh -c "$(task fa)")
wait_state "$a" RUNNING 30 || bad "2-node job runs"
b=$(gsub -g 2 -- sh -c "$(task fb)")
c=$(gsub -N 2 -g 2 -- sh -c "$(task fc)")
for _ in $(seq 50); do [ "$(state "$c")" = PENDING ] && break; sleep 0.1; done
check "1-node and 2-node jobs wait behind it" [ "$(state "$b")" = PENDING ] && [ "$(state "$c")" = PENDING ]
d_stop || bad "fifo stop"
d_start fifo --cluster 1x2 --policy fifo --grace 2s || { bad "restart fifo on 1x2"; finish; }
check "the 2-node job is still running after the restart on one node" [ "$(state "$a")" = RUNNING ]
wait_state "$c" REJECTED 30 || bad "the waiting 2-node job is rejected"
check "its reason: it can never fit ($(reason "$c"))" contains "$(reason "$c")" "needs 4 GPUs but the cluster has 2"
check "the 1-node job still waits for the running one" [ "$(state "$b")" = PENDING ]
release fa
wait_state "$a" DONE 30 || bad "the 2-node job ends normally"
wait_state "$b" RUNNING 30 || bad "the 1-node job runs after it (nothing stuck)"
release fb
wait_idle 30 || bad "fifo idle"
d_stop || bad "fifo stop 2"

echo "# hived: the M60 chain, node k0 and a default-VC node cell deleted"
cat > "$tmp/a.yaml" <<'EOF'
physicalCluster:
  skuTypes:
    K80: {gpu: 1}
    M60: {gpu: 1}
  cellTypes:
    K80-NODE: {childCellType: K80, childCellNumber: 2, isNodeLevel: true}
    K80-POOL: {childCellType: K80-NODE, childCellNumber: 3}
    M60-NODE: {childCellType: M60, childCellNumber: 2, isNodeLevel: true}
    M60-POOL: {childCellType: M60-NODE, childCellNumber: 1}
  physicalCells:
  - {cellType: K80-POOL, cellChildren: [{cellAddress: k0}, {cellAddress: k1}, {cellAddress: k2}]}
  - {cellType: M60-POOL, cellChildren: [{cellAddress: m0}]}
virtualClusters:
  vc1: {virtualCells: [{cellType: K80-POOL.K80-NODE, cellNumber: 1}, {cellType: M60-POOL.M60-NODE, cellNumber: 1}]}
  default: {virtualCells: [{cellType: K80-POOL.K80-NODE, cellNumber: 2}]}
EOF
cat > "$tmp/b.yaml" <<'EOF'
physicalCluster:
  skuTypes:
    K80: {gpu: 1}
  cellTypes:
    K80-NODE: {childCellType: K80, childCellNumber: 2, isNodeLevel: true}
    K80-POOL: {childCellType: K80-NODE, childCellNumber: 2}
  physicalCells:
  - {cellType: K80-POOL, cellChildren: [{cellAddress: k1}, {cellAddress: k2}]}
virtualClusters:
  vc1: {virtualCells: [{cellType: K80-POOL.K80-NODE, cellNumber: 1}]}
  default: {virtualCells: [{cellType: K80-POOL.K80-NODE, cellNumber: 1}]}
EOF
d_start hived --cluster "$tmp/a.yaml" --policy hived --grace 2s || { bad "start hived"; finish; }
m=$(gsub --vc vc1 --priority test -C M60 -g 2 -- sh -c "$(task hm)")
wait_state "$m" RUNNING 30 || bad "M60 job runs"
k=$(gsub --vc default --priority test -C K80 -N 2 -g 2 -- sh -c "$(task hk)")
wait_state "$k" RUNNING 30 || bad "2-node K80 job runs"
w=$(gsub --vc vc1 --priority test -C M60 -g 2 -- sh -c "$(task hw)")
for _ in $(seq 50); do [ "$(state "$w")" = PENDING ] && break; sleep 0.1; done
check "a second M60 job of vc1 waits" [ "$(state "$w")" = PENDING ]
kwhere=$(field "$k" Nodes)
[ -z "$kwhere" ] && kwhere=$(g describe job "$k" 2>/dev/null | grep -i 'k[0-2]' | head -1)
echo "# the K80 job runs on: $kwhere"
d_kill9
d_start hived --cluster "$tmp/b.yaml" --policy hived --grace 2s || { bad "restart hived on the new config"; finish; }
check "the M60 job runs on after its chain was deleted" [ "$(state "$m")" = RUNNING ]
check "the 2-node K80 job runs on after k0 and a default cell were deleted" [ "$(state "$k")" = RUNNING ]
wait_state "$w" REJECTED 30 || bad "the waiting M60 job is rejected"
check "its reason: its GPU type is gone ($(reason "$w"))" contains "$(reason "$w")" "GPU type"
check "the daemon logged the GPUs it no longer counts" grep -q "are not in this cluster: it runs on" "$DDIR/daemon.log"
# k1 or k2 still holds the K80 job's remaining task (counted); the default VC's one cell is
# its: a same-priority default job waits; vc1's K80 job starts on the free node
d2=$(gsub --vc default --priority test -C K80 -g 2 -- sh -c "$(task hd)")
v=$(gsub --vc vc1 --priority test -C K80 -g 2 -- sh -c "$(task hv)")
wait_state "$v" RUNNING 30 || bad "a vc1 K80 job starts on the free node"
check "a default job of the same priority waits for the adopted one" [ "$(state "$d2")" = PENDING ]
check "its placement says what is gone ($(field "$k" Placement))" contains "$(field "$k" Placement)" "(+2 gone)"
echo "# restarted again on the same config: the jobs on GPUs that are gone are adopted again"
d_kill9
d_start hived --cluster "$tmp/b.yaml" --policy hived --grace 2s || { bad "second restart"; finish; }
check "the M60 job is still running" [ "$(state "$m")" = RUNNING ]
check "the 2-node K80 job is still running" [ "$(state "$k")" = RUNNING ]
check "the default job still waits" [ "$(state "$d2")" = PENDING ]
release hk
wait_state "$k" DONE 30 || bad "the 2-node job ends when its tasks end (tracked on a vanished node too)"
wait_state "$d2" RUNNING 30 || bad "the default job runs once it ended"
release hm
wait_state "$m" DONE 30 || bad "the M60 job ends when its tasks end (tracked though its chain is gone)"
release hd; release hv
wait_idle 30 || bad "hived idle"
d_stop || bad "hived stop"
d_start hived --cluster "$tmp/b.yaml" --policy hived --grace 2s || { bad "restart on the same config"; finish; }
check "final states kept" [ "$(state "$m")" = DONE ] && [ "$(state "$w")" = REJECTED ]
d_stop || bad "hived final stop"
finish
