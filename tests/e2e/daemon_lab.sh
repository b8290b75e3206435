#!/usr/bin/env bash
# The OpenPAI lab, live: a real `gsched serve` with fake GPUs runs short `sleep` jobs under
# the policies we have and checks what an operator would: FIFO order and head-of-line
# blocking (fifo vs fifo-backfill), preemption by a shorter job (srtf) and by a job with
# less attained service (tiresias-las) with the SIGTERM -> grace -> SIGKILL -> requeue
# protocol and a checkpoint kept across runs, gang scheduling (all tasks together) vs
# incremental, cancel, and restart recovery after kill -9.  The HiveD experiments (VC safety,
# priority and preemption, opportunistic jobs, gang, incremental, gang larger than the VC)
# run when `gsched policies` lists hived, and are skipped otherwise.
# Times are compared only as orderings (never durations), so a slow machine cannot fail it.
# usage: daemon_lab.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

started() { field "$1" Started | awk '{print $1}'; }
ended() { field "$1" Ended | awk '{print $1}'; }
# time of the first event of a type
evtime() {
  "$bin" describe job "$1" --server "$SERVER" 2>/dev/null |
    awk -v t="$2" '/^Events:/ { on = 1; next } on && $2 == t { print $1; exit }'
}
# later-or-equal comparison of two RFC 3339 times of the same format
ge() { [ -n "$1" ] && [ -n "$2" ] && [[ ! "$1" < "$2" ]]; }
lt() { [ -n "$1" ] && [ -n "$2" ] && [[ "$1" < "$2" ]]; }
count_events() { events "$1" | tr ' ' '\n' | grep -c "^$2\$"; }

# A job that checkpoints on SIGTERM and resumes from the checkpoint on its next run.
cat > "$tmp/ckpt.sh" <<'EOF'
ck=$GSCHED_CHECKPOINT_DIR/ckpt-$GSCHED_JOB_ID
if [ -f "$ck" ]; then echo "run $GSCHED_RUN resumed from $(cat "$ck")"; sleep 0.5; exit 0; fi
trap 'echo "run $GSCHED_RUN: SIGTERM, saving checkpoint"; echo "step-42" > "$ck"; exit 0' TERM
echo "run $GSCHED_RUN training"
while :; do sleep 0.1; done
EOF
# A job that ignores SIGTERM (SIG_IGN is inherited by sleep) and finishes on its second run.
cat > "$tmp/stubborn.sh" <<'EOF'
if [ "$GSCHED_RUN" -ge 2 ]; then echo "run $GSCHED_RUN"; exit 0; fi
trap '' TERM
echo "run 1 ignores SIGTERM"
sleep 60
EOF
mkdir -p "$tmp/ck"
# wait_log ID TEXT [TASK]: until the log of the job's task TASK (0) contains TEXT (a job has
# installed its SIGTERM trap once it prints "training" or "ready"; stopping it earlier would
# test nothing)
wait_log() {
  for _ in $(seq 300); do
    contains "$("$bin" logs "$1" --task "${3:-0}" --server "$SERVER" 2>/dev/null)" "$2" && return 0
    sleep 0.1
  done
  echo "  job $1 task ${3:-0}: no '$2' in its log"
  return 1
}
# block FLAG: a command that runs until the test creates FLAG (no timing assumptions)
block() { echo "while [ ! -f '$tmp/$1' ]; do sleep 0.05; done"; }
release() { touch "$tmp/$1"; }

