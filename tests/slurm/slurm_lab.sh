#!/usr/bin/env bash
# The OpenPAI lab's HiveD experiments (tests/scenarios/lab-*.yaml, run live on the local
# executor by tests/e2e/daemon_lab.sh) on Slurm: a 4-node x 8-GPU fixture, `gsched serve
# --executor slurm --policy hived` with tests/slurm/clusters/hived-lab.yaml (cells named after
# the Slurm nodes: default = n1+n2, vc2 = n3, vc1 = n4), jobs of whole nodes (8 GPUs).
# VC safety, priority preemption (SIGTERM, checkpoint, requeue into hold, resume), an
# opportunistic job on another VC's idle node preempted by that VC's own job, gang (both
# tasks together in one Slurm job) and incremental (one part at once), and a gang larger than
# its VC (rejected; the non-gang job runs one part at a time inside the VC).  What gsched says
# is checked against what Slurm shows (squeue: state, node list, held while preempted).
# Times are compared only as orderings.
# usage: slurm_lab.sh GSCHED_BIN SOURCE_DIR
bin=$1 src=$2
SLURM_K=1
. "$src/tests/slurm/lib.sh"
s_up

started() { field "$1" Started | awk '{print $1}'; }
ended() { field "$1" Ended | awk '{print $1}'; }
evtime() {
  "$bin" describe job "$1" --server "$SERVER" 2> /dev/null |
    awk -v t="$2" '/^Events:/ { on = 1; next } on && $2 == t { print $1; exit }'
}
ge() { [ -n "$1" ] && [ -n "$2" ] && [[ ! "$1" < "$2" ]]; }
# GPUs gsched has allocated on a node (`gsched nodes`, column ALLOC)
alloc() { g nodes --no-headers | awk -v n="$1" '$1 == n { print $4 }'; }
# nodes Slurm runs jobs on (squeue, RUNNING), sorted, space-separated
srunning_nodes() { squeue -h -t R -o %N | sort | tr '\n' ' '; }
# the Slurm job of gsched job $1 is held: PENDING with priority 0
sheld() {
  local s
  s=$(sjob "$1")
  [ -n "$s" ] && [ "$(sstate "$s")" = PENDING ] && [ "$(sfield "$s" Priority)" = 0 ] && return 0
  echo "  job $1: Slurm job '$s' is '$(sfield "$s" JobState)' with priority '$(sfield "$s" Priority)', reason '$(sfield "$s" Reason)'"
  return 1
}

cat > "$tmp/ckpt.sh" << 'EOF'
ck=$GSCHED_CHECKPOINT_DIR/ckpt-$GSCHED_JOB_ID
if [ -f "$ck" ]; then echo "run $GSCHED_RUN resumed from $(cat "$ck")"; sleep 0.5; exit 0; fi
trap 'echo "run $GSCHED_RUN: SIGTERM, saving checkpoint"; echo "step-42" > "$ck"; exit 0' TERM
echo "run $GSCHED_RUN training"
while :; do sleep 0.1; done
EOF
block() { echo "while [ ! -f '$tmp/$1' ]; do sleep 0.05; done"; }
release() { touch "$tmp/$1"; }

s_start lab --cluster "$src/tests/slurm/clusters/hived-lab.yaml" --policy hived --grace 5s || {
  bad "gsched serve --executor slurm --policy hived did not start"
  finish
}
check "the model is the HiveD config's: 4 nodes x 8 GPUs" [ "$(g nodes --no-headers | awk '{ printf "%s:%s ", $1, $3 }')" = "n1:8 n2:8 n3:8 n4:8 " ]

echo "# HiveD VC safety (lab-1-vc-safety.yaml)"
j1=$(gsub --vc vc1 --priority prod -g 8 -- sh -c "$(block safe-1)")
j2=$(gsub --vc vc1 --priority prod -g 8 -- sleep 0.3)
j3=$(gsub --vc vc1 --priority prod -g 8 -- sleep 0.3)
wait_state "$j1" RUNNING 30 || bad "vc safety: job 1 runs"
check "vc safety: running [1], waiting [2, 3]" [ "$(state "$j2")" = PENDING ] && [ "$(state "$j3")" = PENDING ]
check "vc safety: other VCs' nodes stay idle in gsched" [ "$(alloc n1)$(alloc n2)$(alloc n3)" = 000 ]
check "vc safety: Slurm runs job 1 on n4 only" wait_for 15 '[ "$(srunning_nodes)" = "n4 " ]'
check "vc safety: Slurm's job 1 carries gsched's tag" [ -n "$(sjob "$j1")" ]
check "vc safety: hived names the queue and its order" contains "$(g describe job "$j3")" "position 2 in VC vc1 (by priority, then submission)"
release safe-1
wait_state "$j3" DONE 60 || bad "vc safety: done"
for j in $j1 $j2 $j3; do
  check "vc safety: job $j ran on vc1's node" [ "$(field "$j" Placement)" = "n4:0-7" ]
