#!/usr/bin/env bash
# Issue 14, live: jobs whose tasks have different sizes (members) inside withinOneCell groups.
# A real `gsched serve --policy hived` with fake GPUs on a HiveD config (2 nodes x 4 GPUs in one
# rack) runs a gang of a 2-GPU task and a 1-GPU task inside one node: each task gets its own
# CUDA_VISIBLE_DEVICES with its own count (and GSCHED_GPUS); `gsched queue` shows GPUS "2+1",
# `describe` lists the members and the group; the same job survives a kill -9 of the daemon
# (adopted running, members and group intact) and a pending one is recovered identically.
# A spec carrying HiveD's own v2 pod-scheduling spec (hived:) runs the same way, VC and
# priority taken from it; HiveD's checks refuse priority 1001 (v1 in the CLI at file:line:col,
# v2 by the daemon) and unknown cell types.
# Under a policy without groups (fifo) the same job is rejected with the engine's reason, and
# bad members / groups are 400 with the field.  Every wait is bounded; daemons are stopped by
# pid (lib/daemon.sh).
# usage: daemon_groups.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

cat > "$tmp/rack.yaml" <<'EOF'
physicalCluster:
  skuTypes:
    V100: {gpu: 1, cpu: 2, memory: 4096Mi}
  cellTypes:
    V100-NODE: {childCellType: V100, childCellNumber: 4, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 2}
  physicalCells:
  - {cellType: V100-RACK, cellChildren: [{cellAddress: n0}, {cellAddress: n1}]}
virtualClusters:
  vc1: {virtualCells: [{cellType: V100-RACK, cellNumber: 1}]}
EOF
# each task says what it got, then waits for the test's flag FILE (no timing assumptions)
task() { echo "echo \"task \$GSCHED_TASK_INDEX gpus \$GSCHED_GPUS cvd \$CUDA_VISIBLE_DEVICES node \$GSCHED_NODE\"; while [ ! -f '$tmp/$1' ]; do sleep 0.05; done"; }
release() { touch "$tmp/$1"; }
# taskline ID T: the "task T gpus ..." line of task T's log
taskline() { g logs "$1" --task "$2" 2>/dev/null | grep "^task $2 " | tail -1; }
wait_taskline() {
  for _ in $(seq 300); do [ -n "$(taskline "$1" "$2")" ] && return 0; sleep 0.1; done
  echo "  job $1 task $2 never reported its GPUs"; return 1
}
ncvd() { taskline "$1" "$2" | sed 's/.* cvd \([^ ]*\) node .*/\1/' | tr ',' '\n' | grep -c .; }
qgpus() { g queue --no-headers -t all | awk -v id="$1" '$1 == id { print $6 }'; }

echo "# hived: a gang of a 2-GPU and a 1-GPU task within one V100-NODE"
d_start hived --cluster "$tmp/rack.yaml" --policy hived --grace 2s || { bad "start hived"; finish; }
j=$(gsub --vc vc1 --priority prod --members 1x2,1x1 --within V100-NODE -- sh -c "$(task g1)")
wait_state "$j" RUNNING 30 || bad "grouped job runs"
wait_taskline "$j" 0 && wait_taskline "$j" 1 || bad "both tasks started"
check "task 0 has 2 GPUs in CUDA_VISIBLE_DEVICES" [ "$(ncvd "$j" 0)" = 2 ]
check "task 1 has 1 GPU in CUDA_VISIBLE_DEVICES" [ "$(ncvd "$j" 1)" = 1 ]
check "GSCHED_GPUS is each task's own count" contains "$(taskline "$j" 0)" "gpus 2 " && contains "$(taskline "$j" 1)" "gpus 1 "
n0=$(taskline "$j" 0 | awk '{print $NF}') n1=$(taskline "$j" 1 | awk '{print $NF}')
check "withinOneCell V100-NODE: both tasks on one node ($n0, $n1)" [ -n "$n0" ] && [ "$n0" = "$n1" ]
c0=$(taskline "$j" 0 | sed 's/.* cvd \([^ ]*\) node .*/\1/') c1=$(taskline "$j" 1 | sed 's/.* cvd \([^ ]*\) node .*/\1/')
check "the tasks' GPUs are distinct ($c0 / $c1)" [ -z "$(comm -12 <(echo "$c0" | tr , '\n' | sort) <(echo "$c1" | tr , '\n' | sort))" ]
check "queue GPUS column: 2+1" [ "$(qgpus "$j")" = "2+1" ]
check "describe: tasks of 2+1 GPUs" contains "$(field "$j" Tasks)" "2, of 2+1 GPU(s) = 3"
check "describe: the group" contains "$(field "$j" 'Group 1')" "tasks 0-1 within one V100-NODE"
api=$(dcurl -s "$URL/v1/jobs/$j")
check "API: members, task_gpus, groups" contains "$api" '"members": "2+1"' && contains "$api" '"task_gpus": [2, 1]' && contains "$api" '"within": "V100-NODE"'
check "API: gpus is the sum" contains "$api" '"gpus": 3,'