lab_fifo() {
echo "# FIFO: head-of-line blocking"
d_start fifo --cluster 1x2 --policy fifo --grace 1s || { bad "start fifo"; return; }
a=$(gsub -g 1 --name A -- sh -c "$(block fifo-a)")
b=$(gsub -g 2 --name B -- sleep 0.3)
c=$(gsub -g 1 --name C -- sleep 0.3)
wait_state "$a" RUNNING 20 || bad "fifo: A runs"
check "fifo: C waits behind B although a GPU is free" [ "$(state "$c")" = PENDING ]
check "fifo: B is first in line" [ "$(field "$b" Position)" = 1 ]
check "fifo: C is second in line" [ "$(field "$c" Position)" = 2 ]
release fifo-a
wait_idle 30 || bad "fifo idle"
check "fifo: B starts after A ends" ge "$(started "$b")" "$(ended "$a")"
check "fifo: C starts after B ends" ge "$(started "$c")" "$(ended "$b")"
d_stop || bad "graceful stop"

echo "# FIFO with backfill"
d_start backfill --cluster 1x2 --policy fifo-backfill --grace 1s || { bad "start backfill"; return; }
a=$(gsub -g 1 --name A -- sh -c "$(block bf-a)")
b=$(gsub -g 2 --name B -- sleep 0.3)
c=$(gsub -g 1 --name C -- sleep 0.3)
wait_state "$c" DONE 20 || bad "backfill: C done"
check "backfill: C ran while A runs" [ "$(state "$a")" = RUNNING ]
check "backfill: B still waits for A" [ "$(state "$b")" = PENDING ]
release bf-a
wait_idle 30 || bad "backfill idle"
check "backfill: B starts after A and C end" ge "$(started "$b")" "$(ended "$a")"
d_stop || bad "graceful stop"
}

lab_preempt() {
echo "# SRTF: a shorter job preempts a longer one; checkpoint, requeue, resume"
d_start srtf --cluster 1x2 --policy srtf --grace 5s || { bad "start srtf"; return; }
long=$(gsub -g 2 --duration 1h --checkpoint-dir "$tmp/ck" --name long -- sh "$tmp/ckpt.sh")
wait_state "$long" RUNNING 20 || bad "srtf long runs"
wait_log "$long" "run 1 training" || bad "srtf long trains"
check "srtf: the dry run names the job the policy would preempt" contains "$("$bin" submit --dry-run --server "$SERVER" -g 1 --duration 1s -- true)" "would start by preempting job(s) $long ("
check "srtf: a longer job would not preempt it" contains "$("$bin" submit --dry-run --server "$SERVER" -g 1 --duration 2h -- true)" "would wait:"
short=$(gsub -g 1 --duration 1s --name short -- sleep 1)
wait_state "$short" DONE 30 || bad "srtf short done"
wait_state "$long" DONE 30 || bad "srtf long done"
ev=$(events "$long")
check "srtf: long preempted, requeued, resumed, finished" contains "$ev" "started preempted task-exited requeued resumed task-exited finished"
check "srtf: no SIGKILL needed (checkpointed within the grace period)" [ "$(count_events "$long" killed)" = 0 ]
check "srtf: two runs, one preemption" [ "$(field "$long" Runs)" = 2 ] && [ "$(field "$long" Preemptions)" = 1 ]
check "srtf: the short job got the GPUs only after the long job's tasks were gone" ge "$(started "$short")" "$(evtime "$long" requeued)"
check "srtf: long resumed after short finished" ge "$(evtime "$long" resumed)" "$(ended "$short")"
g logs "$long" > "$tmp/long.log"
check "srtf: checkpoint saved on SIGTERM" grep -q "run 1: SIGTERM, saving checkpoint" "$tmp/long.log"
check "srtf: run 2 resumed from the checkpoint" grep -q "run 2 resumed from step-42" "$tmp/long.log"

echo "# SIGKILL after the grace period"
st=$(gsub -g 2 --duration 1h --grace 1s --name stubborn -- sh "$tmp/stubborn.sh")
wait_state "$st" RUNNING 20 || bad "stubborn runs"
sleep 0.3
short=$(gsub -g 1 --duration 1s --name short2 -- sleep 0.5)
wait_state "$st" DONE 40 || bad "stubborn done"
check "grace: SIGKILL after 1s" [ "$(count_events "$st" killed)" = 1 ]
check "grace: requeued and finished in run 2" [ "$(field "$st" Runs)" = 2 ]
check "grace: the short job started only after the kill" ge "$(started "$short")" "$(evtime "$st" killed)"
d_stop || bad "graceful stop"

echo "# Tiresias-LAS: a job with less attained service preempts"
d_start las --cluster 1x4 --policy tiresias-las --set queues=2 --grace 5s || { bad "start las"; return; }
mkdir -p "$tmp/ck-las"
# through a shell that dies of SIGTERM at once (as a string command does): the script it
# started still gets the grace period to checkpoint
big=$(gsub -g 4 --checkpoint-dir "$tmp/ck-las" --name big -- sh -c "sh '$tmp/ckpt.sh'; echo never")
wait_state "$big" RUNNING 20 || bad "las big runs"
wait_log "$big" "run 1 training" || bad "las big trains"
sleep 1.5   # 4 GPUs x 0.5 s passes the 2 GPU-second threshold: demoted
small=$(gsub -g 1 --name small -- sleep 1)
wait_state "$small" DONE 30 || bad "las small done"
wait_state "$big" DONE 30 || bad "las big done"
check "las: big preempted for small and resumed" contains "$(events "$big")" "preempted task-exited requeued resumed"
check "las: small started after big's tasks were gone" ge "$(started "$small")" "$(evtime "$big" requeued)"
check "las: big checkpointed although its shell died at once" contains "$(g logs "$big")" "run 1: SIGTERM, saving checkpoint"
check "las: big resumed from the checkpoint" contains "$(g logs "$big")" "run 2 resumed from step-42"
d_stop || bad "graceful stop"
}

