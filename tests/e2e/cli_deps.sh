#!/usr/bin/env bash
# Job dependencies and held jobs (issue 11, What to build 7): `gsched submit --dependency` /
# `--hold` with Slurm's meanings, `gsched hold` / `gsched release`, reasons Dependency,
# DependencyNeverSatisfied and JobHeldUser in `gsched queue -o %r`, waiting jobs kept across
# a daemon restart (graceful and kill -9), another user's release refused, unknown or hidden
# job ids refused at submit, positioned syntax errors before anything is sent, and job
# arrays (--array=A-B%N expanded by the daemon, throttle JobArrayTaskLimit, ARRAY_TASK ids,
# compact queue rows, cancel of one element or of the whole array, restart), and the
# singleton dependency.
# usage: cli_deps.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

A=alice.alice-secret-0123456789
B=bob.bob-secret-0123456789abc
tok=$tmp/tokens
{ "$bin" token hash --user alice --token "$A" --iterations 1000
  "$bin" token hash --user bob --token "$B" --iterations 1000; } > "$tok" 2>/dev/null
chmod 600 "$tok"


# syntax errors are the CLI's, with the position, before any daemon is asked
port=$(( (RANDOM % 20000) + 30000 ))
expect 2 "dependency 'afterok:': position 9: expected a job id" -- \
  "$bin" submit --server "http://127.0.0.1:$port" --dependency afterok: -- true
expect 2 "position 1: unknown dependency type 'before'" -- \
  "$bin" submit --server "http://127.0.0.1:$port" -d before:3 -- true
expect 2 "cannot be mixed" -- \
  "$bin" submit --server "http://127.0.0.1:$port" -d afterok:1,afterok:2?afterany:3 -- true

d_start deps --cluster 1x2 --grace 1s --tokens "$tok" --listen 127.0.0.1:0 || { bad "daemon start"; finish; }
# as TOKEN CMD ARGS...: the CLI as that user
as() { local t=$1 c=$2; shift 2; "$bin" "$c" --server "$SERVER" --token "$t" "$@"; }
asub() { as "$A" submit --parsable "$@"; }
ws() { # wait_state with alice's token
  local id=$1 want=$2 secs=${3:-30} s=""
  for _ in $(seq $((secs * 10))); do
    s=$(as "$A" describe job "$id" 2>/dev/null | awk '/^State:/ { print $2; exit }')
    [ "$s" = "$want" ] && return 0
    sleep 0.1
  done
  bad "job $id: state '$s' after ${secs}s, wanted $want"
  return 1
}
reason() { as "$A" queue -o '%i %r' --no-headers 2>/dev/null | awk -v id="$1" '$1 == id { print $2 }'; }
st() { as "$A" describe job "$1" 2>/dev/null | awk '/^State:/ { print $2; exit }'; }

# ---- afterok chain runs in order; the waiting job shows reason Dependency
order=$tmp/order
a=$(asub --gpus 1 -- sh -c "while [ ! -f '$tmp/go-a' ]; do sleep 0.05; done; echo a >> '$order'")
b=$(asub --gpus 1 --dependency "afterok:$a" -- sh -c "echo b >> '$order'")
c=$(asub --gpus 1 -d "afterok:$b" -- sh -c "echo c >> '$order'")
check "chain submitted" [ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ]
ws "$a" RUNNING
sleep 0.5 # a GPU is free: only the dependency keeps b waiting
check "afterok waits with reason Dependency (got '$(reason "$b")')" [ "$(reason "$b")" = Dependency ]
check "the next link waits too" [ "$(reason "$c")" = Dependency ]
check "a waiting job is PENDING" [ "$(st "$b")" = PENDING ]
touch "$tmp/go-a"
ws "$c" DONE
check "the chain ran in order a b c" [ "$(tr '\n' ' ' < "$order")" = "a b c " ]

