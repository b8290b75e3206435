#!/usr/bin/env bash
# Job control (issue 16, What to build 6): `gsched hold` of a job already in its policy's
# queue (the engine withdraws it: it never starts while held, runs once released, stays held
# across a restart), refused with a clear 409 under a policy that cannot take a queued job
# back (gandiva); `gsched requeue [--hold]` of a running job (SIGTERM: it checkpoints; back to
# the queue and run again, or held until released; owner or admin only); `gsched update`
# (scontrol update: rights, submit's validation, a queued job queued again, a running job's
# time limit, durable across a restart).
# usage: jobctl.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

A=alice.alice-secret-0123456789
B=bob.bob-secret-0123456789abc
R=root.root-secret-0123456789ab
tok=$tmp/tokens
{ "$bin" token hash --user alice --token "$A" --iterations 1000
  "$bin" token hash --user bob --token "$B" --iterations 1000
  "$bin" token hash --user root --admin --token "$R" --iterations 1000; } > "$tok" 2>/dev/null
chmod 600 "$tok"

serve_args=(--cluster 1x2 --grace 1s --tokens "$tok" --listen 127.0.0.1:0)
d_start jc "${serve_args[@]}" || { bad "daemon start"; finish; }
as() { local t=$1 c=$2; shift 2; "$bin" "$c" --server "$SERVER" --token "$t" "$@"; }
asub() { as "$A" submit --parsable "$@"; }
st() { as "$R" describe job "$1" 2>/dev/null | awk '/^State:/ { print $2; exit }'; }
ws() { # wait for a state (bounded)
  local id=$1 want=$2 secs=${3:-30} s=""
  for _ in $(seq $((secs * 10))); do
    s=$(st "$id")
    [ "$s" = "$want" ] && return 0
    sleep 0.1
  done
  bad "job $id: state '$s' after ${secs}s, wanted $want"
  return 1
}
reason() { as "$R" queue -o '%i %r' --no-headers 2>/dev/null | awk -v id="$1" '$1 == id { print $2 }'; }
pos() { as "$R" queue | awk -v id="$1" '$1 == id { print $NF }'; }

# ---- hold of a queued job: taken out of the queue, never starts, runs once released
blk=$(asub --gpus 2 -- sh -c "while [ ! -f '$tmp/go-blk' ]; do sleep 0.05; done")
ws "$blk" RUNNING
q1=$(asub --gpus 1 -- true)
q2=$(asub --gpus 1 -- sh -c "while [ ! -f '$tmp/go-q2' ]; do sleep 0.05; done")
sleep 0.3
check "queued first (got '$(pos "$q1")')" [ "$(pos "$q1")" = 1 ]
expect 4 "no job $q1" -- as "$B" hold "$q1"
check "another user's hold changed nothing" [ "$(pos "$q1")" = 1 ]
expect 0 "Held job $q1" -- as "$A" hold "$q1"
check "held: JobHeldUser (got '$(reason "$q1")')" [ "$(reason "$q1")" = JobHeldUser ]
check "held: no queue position (got '$(pos "$q1")')" [ "$(pos "$q1")" = - ]
check "the next job moved up (got '$(pos "$q2")')" [ "$(pos "$q2")" = 1 ]
vcpend() { as "$R" vcs --no-headers | awk -v v="$1" '$1 == v { print $5 }'; }
check "the VC counts one pending job, not the held one (got '$(vcpend default)')" [ "$(vcpend default)" = 1 ]
check "a 'held' event says it left the queue" \
  bash -c "'$bin' describe job '$q1' --server '$SERVER' --token '$A' | grep -q 'taken out of the queue'"
touch "$tmp/go-blk"
ws "$q2" RUNNING
sleep 0.5 # a GPU is free: only the hold keeps q1 waiting
check "a held job does not start on a free GPU" [ "$(st "$q1")" = PENDING ]
# ---- the hold survives a restart
d_stop || bad "graceful stop"
d_start jc "${serve_args[@]}" || { bad "restart"; finish; }
sleep 0.3
check "still held after a restart (got '$(reason "$q1")')" [ "$(reason "$q1")" = JobHeldUser ]
check "... and PENDING" [ "$(st "$q1")" = PENDING ]
expect 0 "Released job $q1" -- as "$A" release "$q1"
ws "$q1" DONE
touch "$tmp/go-q2"
ws "$q2" DONE