lab_gang_cancel() {
echo "# Gang vs incremental"
d_start gang --cluster 2x2 --policy fifo --grace 1s || { bad "start gang"; return; }
x=$(gsub -g 1 --name X -- sh -c "$(block gang-x)")
gj=$(gsub --tasks 2 -g 2 --name G -- sh -c 'echo "task $GSCHED_TASK_INDEX of $GSCHED_WORLD_SIZE rank $RANK master $MASTER_ADDR:$MASTER_PORT"; sleep 0.3')
wait_state "$x" RUNNING 20 || bad "gang: X runs"
check "gang: waits while one GPU is taken" [ "$(state "$gj")" = PENDING ]
"$bin" logs "$gj" --server "$SERVER" > /dev/null 2>&1
check "gang: no task started early (logs: not found)" [ $? = 4 ]
release gang-x
wait_state "$gj" DONE 30 || bad "gang done"
check "gang: starts after X ends" ge "$(started "$gj")" "$(ended "$x")"
check "gang: one start for both tasks" [ "$(count_events "$gj" started)" = 1 ]
t0=$(g logs "$gj" --task 0) t1=$(g logs "$gj" --task 1)
check "gang: task 0 of 2" contains "$t0" "task 0 of 2 rank 0 master 127.0.0.1:"
check "gang: task 1 of 2" contains "$t1" "task 1 of 2 rank 1 master 127.0.0.1:"
x=$(gsub -g 1 --name X2 -- sh -c "$(block inc-x)")
inc=$(gsub --tasks 2 -g 2 --no-gang --name I -- sh -c "$(block inc-i)")
second=$((inc + 1))
wait_state "$inc" RUNNING 20 && ok "incremental: one part runs at once" || bad "incremental: one part runs at once"
check "incremental: the other part waits" [ "$(state "$second")" = PENDING ]
release inc-i
release inc-x
wait_state "$second" DONE 30 || bad "incremental done"
first_free=$(printf '%s\n%s\n' "$(ended "$inc")" "$(ended "$x")" | sort | head -1)
check "incremental: second part starts once GPUs free up" ge "$(started "$second")" "$first_free"

echo "# Cancel"
# R handles SIGTERM at once; its grace period is long so that a loaded machine cannot turn
# the clean exit into a SIGKILL (which would add a "killed" event); it is stopped only once
# both tasks have set their trap
r=$(gsub --tasks 2 -g 2 --grace 120s --name R -- sh -c 'trap "echo bye; exit 0" TERM; echo ready; while :; do sleep 0.1; done')
p=$(gsub --tasks 2 -g 2 --name P -- true)
wait_state "$r" RUNNING 20 || bad "cancel: R runs"
wait_log "$r" ready 0 || bad "cancel: R task 0 ready"
wait_log "$r" ready 1 || bad "cancel: R task 1 ready"
g cancel "$p" > /dev/null
check "cancel: a pending job ends at once" [ "$(state "$p")" = CANCELLED ]
g cancel "$r" > /dev/null
wait_state "$r" CANCELLED 20 || bad "cancel: R cancelled"
check "cancel: SIGTERM handled" contains "$(g logs "$r")" "bye"
check "cancel: events" contains "$(events "$r")" "cancel-requested task-exited task-exited cancelled"
after=$(gsub --tasks 2 -g 2 --name after -- true)
wait_state "$after" DONE 20 && ok "cancel: GPUs free again" || bad "cancel: GPUs free again"
d_stop || bad "graceful stop"
}

