#!/usr/bin/env bash
# GPU health (issue 17): `gsched serve` on GPUs discovered through a fake libnvidia-ml.so.1
# (tests/fake_nvml.c, build/tests/fake-nvml) whose health a file drives
# (GSCHED_FAKE_NVML_HEALTH, read again at every NVML call).  A critical Xid on the GPU of a
# running job: the GPU is marked bad, the job is preempted (SIGTERM) and requeued with the
# reason in `gsched events`, it restarts on the other GPU and nothing new is placed on the bad
# one; once the Xid is gone and its hold (--gpu-xid-hold) is over the GPU is good again and
# takes jobs.  Uncorrected ECC errors, a lost GPU, pages pending retirement: bad while they
# hold.  --on-gpu-fault keep leaves the job running.  A library without the health functions
# discovers GPUs and turns the watch off with a log line.  A restart measures again (a GPU
# still lost is marked again).  A SIGSTOPped job whose GPU goes bad (it can resume only there)
# is stopped and requeued.  (`gsched gpus`: gpus_cli.sh.)
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

fake=$(dirname "$bin")/tests/fake-nvml
if [ ! -f "$fake/libnvidia-ml.so.1" ]; then
  echo "not ok - no fake NVML library at $fake (built with the tests)"; exit 1
fi
export LD_LIBRARY_PATH=$fake GSCHED_FAKE_NVML="2:NVIDIA H200" GSCHED_FAKE_NVML_HEALTH=$tmp/health
: > "$tmp/health"
host=$(hostname)

expect 2 "not requeue or keep" -- "$bin" serve --on-gpu-fault maybe
expect 0 "gpu-health-interval DUR.off" -- "$bin" serve --help

# ---- a daemon on the discovered GPUs, watched every 200 ms, an Xid held 2 s
d_start gh --gpu-health-interval 200ms --gpu-xid-hold 2s --grace 2s || { bad "daemon start"; finish; }
check "the watch is on" grep -q "GPU health: watching 2 of node $host's GPUs" "$DDIR/daemon.log"
check "... every 200ms (the log says so, not 0s), Xid hold 2s" \
  grep -q "through NVML every 200ms (Xid hold 2s," "$DDIR/daemon.log"

# a job that runs until killed (SIGTERM ends it)
runner() { gsub -G 1 -- sh -c 'while :; do sleep 0.1; done'; }
gpu_of() { field "$1" Placement | sed 's/.*://'; }
gstate() { g describe node "$host" | awk -v l="$1" '$1 == l && $2 ~ /^[0-9]+$/ { print $4 }'; }
wait_gpu() {
  for _ in $(seq 100); do [ "$(gstate "$1")" = "$2" ] && return 0; sleep 0.1; done
  echo "  GPU $1: $(gstate "$1"), wanted $2"; return 1
}
wait_healthy() { # GPU $1 in service again (idle, or allocated to a job)
  for _ in $(seq 100); do
    case $(gstate "$1") in idle | allocated) return 0 ;; esac
    sleep 0.1
  done
  echo "  GPU $1: $(gstate "$1"), wanted idle or allocated"; return 1
}
wait_event() { # wait_event PATTERN: a line of `gsched events -n 200` matches
  for _ in $(seq 100); do g events -n 200 | grep -Eq "$1" && return 0; sleep 0.1; done
  echo "  no event matching '$1':"; g events -n 200 | tail -5; return 1
}

a=$(runner)
check "job a runs" wait_state "$a" RUNNING 30
ga=$(gpu_of "$a")
case $ga in 0) gb=1 ;; 1) gb=0 ;; *) bad "job a's GPU: '$ga'"; finish ;; esac
echo "$ga xid 13" > "$tmp/health" # a program's error: counted, the GPU stays healthy
sleep 1
check "Xid 13 is not held against the GPU" [ "$(gstate "$ga")" = allocated ]
check "job a still runs" [ "$(state "$a")" = RUNNING ]

echo "$ga xid 79" > "$tmp/health"
check "Xid 79: GPU $ga unhealthy" wait_gpu "$ga" unhealthy
check "gpu_bad node event" wait_event "node +gpu_bad +$host .*GPU $ga: Xid 79: GPU has fallen off the bus"
check "job a preempted with the reason" \
  wait_event "preempted +$a .*GPU $host:$ga unhealthy: Xid 79: GPU has fallen off the bus; requeued"