# ---- update (scontrol update): rights, revalidation, a queued job queued again, durable
fld() { as "$R" describe job "$1" 2>/dev/null | awk -v k="$2" 'index($0, k) == 1 { sub(k " *", ""); print; exit }'; }
blk=$(asub --gpus 2 -t 30 -- sh -c "while [ ! -f '$tmp/go-blk3' ]; do sleep 0.05; done")
ws "$blk" RUNNING
# a held singleton job is asked again at its release: another job of its name queued meanwhile
sb=$(asub --gpus 1 --name solo -d singleton -- true)
sleep 0.3
check "singleton job queued (got '$(pos "$sb")')" bash -c "[[ '$(pos "$sb")' =~ ^[0-9]+$ ]]"
expect 0 "Held job $sb" -- as "$A" hold "$sb"
sc=$(asub --gpus 1 --name solo -d singleton -- true)
sleep 0.3
check "its namesake queued while it is held (got '$(pos "$sc")')" bash -c "[[ '$(pos "$sc")' =~ ^[0-9]+$ ]]"
expect 0 "Released job $sb" -- as "$A" release "$sb"
sleep 0.3
check "released, it waits for its namesake: Dependency (got '$(reason "$sb")')" [ "$(reason "$sb")" = Dependency ]
as "$A" cancel "$sb" "$sc" > /dev/null 2>&1
u=$(asub --gpus 1 --name first -q 5 -- true)
u2=$(asub --gpus 1 -- true)
sleep 0.3
check "u queued first (got '$(pos "$u")')" [ "$(pos "$u")" = 1 ]
expect 4 "no job $u" -- as "$B" update "$u" priority=1
expect 1 "only an admin can raise a job's priority" -- as "$A" update "$u" priority=9
check "a refused raise changed nothing (got '$(fld "$u" Priority:)')" bash -c "[[ '$(fld "$u" Priority:)' == 5* ]]"
expect 2 "unknown key 'color'" -- as "$A" update "$u" color=red
expect 2 "needs a job id" -- as "$A" update priority=1
expect 2 "could never run here" -- as "$A" update "$u" gpus=3
expect 2 "not a GPU count" -- as "$A" update "$u" gpus=0
expect 0 "Updated job $u: priority 5 -> 2, time limit UNLIMITED -> 10m00s, gpus 1 -> 2, name first -> renamed" -- \
  as "$A" update "$u" priority=2 timelimit=10 gpus=2 name=renamed
check "updated: name (got '$(fld "$u" Name:)')" [ "$(fld "$u" Name:)" = renamed ]
check "updated: 1 x 2 GPUs (got '$(fld "$u" Tasks:)')" bash -c "[[ '$(fld "$u" Tasks:)' == '1 x 2 GPU(s)'* ]]"
check "queued again (got '$(pos "$u")')" bash -c "[[ '$(pos "$u")' =~ ^[0-9]+$ ]]"
evu=$(as "$A" describe job "$u" 2>/dev/null | sed -n '/^Events/,$p' | awk 'NR > 2 { print $2 }' | tr '\n' ' ')
check "events: 'submitted' once, the arrival after the update is 'queued' (got '$evu')" \
  bash -c "[ \"\$(grep -o submitted <<< \"\$1\" | wc -l)\" = 1 ] && grep -q 'updated queued' <<< \"\$1\"" _ "$evu"
check "an 'updated' event says what changed" \
  bash -c "as() { :; }; '$bin' describe job '$u' --server '$SERVER' --token '$A' | grep -q 'updated .*by alice: priority 5 -> 2'"
expect 0 "Updated job $u: priority 2 -> 10" -- as "$R" update jobid="$u" priority=10
expect 0 "Updated job $u: vc default -> research" -- as "$A" update "$u" partition=research
check "moved VC (got '$(fld "$u" VC:)')" [ "$(fld "$u" VC:)" = research ]
check "VC counts follow the move (got default=$(vcpend default) research=$(vcpend research))" \
  [ "$(vcpend default)" = 1 ] && [ "$(vcpend research)" = 1 ]