# ---- afternotok fires only on failure; afterok on a failed job can never be satisfied
f=$(asub --gpus 1 -- sh -c "exit 3")
ws "$f" FAILED
n1=$(asub --gpus 1 --dependency "afternotok:$f" -- true)
ws "$n1" DONE
check "afternotok on a FAILED job runs" [ "$(st "$n1")" = DONE ]
n2=$(asub --gpus 1 --dependency "afternotok:$a" -- true)
k1=$(asub --gpus 1 --dependency "afterok:$f" -- true)
sleep 1
check "afternotok on a DONE job: DependencyNeverSatisfied (got '$(reason "$n2")')" \
  [ "$(reason "$n2")" = DependencyNeverSatisfied ]
check "afterok on a FAILED job: DependencyNeverSatisfied" [ "$(reason "$k1")" = DependencyNeverSatisfied ]
check "... and it stays PENDING" [ "$(st "$k1")" = PENDING ]
expect 0 "Cancelled job $k1" -- as "$A" cancel "$k1"
expect 0 "Cancelled job $n2" -- as "$A" cancel "$n2"
# --kill-on-invalid-dep=yes: cancelled instead (Slurm's option)
kk=$(asub --gpus 1 --dependency "afterok:$f" --kill-on-invalid-dep=yes -- true)
ws "$kk" CANCELLED
kr=$(as "$A" describe job "$kk" 2>/dev/null | awk '/^Reason:/ { print $2; exit }')
check "--kill-on-invalid-dep=yes: CANCELLED, reason DependencyNeverSatisfied (got '$kr')" \
  [ "$kr" = DependencyNeverSatisfied ]
expect 2 "give yes or no" -- as "$A" submit --kill-on-invalid-dep=maybe -- true
# any ('?'): afterok:f can never be, afterany:f is
q=$(asub --gpus 1 --dependency "afterok:$f?afterany:$f" -- true)
ws "$q" DONE
check "'?' = any: one satisfied term suffices" [ "$(st "$q")" = DONE ]

# ---- unknown, hidden ids are refused at submit (400: exit 2)
expect 2 "'dependency': no job 9999" -- as "$A" submit -d afterok:9999 -- true
expect 2 "'dependency': no job $a" -- as "$B" submit -d "afterok:$a" -- true

# ---- hold / release
h=$(asub --gpus 1 --hold -- true)
sleep 0.5
check "a held job: JobHeldUser (got '$(reason "$h")')" [ "$(reason "$h")" = JobHeldUser ]
check "... PENDING although GPUs are free" [ "$(st "$h")" = PENDING ]
expect 4 "no job $h" -- as "$B" release "$h"
check "another user's release changed nothing" [ "$(reason "$h")" = JobHeldUser ]
expect 0 "Released job $h" -- as "$A" release "$h"
ws "$h" DONE
check "released: it ran" [ "$(st "$h")" = DONE ]
expect 1 "is DONE: only pending jobs" -- as "$A" release "$h"
# a job waiting on a dependency can be held (a queued one too: tests/e2e/jobctl.sh)
blk=$(asub --gpus 2 -- sh -c "while [ ! -f '$tmp/go-blk' ]; do sleep 0.05; done")
ws "$blk" RUNNING
qd=$(asub --gpus 1 -- true)
sleep 0.3
expect 1 "is not held" -- as "$A" release "$qd"