done
check "vc safety: one at a time (2 after 1)" ge "$(started "$j2")" "$(ended "$j1")"
check "vc safety: one at a time (3 after 2)" ge "$(started "$j3")" "$(ended "$j2")"
check "vc safety: Slurm's jobs ended with their gsched jobs" wait_for 20 '[ -z "$(squeue -h -t R,CG)" ]'

echo "# HiveD priority and preemption (lab-2-priority-preemption.yaml)"
mkdir -p "$tmp/ck-prio"
t=$(gsub --vc vc1 --priority test -g 8 --checkpoint-dir "$tmp/ck-prio" --name test -- sh "$tmp/ckpt.sh")
wait_state "$t" RUNNING 30 || bad "priority: test runs"
wait_log "$t" "run 1 training" || bad "priority: test trains"
pr=$(gsub --vc vc1 --priority prod -g 8 --name prod -- sh -c "$(block prio-prod)")
wait_state "$pr" RUNNING 40 || bad "priority: prod runs without waiting for the test job"
check "priority: running [prod], waiting [test]" [ "$(state "$t")" = PENDING ]
check "priority: the test job was preempted once" [ "$(field "$t" Preemptions)" = 1 ]
check "priority: Slurm holds the preempted job (PENDING, priority 0)" sheld "$t"
check "priority: Slurm runs prod on n4" wait_srun "$pr" n4
release prio-prod
wait_state "$pr" DONE 40 || bad "priority: prod done"
wait_state "$t" DONE 40 || bad "priority: test done"
check "priority: test job preempted, requeued, resumed" contains "$(events "$t")" "preempted task-exited requeued resumed"
check "priority: prod started after the test job stopped" ge "$(started "$pr")" "$(evtime "$t" requeued)"
check "priority: test resumed after prod ended" ge "$(evtime "$t" resumed)" "$(ended "$pr")"
check "priority: the test job checkpointed on SIGTERM" contains "$(g logs "$t")" "run 1: SIGTERM, saving checkpoint"
check "priority: the test job resumed from its checkpoint" contains "$(g logs "$t")" "resumed from step-42"
wait_idle 30 || bad "priority: idle"

echo "# HiveD opportunistic (lab-3-opportunistic.yaml)"
# default's own gang fills n1+n2, so that n3 (vc2's, lab config A's Carol) is the only idle node
fill=$(gsub --vc default --priority prod --tasks 2 -g 8 --name fill -- sh -c "$(block oppo-fill)")
pa=$(gsub --vc vc1 --priority prod -g 8 --name prod -- sh -c "$(block oppo-pa)")
wait_state "$fill" RUNNING 30 || bad "oppo: default's gang runs"
wait_state "$pa" RUNNING 30 || bad "oppo: prod runs"
check "oppo: the prod job runs on vc1's node" [ "$(field "$pa" Placement)" = "n4:0-7" ]
mkdir -p "$tmp/ck-oppo"
op=$(gsub --vc vc1 --priority oppo -g 8 --checkpoint-dir "$tmp/ck-oppo" --name oppo -- sh "$tmp/ckpt.sh")
wait_state "$op" RUNNING 30 || bad "oppo: runs on another VC's idle GPUs"
wait_log "$op" "run 1 training" || bad "oppo: trains"
check "oppo: runs on vc2's GPUs (n3)" [ "$(field "$op" Placement)" = "n3:0-7" ]
check "oppo: Slurm runs it where gsched placed it" wait_srun "$op" n3
tj=$(gsub --vc vc2 --priority test -g 8 --name owner -- sh -c "$(block oppo-owner)")
wait_state "$tj" RUNNING 40 || bad "oppo: the owner VC's job runs"
check "oppo: running [prod, owner], waiting [oppo]" [ "$(state "$op")" = PENDING ] && [ "$(state "$pa")" = RUNNING ]
check "oppo: preempted once by the GPUs' owner VC" [ "$(field "$op" Preemptions)" = 1 ]
check "oppo: the owner's job runs on its own node" [ "$(field "$tj" Placement)" = "n3:0-7" ]
check "oppo: the owner's job got the GPUs after the oppo job's tasks were gone" ge "$(started "$tj")" "$(evtime "$op" requeued)"
check "oppo: Slurm holds the oppo job meanwhile" sheld "$op"
check "oppo: Slurm runs the owner's job on n3" wait_srun "$tj" n3
release oppo-owner
release oppo-pa
release oppo-fill
wait_state "$op" DONE 40 || bad "oppo: resumes and finishes"
check "oppo: preempted, requeued, resumed" contains "$(events "$op")" "preempted task-exited requeued resumed"
check "oppo: resumed from its checkpoint" contains "$(g logs "$op")" "resumed from step-42"
wait_idle 30 || bad "oppo: idle"