expect 0 "nothing changed" -- as "$A" update "$u" vc=research
# a running job: only its time limit; lowering it is the owner's right, raising an admin's
expect 1 "only its time limit can change while it runs" -- as "$A" update "$blk" name=x
expect 0 "time limit 30m00s -> 20m00s" -- as "$A" update "$blk" timelimit=20
expect 1 "only an admin can raise the time limit" -- as "$A" update "$blk" timelimit=UNLIMITED
expect 0 "time limit 20m00s -> 25m00s" -- as "$R" update "$blk" timelimit=25
# a held job: changed where it waits, still held
hj=$(asub --gpus 1 --hold -- true)
expect 0 "gpus 1 -> 2" -- as "$A" update "$hj" gpus=2
check "still held (got '$(reason "$hj")')" [ "$(reason "$hj")" = JobHeldUser ]
# durable: the spec and columns after a restart
before="$(fld "$u" Name:)|$(fld "$u" VC:)|$(fld "$u" Priority:)|$(fld "$u" Tasks:)|$(fld "$u" 'Time limit:')"
d_stop || bad "graceful stop"
d_start jc "${serve_args[@]}" || { bad "restart"; finish; }
after="$(fld "$u" Name:)|$(fld "$u" VC:)|$(fld "$u" Priority:)|$(fld "$u" Tasks:)|$(fld "$u" 'Time limit:')"
check "after a restart: name, VC, priority, GPUs, time limit as updated (got '$after')" \
  bash -c "[ '$after' = '$before' ] && [[ '$after' == renamed\|research\|10* ]] && [[ '$after' == *'|600s' ]]"
check "after a restart: the running job's new limit (got '$(fld "$blk" 'Time limit:')')" [ "$(fld "$blk" 'Time limit:')" = 1500s ]
check "after a restart: the held job still held, 2 GPUs" \
  bash -c "[ '$(reason "$hj")' = JobHeldUser ] && [[ '$(fld "$hj" Tasks:)' == '1 x 2 GPU(s)'* ]]"
touch "$tmp/go-blk3"
ws "$u" DONE
as "$A" cancel "$hj" > /dev/null 2>&1
ws "$u2" DONE

# ---- requeue: the stop protocol (SIGTERM: the job checkpoints), back to the queue, runs again
cat > "$tmp/ckpt.sh" <<'SH'
#!/bin/sh
# one line per run; SIGTERM writes a checkpoint line and exits 143
d=$1
trap 'echo ckpt >> "$d/runs-$GSCHED_JOB_ID"; exit 143' TERM
echo run >> "$d/runs-$GSCHED_JOB_ID" # after the trap: a SIGTERM right after it checkpoints
while [ ! -f "$d/go-$GSCHED_JOB_ID" ]; do sleep 0.05; done
SH
chmod +x "$tmp/ckpt.sh"
nruns() { grep -c '^run' "$tmp/runs-$1" 2>/dev/null || echo 0; }
r=$(asub --gpus 1 -- "$tmp/ckpt.sh" "$tmp")
ws "$r" RUNNING
for _ in $(seq 100); do [ "$(nruns "$r")" = 1 ] && break; sleep 0.05; done
expect 4 "no job $r" -- as "$B" requeue "$r"
expect 0 "Requeued job $r" -- as "$A" requeue "$r"
for _ in $(seq 300); do [ "$(nruns "$r")" = 2 ] && break; sleep 0.1; done
check "requeued: it checkpointed on SIGTERM and ran again" \
  [ "$(tr '\n' ' ' < "$tmp/runs-$r")" = "run ckpt run " ]
ws "$r" RUNNING
evs=$(as "$A" describe job "$r" 2>/dev/null)
check "events: preempted (requeued by alice), then requeued" \
  bash -c "grep -Eq '^ *[^ ]+ +preempted +requeued by alice' <<< \"\$1\" &&
           grep -Eq '^ *[^ ]+ +requeued ' <<< \"\$1\"" _ "$evs"