echo "# restart recovery of grouped jobs (kill -9)"
# pick FIELDS of a job object (python3): what recovery must keep
pick() { dcurl -s "$URL/v1/jobs/$1" | python3 -c 'import json,sys; o=json.load(sys.stdin); print(json.dumps([o.get(k) for k in ("tasks","gpus_per_task","gpus","members","task_gpus","groups","state")]))'; }
# 4 + 3 GPUs: the 4 fit on the free node, the 3 not on the one with 1 free: it waits
p=$(gsub --vc vc1 --priority prod --members 1x4,1x3 -- sh -c "$(task g2)")
q=$(gsub --vc vc1 --priority test --members 1x2,1x3 --within V100-RACK -- sh -c "$(task g3)")
for _ in $(seq 100); do [ "$(state "$q")" = PENDING ] && break; sleep 0.1; done
check "a 4+3 job waits" [ "$(state "$p")" = PENDING ]
check "pending job's GPUS column: 4+3" [ "$(qgpus "$p")" = "4+3" ]
check "why it waits: 7 GPUs as tasks of 4+3" contains "$(g describe job "$p")" "needs 7 GPU(s) (tasks of 4+3)"
check "pending 2+3 job within V100-RACK waits" [ "$(state "$q")" = PENDING ]
bp=$(pick "$p") bq=$(pick "$q")
d_kill9
d_start hived --cluster "$tmp/rack.yaml" --policy hived --grace 2s || { bad "restart"; finish; }
check "running grouped job adopted after kill -9" [ "$(state "$j")" = RUNNING ] && contains "$(events "$j")" "adopted"
check "recovered: members and group intact" [ "$(qgpus "$j")" = "2+1" ] && contains "$(field "$j" 'Group 1')" "within one V100-NODE"
check "recovered pending job $p identical ($bp)" [ -n "$p" ] && [ "$bp" = "$(pick "$p")" ]
check "recovered pending job $q identical ($bq)" [ -n "$q" ] && [ "$bq" = "$(pick "$q")" ]
release g1
wait_state "$j" DONE 30 || bad "grouped job done after the restart"
wait_state "$p" RUNNING 30 || bad "recovered 4+3 job starts when the first ends"
wait_taskline "$p" 0 && wait_taskline "$p" 1 || bad "4+3: both tasks started"
check "recovered 4+3 job: task 0 has 4 GPUs, task 1 has 3" [ "$(ncvd "$p" 0)" = 4 ] && [ "$(ncvd "$p" 1)" = 3 ]
release g2
wait_state "$q" RUNNING 30 || bad "recovered 2+3 job starts"
wait_taskline "$q" 0 && wait_taskline "$q" 1 || bad "2+3: both tasks started"
check "recovered 2+3 job: task 0 has 2 GPUs, task 1 has 3" [ "$(ncvd "$q" 0)" = 2 ] && [ "$(ncvd "$q" 1)" = 3 ]
release g3
wait_state "$q" DONE 30 || bad "2+3 job done"

echo "# a job spec carrying HiveD's v2 pod-scheduling spec (hived:)"
printf 'while [ ! -f %s ]; do sleep 0.05; done\n' "$tmp/g4" > "$tmp/wait4.sh"
cat > "$tmp/hv2.yaml" <<EOF
name: hv2
command: 'echo "task \$GSCHED_TASK_INDEX gpus \$GSCHED_GPUS cvd \$CUDA_VISIBLE_DEVICES node \$GSCHED_NODE"; sh $tmp/wait4.sh'
hived:
  version: v2
  virtualCluster: vc1
  priority: 1000
  pinnedCellId: ""
  cellType: V100
  cellNumber: 2
  gangReleaseEnable: false
  lazyPreemptionEnable: false
  podRootGroup:
    name: hv2
    withinOneCell: V100-NODE
    pod:
      podMinNumber: 1
      podMaxNumber: 1
      cellsPerPod: {cellType: V100, cellNumber: 2}
      containsCurrentPod: true
    childGroups:
    - name: small
      withinOneCell: ""
      pod:
        podMinNumber: 1
        podMaxNumber: 1
        cellsPerPod: {cellType: V100, cellNumber: 1}
      childGroups: []