check "job a runs again" wait_state "$a" RUNNING 30
check "... on GPU $gb" [ "$(gpu_of "$a")" = "$gb" ]
expect 0 "^$host .*GPU $ga unhealthy: Xid 79: GPU has fallen off the bus" -- g nodes
expect 0 "GPU $ga unhealthy since .*: Xid 79" -- g describe node "$host"
expect 0 '"reason": "Xid 79: GPU has fallen off the bus"' -- g describe node "$host" --json
expect 0 "gsched_gpu_healthy\\{node=\"$host\",gpu=\"$ga\"\\} 0" -- dcurl -s "$URL/metrics"
expect 0 '"state": *"unhealthy"' -- bash -c "dcurl -s '$URL/v1/cluster' | python3 -m json.tool"
expect 0 '"health_reason": *"Xid 79: GPU has fallen off the bus"' -- bash -c "dcurl -s '$URL/v1/cluster' | python3 -m json.tool"
expect 0 "gsched_gpu_xid_errors_total\\{node=\"$host\",gpu=\"$ga\"\\} [1-9]" -- dcurl -s "$URL/metrics"
b=$(runner)
sleep 1.5 # cycles: b must not be placed on the bad GPU
check "job b waits: nothing new on the bad GPU" [ "$(state "$b")" = PENDING ]
: > "$tmp/health"
check "after the hold GPU $ga is good again" wait_gpu "$ga" allocated
check "gpu_good node event" wait_event "node +gpu_good +$host .*GPU $ga healthy again"
check "job b runs on it" wait_state "$b" RUNNING 30
check "... on GPU $ga" [ "$(gpu_of "$b")" = "$ga" ]
g cancel "$b" > /dev/null
check "b cancelled" wait_state "$b" CANCELLED 30

# ---- uncorrected ECC errors: bad until the count is back (a reset), requeued
gb=$(gpu_of "$a")
echo "$gb ecc 3" > "$tmp/health"
check "ECC: GPU $gb unhealthy" wait_gpu "$gb" unhealthy
expect 0 "GPU $gb unhealthy: ECC: 3 uncorrected error\\(s\\) since the GPU was last healthy" -- g nodes
check "job a preempted for ECC" wait_event "preempted +$a .*ECC: 3 uncorrected"
check "job a runs on the other GPU" wait_state "$a" RUNNING 30
echo "$gb ecc 3" > "$tmp/health"
sleep 0.6
check "the same count keeps it unhealthy" [ "$(gstate "$gb")" = unhealthy ]
: > "$tmp/health" # the count went back to 0: the driver was reloaded / the GPU reset
check "ECC reset: GPU $gb good again" wait_gpu "$gb" idle

# ---- a lost GPU; pages pending retirement; row remapping
ga=$(gpu_of "$a")
echo "$ga lost" > "$tmp/health"
check "lost: GPU $ga unhealthy" wait_gpu "$ga" unhealthy
check "lost: the reason" wait_event "gpu_bad +$host .*GPU $ga: GPU lost \\(GPU is lost\\)"
check "job a runs again" wait_state "$a" RUNNING 30
gb=$(gpu_of "$a")
echo "$gb pending_retire" > "$tmp/health"
check "pending retirement: GPU $gb unhealthy" wait_event "gpu_bad +$host .*GPU $gb: pages pending retirement"
check "lost GPU $ga back once it answers" wait_gpu "$ga" allocated
echo "$ga remap_failure" > "$tmp/health"
check "row remapping failed: GPU $ga unhealthy" wait_event "gpu_bad +$host .*GPU $ga: row remapping failed"
: > "$tmp/health"
check "both good again" wait_healthy "$ga"
check "... both" wait_healthy "$gb"
check "job a runs" wait_state "$a" RUNNING 30
g cancel "$a" > /dev/null
check "a cancelled" wait_state "$a" CANCELLED 30
# health is measured, not stored: a restart finds a GPU still lost and marks it again
echo "1 lost" > "$tmp/health"
check "lost before the restart" wait_gpu 1 unhealthy
d_stop
d_start gh --gpu-health-interval 200ms --gpu-xid-hold 2s --grace 2s || { bad "daemon restart"; finish; }
check "after the restart GPU 1 is unhealthy again" wait_gpu 1 unhealthy
r=$(runner)
check "a new job runs on GPU 0" wait_state "$r" RUNNING 30
check "... GPU 0" [ "$(gpu_of "$r")" = 0 ]
: > "$tmp/health"
check "GPU 1 good again after the restart" wait_healthy 1
g cancel "$r" > /dev/null
check "r cancelled" wait_state "$r" CANCELLED 30
d_stop