lab_recover() {
echo "# Restart recovery after kill -9"
d_start recover --cluster 1x2 --grace 1s || { bad "start recover"; return; }
# R runs until the test lets it finish, after the restart (so it is adopted while it runs);
# Q runs until the test lets it finish while no daemon watches (so its exit status is only
# in its status file)
rj=$(gsub -g 1 --name R -- sh -c "echo \"start \$GSCHED_RUN\"; $(block rec-r); echo finished")
qj=$(gsub -g 1 --name Q -- sh -c "$(block rec-q); exit 3")
pj=$(gsub -g 2 --name P -- sleep 0.2)
wait_state "$rj" RUNNING 20 || bad "recover: R runs"
wait_state "$qj" RUNNING 20 || bad "recover: Q runs"
d_kill9
rpid=$(cut -d' ' -f1 "$DDIR"/gsched.d/runs/"$rj".1/task-0.pid)
check "recover: R's task survives the daemon" kill -0 "$rpid"
release rec-q   # Q ends while no daemon watches: its shim writes the status file
qstatus=$DDIR/gsched.d/runs/$qj.1/task-0.status
# (the shim writes a placeholder at start: the exit code is the number that replaces it)
for _ in $(seq 300); do grep -qs '^[0-9]' "$qstatus" && break; sleep 0.1; done
check "recover: Q ended while no daemon watched" grep -qs '^[0-9]' "$qstatus"
d_start recover --cluster 1x2 --grace 1s || { bad "restart recover"; return; }
check "recover: R adopted, still running" [ "$(state "$rj")" = RUNNING ]
check "recover: adopted event" contains "$(events "$rj")" "adopted"
wait_state "$qj" FAILED 20 || bad "recover: Q's exit status read from its status file"
check "recover: Q's exit code kept" [ "$(field "$qj" 'Exit code')" = 3 ]
check "recover: P waits while R runs" [ "$(state "$pj")" = PENDING ]
release rec-r
wait_state "$pj" DONE 30 || bad "recover: P done"
check "recover: R finished in its first run" [ "$(field "$rj" Runs)" = 1 ] && [ "$(state "$rj")" = DONE ]
check "recover: P started only after R ended" ge "$(started "$pj")" "$(ended "$rj")"
check "recover: R ran once" [ "$(g logs "$rj" | grep -c '^start ')" = 1 ]
d_stop || bad "graceful stop"
}

ca=$src/tests/scenarios/clusters/lab-config-a.yaml
cb=$src/tests/scenarios/clusters/lab-config-b.yaml

