#!/usr/bin/env bash
# Job dependencies and held jobs (issue 11, What to build 7): `gsched submit --dependency` /
# `--hold` with Slurm's meanings, `gsched hold` / `gsched release`, reasons Dependency,
# DependencyNeverSatisfied and JobHeldUser in `gsched queue -o %r`, waiting jobs kept across
# a daemon restart (graceful and kill -9), another user's release refused, unknown or hidden
# job ids refused at submit, positioned syntax errors before anything is sent, and
# --array=A-B%N (at most N elements at once, by chaining them with afterany).
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

# ---- --array=A-B%N: at most N elements at once (element i waits for element i-N to end)
ids=$(asub --gpus 1 --array 0-2%1 -- sh -c "while [ ! -f '$tmp/go-arr-'\$GSCHED_ARRAY_TASK_ID ]; do sleep 0.05; done")
set -- $ids
check "--array %1: three elements" [ $# = 3 ]
ws "$1" RUNNING
sleep 0.5 # a GPU is free: only the throttle keeps element 1 waiting
check "%1: element 1 waits for element 0 (got '$(reason "$2")')" [ "$(reason "$2")" = Dependency ]
check "%1: element 2 waits too" [ "$(reason "$3")" = Dependency ]
touch "$tmp/go-arr-0"
ws "$2" RUNNING
check "%1: element 2 still waits while element 1 runs" [ "$(reason "$3")" = Dependency ]
touch "$tmp/go-arr-1" "$tmp/go-arr-2"
ws "$3" DONE
expect 2 "cannot be combined with a '\?'" -- as "$A" submit --array 0-3%2 -d "afterok:$a?afterany:$a" -- true

d_stop || bad "graceful stop"
finish