EOF
h=$("$bin" submit --parsable --server "$SERVER" "$tmp/hv2.yaml")
check "hived v2 spec accepted" [ -n "$h" ]
wait_state "$h" RUNNING 30 || bad "hived v2 job runs"
wait_taskline "$h" 0 && wait_taskline "$h" 1 || bad "hived v2: both tasks started"
check "hived v2: task 0 has 2 GPUs, task 1 has 1" [ "$(ncvd "$h" 0)" = 2 ] && [ "$(ncvd "$h" 1)" = 1 ]
check "hived v2: withinOneCell V100-NODE: one node" [ -n "$(taskline "$h" 0)" ] && [ "$(taskline "$h" 0 | awk '{print $NF}')" = "$(taskline "$h" 1 | awk '{print $NF}')" ]
api=$(dcurl -s "$URL/v1/jobs/$h")
check "hived v2: VC and priority from the spec, stored verbatim" contains "$api" '"vc": "vc1"' && contains "$api" '"priority": 1000' && contains "$api" '"podRootGroup": {"name": "hv2"'
check "hived v2: members 2+1, group within V100-NODE" contains "$api" '"members": "2+1"' && contains "$api" '"within": "V100-NODE"'
check "hived v2: describe shows the spec's cell type" contains "$(field "$h" 'GPU type')" "V100 (HiveD cellType)"
release g4
wait_state "$h" DONE 30 || bad "hived v2 job done"
# HiveD's own checks: v1 in the CLI (file:line:col), v2 by the daemon (its cluster's cell types)
printf 'command: "true"\nhived:\n  virtualCluster: vc1\n  priority: 1001\n  leafCellType: V100\n  leafCellNumber: 1\n' > "$tmp/v1bad.yaml"
expect 2 "v1bad.yaml:4:13: Priority is greater than 1000" -- "$bin" submit --server "$SERVER" "$tmp/v1bad.yaml"
printf 'command: "true"\nhived: {version: v2, virtualCluster: vc1, priority: 1001, cellType: V100, cellNumber: 1}\n' > "$tmp/v2bad.yaml"
expect 2 "'hived': .*Priority is greater than 1000" -- "$bin" submit --server "$SERVER" "$tmp/v2bad.yaml"
printf 'command: "true"\nhived: {version: v2, virtualCluster: vc1, priority: 1, cellType: K80, cellNumber: 1}\n' > "$tmp/v2k80.yaml"
expect 2 "'K80' is not a cell type of the cluster" -- "$bin" submit --server "$SERVER" "$tmp/v2k80.yaml"
expect 2 "sets this itself" -- "$bin" submit --server "$SERVER" -p vc1 "$tmp/hv2.yaml"
d_stop || bad "graceful stop"

echo "# a policy without groups (fifo) rejects grouped jobs with the engine's reason"
d_start fifo --cluster 2x4:V100 || { bad "start fifo"; finish; }
out=$(dcurl -s -w '\n%{http_code}' -X POST -H 'X-Gsched-Client: 1' -H 'Content-Type: application/json' \
  -d '{"command": "true", "members": [{"tasks": 1, "gpus_per_task": 2}, {"tasks": 1, "gpus_per_task": 1}]}' "$URL/v1/jobs")
check "fifo: 422 GS_ENEVER" [ "$(echo "$out" | tail -1)" = 422 ] && contains "$out" GS_ENEVER
check "fifo: the reason names groups" contains "$out" "group"
rid=$(echo "$out" | sed -n 's/.*"job_id": *\([0-9]*\).*/\1/p' | head -1)
check "fifo: gsched queue -t all shows it rejected with the reason" contains "$(g queue -t all)" "RJ"
check "fifo: describe shows the reason" contains "$(field "$rid" Reason)" "group"
expect 2 "group" -- "$bin" submit --server "$SERVER" --members 1x2,1x1 -- true
echo "# bad members and groups are 400 naming the field"
out=$(dcurl -s -w '\n%{http_code}' -X POST -H 'X-Gsched-Client: 1' -H 'Content-Type: application/json' \
  -d '{"command": "true", "tasks": 2, "members": [{"tasks": 1, "gpus_per_task": 2}]}' "$URL/v1/jobs")
check "tasks with members: 400, field tasks" [ "$(echo "$out" | tail -1)" = 400 ] && contains "$out" '"field": "tasks"'
out=$(dcurl -s -w '\n%{http_code}' -X POST -H 'X-Gsched-Client: 1' -H 'Content-Type: application/json' \
  -d '{"command": "true", "groups": [{"within": "X"}]}' "$URL/v1/jobs")
check "a group without members: 400, field groups" [ "$(echo "$out" | tail -1)" = 400 ] && contains "$out" '"field": "groups"' && contains "$out" "needs 'members' or 'groups'"
expect 2 "members" -- "$bin" submit --members 1x2,0x1 -- true
d_stop || bad "graceful stop"
finish