# Each HiveD experiment checks what the simulator scenario of the same name expects
# (tests/scenarios/lab-*.yaml), with orderings instead of times.
hived_safety_priority() {
  echo "# HiveD VC safety (lab-1-vc-safety.yaml)"
  d_start hived-safety --cluster "$ca" --policy hived --grace 5s || { bad "start hived"; return; }
  j1=$(gsub --vc vc1 --priority prod -g 1 -- sh -c "$(block safe-1)")
  j2=$(gsub --vc vc1 --priority prod -g 1 -- sleep 0.3)
  j3=$(gsub --vc vc1 --priority prod -g 1 -- sleep 0.3)
  wait_state "$j1" RUNNING 20 || bad "vc safety: job 1 runs"
  check "vc safety: running [1], waiting [2, 3]" [ "$(state "$j2")" = PENDING ] && [ "$(state "$j3")" = PENDING ]
  check "vc safety: default's GPU (Carol) stays idle" [ "$(g nodes --no-headers | awk '$1 == "hostname-carol" { print $4 }')" = 0 ]
  check "vc safety: queue positions 1, 2 in vc1" [ "$(field "$j2" Position)" = 1 ] && [ "$(field "$j3" Position)" = 2 ]
  check "vc safety: hived names the queue and its order" contains "$(g describe job "$j3")" "position 2 in VC vc1 (by priority, then submission)"
  release safe-1
  wait_state "$j3" DONE 30 || bad "vc safety: done"
  for j in $j1 $j2 $j3; do
    check "vc safety: job $j ran on vc1's node" [ "$(field "$j" Placement)" = "hostname-dan:0" ]
  done
  check "vc safety: one at a time (2 after 1)" ge "$(started "$j2")" "$(ended "$j1")"
  check "vc safety: one at a time (3 after 2)" ge "$(started "$j3")" "$(ended "$j2")"

  echo "# HiveD priority and preemption (lab-2-priority-preemption.yaml)"
  mkdir -p "$tmp/ck-prio"
  t=$(gsub --vc vc1 --priority test -g 1 --checkpoint-dir "$tmp/ck-prio" --name test -- sh "$tmp/ckpt.sh")
  wait_state "$t" RUNNING 20 || bad "priority: test runs"
  wait_log "$t" "run 1 training" || bad "priority: test trains"
  pr=$(gsub --vc vc1 --priority prod -g 1 --name prod -- sh -c "$(block prio-prod)")
  wait_state "$pr" RUNNING 30 || bad "priority: prod runs without waiting for the test job"
  check "priority: running [prod], waiting [test]" [ "$(state "$t")" = PENDING ]
  check "priority: the test job was preempted once" [ "$(field "$t" Preemptions)" = 1 ]
  release prio-prod
  wait_state "$pr" DONE 30 || bad "priority: prod done"
  wait_state "$t" DONE 30 || bad "priority: test done"
  check "priority: test job preempted, requeued, resumed" contains "$(events "$t")" "preempted task-exited requeued resumed"
  check "priority: prod started after the test job stopped" ge "$(started "$pr")" "$(evtime "$t" requeued)"
  check "priority: test resumed after prod ended" ge "$(evtime "$t" resumed)" "$(ended "$pr")"
  check "priority: the test job resumed from its checkpoint" contains "$(g logs "$t")" "resumed from step-42"
  d_stop || bad "graceful stop"
}

hived_oppo() {
  echo "# HiveD opportunistic (lab-3-opportunistic.yaml)"
  d_start hived-oppo --cluster "$ca" --policy hived --grace 5s || { bad "start hived oppo"; return; }
  pa=$(gsub --vc vc1 --priority prod -g 1 --name prod -- sh -c "$(block oppo-pa)")
  wait_state "$pa" RUNNING 20 || bad "oppo: prod runs"
  check "oppo: the prod job runs on vc1's node (Dan)" [ "$(field "$pa" Placement)" = "hostname-dan:0" ]
  mkdir -p "$tmp/ck-oppo"
  op=$(gsub --vc vc1 --priority oppo -g 1 --checkpoint-dir "$tmp/ck-oppo" --name oppo -- sh "$tmp/ckpt.sh")
  wait_state "$op" RUNNING 20 || bad "oppo: runs on another VC's idle GPU"
  wait_log "$op" "run 1 training" || bad "oppo: trains"
  check "oppo: runs on default's GPU (Carol)" [ "$(field "$op" Placement)" = "hostname-carol:0" ]
  tj=$(gsub --vc default --priority test -g 1 --name owner -- sh -c "$(block oppo-owner)")
  wait_state "$tj" RUNNING 30 || bad "oppo: the owner VC's job runs"
  check "oppo: running [prod, owner], waiting [oppo]" [ "$(state "$op")" = PENDING ] && [ "$(state "$pa")" = RUNNING ]
  check "oppo: preempted once by the GPU's owner VC" [ "$(field "$op" Preemptions)" = 1 ]
  check "oppo: owner's job runs on its own GPU" [ "$(field "$tj" Placement)" = "hostname-carol:0" ]
  check "oppo: the owner's job got the GPU after the oppo job's tasks were gone" ge "$(started "$tj")" "$(evtime "$op" requeued)"
  release oppo-owner
  release oppo-pa
  wait_state "$op" DONE 30 || bad "oppo: resumes and finishes"
  check "oppo: preempted, requeued, resumed" contains "$(events "$op")" "preempted task-exited requeued resumed"
  d_stop || bad "graceful stop"
}