# ---- --on-gpu-fault keep: the job runs on, nothing new there
d_start keep --gpu-health-interval 200ms --gpu-xid-hold 1s --on-gpu-fault keep || { bad "daemon start"; finish; }
k=$(runner)
check "job k runs" wait_state "$k" RUNNING 30
gk=$(gpu_of "$k")
echo "$gk xid 48" > "$tmp/health"
check "keep: GPU $gk unhealthy" wait_gpu "$gk" unhealthy
check "keep: the node event" wait_event "gpu_bad +$host .*GPU $gk: Xid 48: double-bit ECC error"
sleep 0.5
check "keep: job k still runs" [ "$(state "$k")" = RUNNING ]
check "keep: not preempted" sh -c "! '$bin' events -n 200 --server '$SERVER' | grep -q 'preempted'"
: > "$tmp/health"
g cancel "$k" > /dev/null
check "k cancelled" wait_state "$k" CANCELLED 30
d_stop

# ---- a SIGSTOPped job whose GPU goes bad: it can resume only there, so it is stopped (SIGTERM)
# and requeued instead of waiting for ever (gandiva time-slicing 3 jobs on 2 GPUs)
: > "$tmp/health"
d_start stuck --gpu-health-interval 200ms --gpu-xid-hold 1s --grace 2s --policy gandiva \
  --set quantum=1s --set introspect=1s --executor-opt suspend=sigstop || { bad "daemon start"; finish; }
w='trap "exit 143" TERM; i=0; while [ $i -lt 100 ]; do i=$((i+1)); sleep 0.1; done'
sa=$(gsub -G 1 --name SA -- sh -c "$w"); sb=$(gsub -G 1 --name SB -- sh -c "$w")
sc=$(gsub -G 1 --name SC -- sh -c "$w")
sj=""
for _ in $(seq 200); do
  for id in $sa $sb $sc; do [ "$(state "$id")" = SUSPENDED ] && sj=$id; done
  [ -n "$sj" ] && break
  sleep 0.05
done
check "stuck: a job is suspended" [ -n "$sj" ]
sg=$(g describe job "$sj" | awk '$2 == "suspended" { l = $0 } END { print l }' | sed -n 's/.* on [^ ]*:\([0-9][0-9]*\).*/\1/p')
check "stuck: the GPU it left ($sg)" [ -n "$sg" ]
echo "$sg lost" > "$tmp/health"
check "stuck: its GPU unhealthy" wait_gpu "$sg" unhealthy
check "stuck: the suspended job is stopped and requeued (gpu-fault event)" \
  wait_event "gpu-fault .*unhealthy: GPU lost.*cannot resume elsewhere"
for _ in $(seq 100); do contains "$(events "$sj")" "requeued" && break; sleep 0.1; done
check "stuck: ... requeued with the reason" \
  bash -c "'$bin' describe job '$sj' --server '$SERVER' | grep -q 'requeued .*GPU lost.*; its suspended job was stopped with SIGTERM and requeued'"
: > "$tmp/health"
wait_idle 60 || bad "stuck: every job ends"
check "stuck: all three DONE" [ "$(state "$sa")$(state "$sb")$(state "$sc")" = DONEDONEDONE ]
d_stop

# ---- off; and a library without the health functions: discovery works, the watch is off
d_start off --gpu-health-interval off || { bad "daemon start"; finish; }
check "off: no watch" sh -c "! grep -q 'GPU health: watching' '$DDIR/daemon.log'"
expect 0 "^$host " -- g nodes
d_stop
LD_LIBRARY_PATH=${fake}-old d_start old || { bad "daemon start (old NVML)"; finish; }
check "old NVML: the watch is off, saying why" \
  grep -q "GPU health: off: NVML library lacks the GPU health functions" "$DDIR/daemon.log"
expect 0 "^$host +idle +2 " -- g nodes
d_stop
finish