# ---- restart while jobs wait on a running job: they keep waiting, then run
w1=$(asub --gpus 1 --dependency "afterok:$blk" -- sh -c "echo w1 >> '$tmp/w'")
w2=$(asub --gpus 1 --dependency "afterany:$blk" -- sh -c "echo w2 >> '$tmp/w'")
expect 0 "Held job $w2" -- as "$A" hold "$w2"
check "held while waiting on a dependency: JobHeldUser" [ "$(reason "$w2")" = JobHeldUser ]
# queue positions: a job waiting on a dependency or held is in no queue yet ('-', as describe
# says); the queued job is first in its queue (the list once numbered the waiting ones too)
pos() { as "$A" queue | awk -v id="$1" '$1 == id { print $NF }'; }
check "waiting on a dependency: no queue position (got '$(pos "$w1")')" [ "$(pos "$w1")" = - ]
check "held: no queue position (got '$(pos "$w2")')" [ "$(pos "$w2")" = - ]
check "the queued job is first in its queue (got '$(pos "$qd")')" [ "$(pos "$qd")" = 1 ]
# jobs that ended before the restart are read from the database after it
r1=$(asub --gpus 1 --hold --dependency "afterok:$a" -- true)
r2=$(asub --gpus 1 --dependency "afterok:$f" -- true)
d_stop || bad "graceful stop"
d_start deps --cluster 1x2 --grace 1s --tokens "$tok" --listen 127.0.0.1:0 || { bad "restart"; finish; }
sleep 0.5
check "after a restart: afterok on a job FAILED before it: DependencyNeverSatisfied" \
  [ "$(reason "$r2")" = DependencyNeverSatisfied ]
expect 0 "Released job $r1" -- as "$A" release "$r1"
sleep 0.3
rr=$(reason "$r1")
check "after a restart: afterok on a job DONE before it is satisfied (queued: '$rr')" \
  [ -n "$rr" ] && [ "$rr" != Dependency ] && [ "$rr" != JobHeldUser ]
check "after a restart: still Dependency (got '$(reason "$w1")')" [ "$(reason "$w1")" = Dependency ]
check "after a restart: still held (got '$(reason "$w2")')" [ "$(reason "$w2")" = JobHeldUser ]
d_kill9
d_start deps --cluster 1x2 --grace 1s --tokens "$tok" --listen 127.0.0.1:0 || { bad "restart after kill -9"; finish; }
sleep 0.5
check "after kill -9: still Dependency" [ "$(reason "$w1")" = Dependency ]
check "after kill -9: still held" [ "$(reason "$w2")" = JobHeldUser ]
check "the blocking job still runs" [ "$(st "$blk")" = RUNNING ]
expect 0 "Released job $w2" -- as "$A" release "$w2"
sleep 0.3
check "released, still waiting on its dependency" [ "$(reason "$w2")" = Dependency ]
touch "$tmp/go-blk"
ws "$w1" DONE
ws "$w2" DONE
check "both ran after the job they waited on" [ "$(sort "$tmp/w" | tr '\n' ' ')" = "w1 w2 " ]
# the qd job (queued behind blk) ran as well
ws "$qd" DONE
ws "$r1" DONE
# events say what happened
ev=$(as "$A" describe job "$w2" 2>/dev/null)
check "events: held, released, eligible" eval 'printf "%s" "$ev" | grep -q held && printf "%s" "$ev" | grep -q released && printf "%s" "$ev" | grep -q eligible'

d_stop || bad "graceful stop"