echo "# HiveD gang (lab-4-gang.yaml) and incremental (lab-5-incremental.yaml) in default (n1+n2)"
x=$(gsub --vc default --priority prod -g 8 -- sh -c "$(block hg-x)")
gj=$(gsub --vc default --priority prod --tasks 2 -g 8 -- sh -c "echo \"rank \$RANK of \$WORLD_SIZE\"; $(block hg-g)")
wait_state "$x" RUNNING 30 || bad "hived gang: X runs"
sleep 1
check "hived gang: waits although a node of its VC is free" [ "$(state "$gj")" = PENDING ]
check "hived gang: no Slurm job runs for it" eval '[ -z "$(sjob "$gj")" ] || sheld "$gj"'
release hg-x
wait_state "$gj" RUNNING 40 || bad "hived gang runs"
check "hived gang: one Slurm job on both nodes" wait_srun "$gj" "n[1-2]"
release hg-g
wait_state "$gj" DONE 40 || bad "hived gang done"
check "hived gang: starts after the first job" ge "$(started "$gj")" "$(ended "$x")"
check "hived gang: one start" [ "$(events "$gj" | tr ' ' '\n' | grep -c '^started$')" = 1 ]
check "hived gang: both nodes of default" [ "$(field "$gj" Placement)" = "n1:0-7 n2:0-7" ]
check "hived gang: task 1 saw its rank" contains "$(g logs "$gj" --task 1)" "rank 1 of 2"
x=$(gsub --vc default --priority prod -g 8 -- sh -c "$(block hi-x)")
wait_state "$x" RUNNING 30 || bad "hived incremental: X runs"
inc=$(gsub --vc default --priority prod --tasks 2 -g 8 --no-gang -- sh -c "$(block hi-i)")
wait_state "$inc" RUNNING 30 && ok "hived incremental: one part starts at once on the free node" || bad "hived incremental: one part starts at once on the free node"
check "hived incremental: running [X, first], waiting [second]" [ "$(state $((inc + 1)))" = PENDING ] && [ "$(state "$x")" = RUNNING ]
release hi-x
wait_state $((inc + 1)) RUNNING 40 || bad "hived incremental: the second part starts when X ends"
check "hived incremental: second part started after X ended" ge "$(started $((inc + 1)))" "$(ended "$x")"
check "hived incremental: the first part still runs" [ "$(state "$inc")" = RUNNING ]
check "hived incremental: Slurm runs both parts (and X no more)" wait_for 15 '[ "$(squeue -h -t R | wc -l)" = 2 ]'
release hi-i
wait_state $((inc + 1)) DONE 40 || bad "hived incremental done"
wait_state "$inc" DONE 40 || bad "hived incremental: first part done"

echo "# HiveD gang larger than its VC (lab-6-gang-quota.yaml)"
out=$("$bin" submit --server "$SERVER" --vc vc1 --priority prod --tasks 2 -g 8 -- true 2>&1)
check "gang larger than VC: rejected (exit 2)" [ $? = 2 ]
check "gang larger than VC: says why" contains "$out" "exceeds the 8 GPUs guaranteed to VC 'vc1'"
inc=$(gsub --vc vc1 --priority prod --tasks 2 -g 8 --no-gang -- sleep 0.3)
wait_state $((inc + 1)) DONE 60 || bad "non-gang in vc1 done"
check "non-gang in vc1: first part on vc1's node" [ "$(field "$inc" Placement)" = n4:0-7 ]
check "non-gang in vc1: second part on vc1's node" [ "$(field $((inc + 1)) Placement)" = n4:0-7 ]
check "non-gang in vc1: one part at a time" ge "$(started $((inc + 1)))" "$(ended "$inc")"
check "no Slurm job left running" wait_for 20 '[ -z "$(squeue -h -t R,CG)" ]'
d_stop || bad "graceful stop"
finish