hived_gang() {
  echo "# HiveD gang (lab-4-gang.yaml) and incremental (lab-5-incremental.yaml), config B"
  d_start hived-gang --cluster "$cb" --policy hived --grace 5s || { bad "start hived gang"; return; }
  x=$(gsub --priority prod -g 1 -- sh -c "$(block hg-x)")
  gj=$(gsub --priority prod --tasks 2 -g 1 -- sleep 0.3)
  wait_state "$x" RUNNING 20 || bad "hived gang: X runs"
  check "hived gang: running [5], waiting [6] although one GPU is free" [ "$(state "$gj")" = PENDING ]
  "$bin" logs "$gj" --server "$SERVER" > /dev/null 2>&1
  check "hived gang: no task started early (logs: not found)" [ $? = 4 ]
  release hg-x
  wait_state "$gj" DONE 30 || bad "hived gang done"
  check "hived gang: starts after the first job" ge "$(started "$gj")" "$(ended "$x")"
  check "hived gang: one start" [ "$(count_events "$gj" started)" = 1 ]
  check "hived gang: both nodes" [ "$(field "$gj" Placement)" = "hostname-carol:0 hostname-dan:0" ]
  x=$(gsub --priority prod -g 1 -- sh -c "$(block hi-x)")
  wait_state "$x" RUNNING 20 || bad "hived incremental: X runs"
  inc=$(gsub --priority prod --tasks 2 -g 1 --no-gang -- sh -c "$(block hi-i)")
  wait_state "$inc" RUNNING 20 && ok "hived incremental: one part starts at once on the free GPU" || bad "hived incremental: one part starts at once on the free GPU"
  check "hived incremental: running [5, 7], waiting [8]" [ "$(state $((inc + 1)))" = PENDING ] && [ "$(state "$x")" = RUNNING ]
  release hi-x
  wait_state $((inc + 1)) RUNNING 30 || bad "hived incremental: the second part starts when X ends"
  check "hived incremental: second part started after X ended" ge "$(started $((inc + 1)))" "$(ended "$x")"
  check "hived incremental: the first part still runs" [ "$(state "$inc")" = RUNNING ]
  release hi-i
  wait_state $((inc + 1)) DONE 30 || bad "hived incremental done"
  wait_state "$inc" DONE 30 || bad "hived incremental: first part done"
  d_stop || bad "graceful stop"
}

hived_quota() {
  echo "# HiveD gang larger than its VC (lab-6-gang-quota.yaml)"
  d_start hived-quota --cluster "$ca" --policy hived --grace 5s || { bad "start hived quota"; return; }
  out=$("$bin" submit --server "$SERVER" --vc vc1 --priority prod --tasks 2 -g 1 -- true 2>&1)
  check "gang larger than VC: rejected (exit 2)" [ $? = 2 ]
  check "gang larger than VC: says why" contains "$out" "exceeds the 1 GPUs guaranteed to VC 'vc1'"
  inc=$(gsub --vc vc1 --priority prod --tasks 2 -g 1 --no-gang -- sleep 0.3)
  wait_state $((inc + 1)) DONE 30 || bad "non-gang in vc1 done"
  check "non-gang in vc1: first part on vc1's node" [ "$(field "$inc" Placement)" = hostname-dan:0 ]
  check "non-gang in vc1: second part on vc1's node" [ "$(field $((inc + 1)) Placement)" = hostname-dan:0 ]
  check "non-gang in vc1: one part at a time" ge "$(started $((inc + 1)))" "$(ended "$inc")"
  d_stop || bad "graceful stop"
}

lab_fifo
lab_preempt
lab_gang_cancel
lab_recover
# The HiveD experiments of OpenPAI lab 6 need the hived policy.
if "$bin" policies | grep -q '^hived '; then
  hived_safety_priority
  hived_oppo
  hived_gang
  hived_quota
else
  echo "ok - # SKIP HiveD experiments: 'gsched policies' does not list hived"
fi
finish