# ---- job arrays (issue 16): --array 0-9%2 is one submission the daemon expands; at most 2
# elements run or start at once (8 GPUs free), the others wait with reason JobArrayTaskLimit
# and a free place goes to the next element in index order; each element sees its
# GSCHED_ARRAY_* / SLURM_ARRAY_* variables; `queue` lists pending elements as one row
# A_[..]; ARRAY_TASK names one element (describe, cancel); the array id cancels them all;
# the throttle and the array survive kill -9 of the daemon
d_start arr --cluster 1x8 --grace 1s --tokens "$tok" --listen 127.0.0.1:0 || { bad "array daemon"; finish; }
dreason() { as "$A" describe job "$1" 2>/dev/null | awk '/^Reason:/ { print $2; exit }'; }
running() { as "$A" queue -o '%i %t' --no-headers 2>/dev/null | awk '$2 == "R"' | wc -l; }
mkdir -p "$tmp/arr"
aid=$(asub --gpus 1 --array 0-9%2 -- sh -c "echo \$GSCHED_ARRAY_TASK_ID \$GSCHED_ARRAY_JOB_ID \$GSCHED_ARRAY_TASK_COUNT \$SLURM_ARRAY_TASK_ID \$SLURM_ARRAY_JOB_ID > '$tmp/arr/'\$GSCHED_ARRAY_TASK_ID; while [ ! -f '$tmp/go-arr-'\$GSCHED_ARRAY_TASK_ID ]; do sleep 0.05; done")
check "--array --parsable prints the array id (got '$aid')" [ -n "$aid" ] && [ "$aid" -gt 0 ]
ws "${aid}_0" RUNNING
ws "${aid}_1" RUNNING
sleep 0.5 # 6 GPUs are free: only the throttle keeps the others waiting
check "%2: two elements run (got $(running))" [ "$(running)" = 2 ]
check "%2: element 2 waits with reason JobArrayTaskLimit (got '$(dreason "${aid}_2")')" \
  [ "$(dreason "${aid}_2")" = JobArrayTaskLimit ]
check "%2: element 9 too" [ "$(dreason "${aid}_9")" = JobArrayTaskLimit ]
check "element 0 sees GSCHED_ARRAY_TASK_ID/JOB_ID/TASK_COUNT, SLURM_ARRAY_* (got '$(cat "$tmp/arr/0")')" \
  [ "$(cat "$tmp/arr/0")" = "0 $aid 10 0 $aid" ]
check "element 1 sees index 1" [ "$(cut -d' ' -f1-3 "$tmp/arr/1")" = "1 $aid 10" ]
q=$(as "$A" queue --no-headers 2>/dev/null)
check "queue: one row ${aid}_[2-9] for the pending elements" eval 'printf "%s\n" "$q" | grep -q "^ *${aid}_\[2-9\] .*JobArrayTaskLimit"'
check "queue: running elements one row each (${aid}_0, ${aid}_1)" eval 'printf "%s\n" "$q" | grep -q "^ *${aid}_0 " && printf "%s\n" "$q" | grep -q "^ *${aid}_1 "'
check "queue: 3 rows for the array" [ "$(printf '%s\n' "$q" | grep -c "^ *${aid}_")" = 3 ]
check "queue -r: one row per element" [ "$(as "$A" queue -r --no-headers 2>/dev/null | grep -c "^ *${aid}_")" = 10 ]
dj=$(as "$A" describe job "${aid}_2" --json 2>/dev/null)
check "API: array_id and array_task of element 2" eval 'printf "%s" "$dj" | grep -q "\"array_id\": $aid" && printf "%s" "$dj" | grep -q "\"array_task\": 2"'
check "describe A_T: Array line" eval 'as "$A" describe job "${aid}_2" | grep -q "^Array: *${aid}_2 (element 2 of array $aid, 10 elements)"'
# one element cancelled; a free place goes to the next waiting element in index order
expect 0 "Cancelled job ${aid}_3" -- as "$A" cancel "${aid}_3"
check "cancel A_T: only that element" [ "$(st "${aid}_3")" = CANCELLED ] && [ "$(st "${aid}_4")" = PENDING ]
touch "$tmp/go-arr-1"
ws "${aid}_2" RUNNING
sleep 0.3
check "element 1 ended: element 2 runs, element 4 still waits (got '$(dreason "${aid}_4")')" \
  [ "$(dreason "${aid}_4")" = JobArrayTaskLimit ]
check "still two running" [ "$(running)" = 2 ]
expect 4 "no job ${aid}_3" -- as "$B" describe job "${aid}_3"
expect 4 "array $aid has no element 77" -- as "$A" describe job "${aid}_77"
# the daemon is killed: the array and its throttle come back
d_kill9
d_start arr --cluster 1x8 --grace 1s --tokens "$tok" --listen 127.0.0.1:0 || { bad "array restart"; finish; }
sleep 0.5
check "after kill -9: two running (got $(running))" [ "$(running)" = 2 ]
check "after kill -9: element 4 still JobArrayTaskLimit (got '$(dreason "${aid}_4")')" \
  [ "$(dreason "${aid}_4")" = JobArrayTaskLimit ]
