#!/usr/bin/env bash
# Checkpoint-based suspend live (issue 17): `gsched serve --policy gandiva` time-slices two 1-GPU
# jobs on one GPU with the local executor's suspend=cuda, through the fake CUDA driver
# (tests/fake_cuda.c, build/tests/fake-cuda/libcuda.so.1, loaded with cuda_lib=).  Each job's
# shell registers itself with the fake as a CUDA process.  Checks:
#   - the driver calls of each job are lock, checkpoint (then SIGSTOP), restore, unlock, in
#     that order (calls.log); both jobs finish DONE with all their work in one run; the events
#     say "CUDA checkpoint: GPU memory freed" and "checkpointed 1 CUDA process(es)", the
#     metrics count them;
#   - a checkpoint that fails falls back to the stop protocol: SIGTERM (the job saves), then
#     requeued with the reason in `gsched events`; it then runs to completion;
#   - a slow checkpoint (delay_ms) runs on the executor's worker: the daemon answers meanwhile.
# usage: ckpt_suspend.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

if ! "$bin" policies | grep -q '^gandiva '; then
  echo "ok - # SKIP 'gsched policies' does not list gandiva"
  finish
fi
fake=$(dirname "$bin")/tests/fake-cuda/libcuda.so.1
if [ ! -f "$fake" ]; then
  echo "not ok - the fake CUDA library is not built ($fake)"
  exit 1
fi
# the daemon's worker loads the fake, which reads this from the daemon's environment
export GSCHED_FAKE_CUDA_DIR=$tmp/cuda
D=$GSCHED_FAKE_CUDA_DIR
mkdir -p "$D"
args=(--cluster 1x1 --policy gandiva --set quantum=1s --set introspect=1s --grace 3s
      --executor-opt suspend=cuda --executor-opt "cuda_lib=$fake")
# N steps of work by a "CUDA process" (its shell, registered with the fake); each step a line
# "JOB RUN STEP"; on SIGTERM it says "saved" and exits 143 (the checkpoint protocol)
work() {
  echo "trap 'echo saved; exit 143' TERM; echo running > $D/proc.\$\$; echo \"pid \$\$\"; i=0; \
while [ \$i -lt $1 ]; do i=\$((i+1)); echo \"\$GSCHED_JOB_ID \$GSCHED_RUN \$i\"; sleep 0.1; done"
}
# the pid the job's run N registered (its "pid" line)
cpid() { g logs "$1" 2>/dev/null | awk '$1 == "pid" { print $2 }' | sed -n "${2:-1}p"; }
# the driver calls of pid $1 in calls.log (but state queries), as words: "lock checkpoint ..."
calls_of() { awk -v p="$1" '$2 == p && $1 != "state" { printf "%s ", $1 }' "$D/calls.log"; }
# 0 when the calls of pid $1 match the extended regex $2 (whole)
calls_are() {
  local got
  got=$(calls_of "$1")
  [[ $got =~ ^$2$ ]] || { echo "  calls of pid $1: '$got'"; return 1; }
}

d_start ck "${args[@]}" || { bad "daemon start"; finish; }
check "the daemon says suspend uses the CUDA checkpoint" \
  grep -q "suspend: CUDA checkpoint (driver API 13.0" "$DDIR/daemon.log"
a=$(gsub --name A -- sh -c "$(work 30)")
b=$(gsub --name B -- sh -c "$(work 30)")
wait_idle 90 || bad "time-sliced jobs done"
check "time-slicing: both jobs DONE" [ "$(state "$a")" = DONE ] && [ "$(state "$b")" = DONE ]
check "time-slicing: all the work done in one run each" \
  [ "$(g logs "$a" | grep -c "^$a 1 ")" = 30 ] && [ "$(g logs "$b" | grep -c "^$b 1 ")" = 30 ]
ev=$(events "$a")
check "A: suspended, checkpointed, continued, restored" \
  contains "$ev" "suspended checkpointed continued restored"