check "describe counts two runs" bash -c "grep -Eq '^Runs: +2' <<< \"\$1\"" _ "$evs"
# ---- requeue --hold: stopped, then held (never restarted) until released
expect 0 "Requeued job $r, held" -- as "$A" requeue --hold "$r"
for _ in $(seq 100); do [ "$(reason "$r")" = JobHeldUser ] && break; sleep 0.1; done
check "requeue --hold: held once stopped (got '$(reason "$r")')" [ "$(reason "$r")" = JobHeldUser ]
sleep 0.5
check "... and not started again" [ "$(nruns "$r")" = 2 ]
expect 1 "only running jobs can be requeued" -- as "$A" requeue "$r"
expect 0 "Released job $r" -- as "$R" release "$r"
ws "$r" RUNNING
touch "$tmp/go-$r"
ws "$r" DONE
check "three runs in all" [ "$(nruns "$r")" = 3 ]
expect 1 "is DONE: only running jobs" -- as "$A" requeue "$r"
expect 2 "not a job id" -- as "$A" requeue x1

# ---- update and requeue name array elements as ARRAY_TASK (123_7), like hold and cancel;
# a value JSON cannot carry is refused, not dropped; a body with a repeated key is 400
arr=$(asub --gpus 1 --array 0-1%1 -- sh -c "while [ ! -f '$tmp/go-arr' ]; do sleep 0.05; done")
ws "$arr" RUNNING
expect 0 "^Updated job ${arr}_1: name" -- as "$A" update "${arr}_1" name=el1
check "the element got the name" bash -c "'$bin' describe job '${arr}_1' --server '$SERVER' --token '$A' | grep -Eq '^Name: +el1$'"
expect 2 "is not valid UTF-8" -- as "$A" update "${arr}_1" name=$'\xff' priority=0
expect 2 "neither a job id" -- as "$A" update "${arr}_" name=x
expect 0 "^Requeued job ${arr}_0 " -- as "$A" requeue "${arr}_0"
expect 2 "not a job id" -- as "$A" requeue "_${arr}"
patch() { curl -s -o "$tmp/patch.out" -w '%{http_code}' -X PATCH -H "Authorization: Bearer $A" \
  -H 'X-Gsched-Client: 1' -H 'Content-Type: application/json' --data-binary "$2" "$SERVER/v1/jobs/$1"; }
check "PATCH with a repeated key: 400" [ "$(patch "${arr}_1" '{"name":"a","name":"b"}')" = 400 ]
check "... and the name stays" bash -c "'$bin' describe job '${arr}_1' --server '$SERVER' --token '$A' | grep -Eq '^Name: +el1$'"
# 288230376151715344 s * 10^6 wraps to exactly 3600 s: too large, not a 1h time limit
check "PATCH with a time limit past 100 years: 400" [ "$(patch "${arr}_1" '{"time_limit":288230376151715344}')" = 400 ]
check "... says so" grep -q "longer than 100 years" "$tmp/patch.out"
check "... and the limit stays" bash -c "! '$bin' describe job '${arr}_1' --server '$SERVER' --token '$A' | grep -q '1h00m'"
touch "$tmp/go-arr"
ws "${arr}_1" DONE
d_stop || bad "graceful stop"

# ---- a policy without on_withdraw refuses, saying why, and the job stays queued
d_start gd --cluster 1x2 --grace 1s --tokens "$tok" --listen 127.0.0.1:0 --policy gandiva ||
  { bad "daemon start (gandiva)"; finish; }
blk=$(asub --gpus 2 -- sh -c "while [ ! -f '$tmp/go-blk2' ]; do sleep 0.05; done")
ws "$blk" RUNNING
q=$(asub --gpus 2 -- true)
sleep 0.3
expect 1 "policy 'gandiva', which cannot take a queued job back out" -- as "$A" hold "$q"
check "refused: not held (got '$(reason "$q")')" [ "$(reason "$q")" != JobHeldUser ]
expect 1 "policy 'gandiva' cannot take a queued job back out" -- as "$A" requeue --hold "$blk"
check "a refused requeue --hold left it running" [ "$(st "$blk")" = RUNNING ]
touch "$tmp/go-blk2"
ws "$q" DONE
d_stop || bad "graceful stop"
finish