touch "$tmp/go-arr-0"
ws "${aid}_4" RUNNING
check "after kill -9: the next element in index order took the place" [ "$(dreason "${aid}_5")" = JobArrayTaskLimit ]
# an element by ARRAY_TASK: hold / release (scontrol hold 123_6), logs
expect 0 "Held job ${aid}_6" -- as "$A" hold "${aid}_6"
check "a held element: JobHeldUser (got '$(dreason "${aid}_6")')" [ "$(dreason "${aid}_6")" = JobHeldUser ]
expect 0 "Released job ${aid}_6" -- as "$A" release "${aid}_6"
check "released: back to JobArrayTaskLimit" [ "$(dreason "${aid}_6")" = JobArrayTaskLimit ]
expect 0 "job $aid run 1 task 0 started" -- as "$A" logs "${aid}_0"
# the array's id cancels all of it (running elements stop, pending ones end at once)
expect 0 "array job $aid" -- as "$A" cancel "$aid"
ws "${aid}_9" CANCELLED
ws "${aid}_2" CANCELLED
check "every unfinished element was cancelled" [ "$(st "${aid}_4")" = CANCELLED ] && [ "$(st "${aid}_0")" = DONE ]
# one Idempotency-Key covers the whole array: a retry makes no second array
i1=$(asub --idempotency-key arr-key-1 --array 1-3 -- true)
i2=$(asub --idempotency-key arr-key-1 --array 1-3 -- true)
check "the same key: the same array ($i1, $i2)" [ -n "$i1" ] && [ "$i1" = "$i2" ]
ws "${i1}_3" DONE
check "the array's ids are consecutive" [ "$(as "$A" describe job "${i1}_3" | awk '/^Job:/ { print $2 }')" = $((i1 + 2)) ]
expect 2 "array '0-2000' has more than 1000 elements" -- as "$A" submit --array 0-2000 -- true
expect 2 "after '%' give how many" -- as "$A" submit --array 0-3%0 -- true

# ---- singleton (Slurm's): one job of a user and name at a time, the others Dependency
s1=$(asub -J solo --gpus 1 -d singleton -- sh -c "while [ ! -f '$tmp/go-s1' ]; do sleep 0.05; done")
s2=$(asub -J solo --gpus 1 -d singleton -- sh -c "while [ ! -f '$tmp/go-s2' ]; do sleep 0.05; done")
s3=$(asub -J solo --gpus 1 -d singleton -- true)
so=$(asub -J other --gpus 1 -d singleton -- true)
sb=$(as "$B" submit --parsable -J solo --gpus 1 -d singleton -- true)
ws "$s1" RUNNING
ws "$so" DONE
sleep 0.5 # GPUs are free: only the singleton keeps s2 and s3 waiting
check "singleton: the second job of that name waits, reason Dependency (got '$(dreason "$s2")')" \
  [ "$(dreason "$s2")" = Dependency ]
check "singleton: the third too" [ "$(dreason "$s3")" = Dependency ]
check "singleton: another user's job of that name is not held back" \
  [ "$(as "$B" describe job "$sb" 2>/dev/null | awk '/^State:/ { print $2; exit }')" = DONE ]
touch "$tmp/go-s1"
ws "$s2" RUNNING
check "singleton: one at a time (the third still waits)" [ "$(dreason "$s3")" = Dependency ]
touch "$tmp/go-s2"
ws "$s3" DONE
expect 2 "'singleton' takes no job id" -- as "$A" submit -d singleton:3 -- true
d_stop || bad "graceful stop"
finish