da=$(g describe job "$a")
check "the suspend event says the GPU memory is freed" contains "$da" "CUDA checkpoint: GPU memory freed on n0:0"
check "... and the checkpoint how many processes" contains "$da" "checkpointed 1 CUDA process(es) in"
check "... and the resume its restore" contains "$da" "restored 1 CUDA process(es) in"
pa=$(cpid "$a") pb=$(cpid "$b")
# every suspend: lock, checkpoint; every resume: restore, unlock - in that order.  (A job may end
# right after its last resume, before the worker restores it: its process is gone by then, the
# event says "no CUDA process to restore", and its calls end with a checkpoint.)
cycle="lock checkpoint restore unlock "
check "A's driver calls: (lock, checkpoint, restore, unlock) x$(calls_of "$pa" | grep -o unlock | wc -l)" \
  calls_are "$pa" "($cycle)+(lock checkpoint )?"
check "B's driver calls: the same order" calls_are "$pb" "($cycle)+(lock checkpoint )?"
met=$(dcurl -s "$URL/metrics")
check "metrics count the checkpoints" grep -Eq '^gsched_ckpt_suspends_total [1-9]' <<< "$met"
check "... and no failure" grep -q '^gsched_ckpt_failures_total 0' <<< "$met"

echo "# a failing checkpoint: SIGTERM, requeue"
echo checkpoint > "$D/fail"
c=$(gsub --name C -- sh -c "$(work 40)")
e=$(gsub --name E -- sh -c "$(work 40)")
seen=""
for _ in $(seq 300); do
  if g events -n 200 --no-headers 2>/dev/null | grep -q "checkpoint-based suspend failed"; then
    seen=1
    break
  fi
  sleep 0.1
done
check "the failed checkpoint is an event" [ -n "$seen" ]
req=""
for _ in $(seq 300); do
  req=$(g events -n 200 --no-headers 2>/dev/null | grep "stopped with SIGTERM and requeued")
  [ -n "$req" ] && break
  sleep 0.1
done
check "the job is requeued with the reason in gsched events" \
  contains "$req" "checkpoint-based suspend failed: checkpoint of pid"
f=$(awk '{ print $5 }' <<< "$req" | head -1) # TIME ID KIND TYPE JOB USER REASON
check "the requeued job saved on SIGTERM (the checkpoint protocol)" \
  [ "$(g logs "$f" 2>/dev/null | grep -c '^saved')" -ge 1 ]
pf=$(cpid "$f")
check "its process was rolled back (lock, checkpoint failed, unlock), never left locked" \
  calls_are "$pf" "lock checkpoint unlock "
: > "$D/fail"
wait_idle 90 || bad "jobs done after the failure"
if [ "$(state "$c")" = DONE ] && [ "$(state "$e")" = DONE ]; then
  ok "both jobs DONE in the end"
else
  bad "both jobs DONE in the end"
  g describe job "$c" | sed 's/^/  /'; g describe job "$e" | sed 's/^/  /'
fi
check "metrics count the failure" grep -Eq '^gsched_ckpt_failures_total [1-9]' <<< "$(dcurl -s "$URL/metrics")"

echo "# a slow checkpoint: the daemon answers meanwhile"
echo 3000 > "$D/delay_ms"
h=$(gsub --name H -- sh -c "$(work 40)")
k=$(gsub --name K -- sh -c "$(work 40)")
inflight=""
for _ in $(seq 300); do
  # the fake logs a checkpoint when it starts it, then sleeps delay_ms
  if [ -n "$(cpid "$h")$(cpid "$k")" ] &&
     grep -Eq "^checkpoint ($(cpid "$h")|$(cpid "$k"))\$" "$D/calls.log"; then
    inflight=1
    break
  fi
  sleep 0.05
done
check "a slow checkpoint started" [ -n "$inflight" ]
t0=$(date +%s%N)
q=$(g queue --no-headers 2>&1)
t1=$(date +%s%N)
check "the daemon answered during it in $(( (t1 - t0) / 1000000 )) ms (under 1.5 s)" \
  [ $(( (t1 - t0) / 1000000 )) -lt 1500 ] && [ -n "$q" ]
: > "$D/delay_ms"
g cancel "$h" "$k" > /dev/null
wait_idle 60 || bad "idle"

echo "# a resume decided while the job's own checkpoint runs: the event says no SIGSTOP follows"
echo 2500 > "$D/delay_ms"
m=$(gsub --name M -- sh -c "$(work 400)")
n=$(gsub --name N -- sh -c "$(work 400)")
# (quantum 1 s, checkpoint 2.5 s: the first job suspended is resumed before its checkpoint ends;
# the other one, waiting for those GPUs, has no CUDA process yet)
# the checkpointed events that follow a 'continued' (no 'suspended' between), per job
after_resume() {
  g describe job "$1" 2>/dev/null |
    awk '/^Events:/ { on = 1; next } on && NF >= 2 && $1 != "TIME" {
           if ($2 == "suspended" || $2 == "continued") last = $2
           else if ($2 == "checkpointed" && last == "continued") print }'
}
ar=""
for _ in $(seq 300); do
  ar=$( (after_resume "$m"; after_resume "$n") | grep "CUDA process(es)")
  [ -n "$ar" ] && break
  sleep 0.1
done
check "a checkpoint of a CUDA process ended after its job was resumed" [ -n "$ar" ]
check "... and its event says no SIGSTOP, the restore follows" \
  contains "$ar" "the job was resumed meanwhile: no SIGSTOP, its restore follows"
[ -n "$ar" ] || { g describe job "$m"; g describe job "$n"; } | sed -n '/^Events/,$p'
: > "$D/delay_ms"
g cancel "$m" "$n" > /dev/null
wait_idle 60 || bad "idle"
sleep 3

echo "# a job that ends (exit 0) while its checkpoint is under way is DONE"
echo 2500 > "$D/delay_ms"
p=$(gsub --name P -- sh -c "$(work 13)")
q=$(gsub --name Q -- sh -c "$(work 5)")
wait_idle 60 || bad "P and Q done"
: > "$D/delay_ms"
check "P was suspended" contains "$(events "$p")" "suspended"
check "P (its work done during the checkpoint) is DONE" [ "$(state "$p")" = DONE ]
check "Q is DONE" [ "$(state "$q")" = DONE ]
# (the worker finishes P's checkpoint before the next section)
sleep 3

echo "# a failing restore: the job is preempted, requeued, and runs again"
r1=$(gsub --name R1 -- sh -c "$(work 30)")
r2=$(gsub --name R2 -- sh -c "$(work 30)")
# once one of them is checkpointed (the worker is done with the jobs before), its restore fails
for _ in $(seq 300); do
  g describe job "$r1" | grep -q "checkpointed 1 CUDA" && break
  g describe job "$r2" | grep -q "checkpointed 1 CUDA" && break
  sleep 0.05
done
echo restore > "$D/fail"
req=""
for _ in $(seq 300); do
  req=$(g events -n 300 --no-headers 2>/dev/null | grep "checkpoint-based resume failed: restore of pid")
  [ -n "$req" ] && break
  sleep 0.1
done
check "the failed restore is an event with the driver's reason" [ -n "$req" ]
: > "$D/fail"
rf=$(awk '{ print $5 }' <<< "$req" | head -1)
check "... and the job was requeued from its own checkpoint" \
  contains "$(g describe job "$rf" 2>/dev/null)" "stopped with SIGTERM and requeued from its own checkpoint"
wait_idle 90 || bad "jobs done after the failed restore"
check "both jobs DONE in the end" [ "$(state "$r1")" = DONE ] && [ "$(state "$r2")" = DONE ]
d_stop || bad "graceful stop"

echo "# two GPUs, three jobs: a suspended job resumes on the other GPU (restore with a remap)"
: > "$D/calls.log"
d_start ck2 --cluster 1x2 --policy gandiva --set quantum=1s --set introspect=1s --grace 3s \
  --executor-opt suspend=cuda --executor-opt "cuda_lib=$fake" || { bad "daemon start"; finish; }
ids=""
for n in X Y Z; do ids="$ids $(gsub --name $n -- sh -c "$(work 40)")"; done
wait_idle 120 || bad "three jobs on two GPUs done"
for id in $ids; do
  check "job $id DONE with all its work in one run" [ "$(g logs "$id" | grep -c "^$id 1 ")" = 40 ]
done
check "a restore moved a job to the other GPU (pairs 0>1 or 1>0 in calls.log)" \
  grep -Eq "^restore [0-9]+ pairs (0>1|1>0)\$" "$D/calls.log"
moved=""
for id in $ids; do
  contains "$(g describe job "$id")" "CUDA restore on n0:" && \
    g describe job "$id" | grep -q "restored 1 CUDA process(es) in .* (on GPUs" && moved=1
done
check "the restored events say on which GPUs" [ -n "$moved" ]
d_stop || bad "graceful stop"
finish
