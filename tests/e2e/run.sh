#!/usr/bin/env bash
# gsched run (issue 16, What to build 6: interactive, like srun): one command as an
# interactive job with its stdio attached and its exit code; stdin forwarded; its job's
# variables; a run that must wait says why, then runs; a client killed with SIGKILL leaves a
# job the daemon cancels when its lease runs out (running or pending); SIGINT cancels it at
# once; the stdin and lease endpoints are the owner's (404 for another user, 401 without a
# token), 409 for a job that is not interactive or not running, 413 over 64 KiB; refused
# for several tasks; after a daemon restart a live client goes on and a dead one's job gets a
# fresh lease.  Daemons on loopback TCP with tokens and on a socket, fake GPUs, local executor.
# usage: run.sh GSCHED_BIN SOURCE_DIR
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

d_start rn --cluster 1x2 --grace 1s --tokens "$tok" --listen 127.0.0.1:0 || { bad "daemon start"; finish; }
as() { local t=$1 c=$2; shift 2; "$bin" "$c" --server "$SERVER" --token "$t" "$@"; }
run() { as "$A" run "$@"; }
st() { as "$R" describe job "$1" 2>/dev/null | awk '/^State:/ { print $2; exit }'; }
ws() { # wait for a state (bounded)
  local id=$1 want=$2 secs=${3:-30} s=""
  for _ in $(seq $((secs * 10))); do
    s=$(st "$id")
    [ "$s" = "$want" ] && return 0
    sleep 0.1
  done
  echo "  job $id: state '$s' after ${secs}s, wanted $want"
  return 1
}
byname() { # the id of alice's job named $1 (bounded wait for it to exist)
  local id=""
  for _ in $(seq 100); do
    id=$(as "$R" queue -a -o '%i %j' --no-headers 2>/dev/null | awk -v n="$1" '$2 == n { print $1; exit }')
    [ -n "$id" ] && break
    sleep 0.1
  done
  echo "$id"
}
post() { # post TOKEN PATH BODY: the HTTP status (body in $tmp/post.out)
  curl -s -o "$tmp/post.out" -w '%{http_code}' -X POST -H "Authorization: Bearer $1" \
    -H 'X-Gsched-Client: 1' -H 'Content-Type: application/json' --data-binary "@$3" "$URL$2"
}
postj() { printf '%s' "$3" > "$tmp/body"; post "$1" "$2" "$tmp/body"; }

# ---- output, stderr, exit code
out=$(run -G 1 -- sh -c 'echo out; echo err >&2; exit 3' 2> "$tmp/e1")
rc=$?
check "exit code 3 (got $rc)" [ "$rc" = 3 ]
check "stdout and stderr come out, without the daemon's header (got '$out')" [ "$out" = "$(printf 'out\nerr')" ]
check "nothing on stderr (got '$(cat "$tmp/e1")')" [ ! -s "$tmp/e1" ]
out=$(run -- sh -c "kill -TERM \$\$")
rc=$?
check "a signal: 128+N (got $rc)" [ "$rc" = 143 ]

# ---- stdin forwarded, EOF at its end
out=$(printf 'a\nb\n' | run -- cat)
rc=$?
check "stdin reaches the task (got '$out')" [ "$out" = "$(printf 'a\nb')" ]
check "cat exits 0 at EOF (got $rc)" [ "$rc" = 0 ]
head -c 200000 /dev/urandom > "$tmp/big"
run -- cat < "$tmp/big" > "$tmp/big.out"
rc=$?
check "200 KB of binary stdin come back unchanged (rc $rc, $(wc -c < "$tmp/big.out") bytes back; $(cmp "$tmp/big" "$tmp/big.out" 2>&1 | head -1))" \
  cmp -s "$tmp/big" "$tmp/big.out"
out=$(run -- sh -c 'read x; echo "got $x"' < /dev/null)
check "an empty stdin is EOF at once (got '$out')" [ "$out" = "got " ]

# ---- the job's environment
out=$(run -G 2 --name envjob -- sh -c 'echo "$GSCHED_JOB_ID $CUDA_VISIBLE_DEVICES"')
id=$(byname envjob)
check "GSCHED_JOB_ID and CUDA_VISIBLE_DEVICES (got '$out', job $id)" [ "$out" = "$id 0,1" ]
check "the job is DONE" [ "$(st "$id")" = DONE ]

# ---- a run that must wait says why, once, then runs
blk=$(as "$A" submit --parsable --gpus 2 -- sh -c "while [ ! -f '$tmp/go' ]; do sleep 0.05; done")
ws "$blk" RUNNING || bad "blocker runs"
run -G 1 -- echo ran > "$tmp/w.out" 2> "$tmp/w.err" &
wpid=$!
for _ in $(seq 100); do grep -qs 'waiting for resources' "$tmp/w.err" && break; sleep 0.1; done
check "the waiting line (got '$(cat "$tmp/w.err")')" grep -q "^gsched: job [0-9]* waiting for resources: Resources" "$tmp/w.err"
sleep 0.5
touch "$tmp/go"
wait "$wpid"
rc=$?
check "then it runs (rc $rc, out '$(cat "$tmp/w.out")')" [ "$rc" = 0 ] && [ "$(cat "$tmp/w.out")" = ran ]
check "the waiting line once (got $(grep -c waiting "$tmp/w.err"))" [ "$(grep -c waiting "$tmp/w.err")" = 1 ]
ws "$blk" DONE || bad "blocker done"
rm -f "$tmp/go"
# -Q: quiet
blk=$(as "$A" submit --parsable --gpus 2 -- sh -c "while [ ! -f '$tmp/go' ]; do sleep 0.05; done")
ws "$blk" RUNNING || bad "blocker runs"
run -Q -G 1 -- true 2> "$tmp/q.err" &
wpid=$!
sleep 1
touch "$tmp/go"
wait "$wpid"
check "-Q: no waiting line (got '$(cat "$tmp/q.err")')" [ ! -s "$tmp/q.err" ]
ws "$blk" DONE || bad "blocker done"
rm -f "$tmp/go"

# ---- the client goes away without a word (SIGKILL): cancelled when its lease runs out
"$bin" run --server "$SERVER" --token "$A" --lease 2 --name killed -- sleep 120 > /dev/null 2>&1 &
cpid=$!
id=$(byname killed)
ws "$id" RUNNING || bad "interactive job runs"
sleep 3 # longer than the lease: the live client renews it
check "a live client keeps its job (got $(st "$id"))" [ "$(st "$id")" = RUNNING ]
kill -KILL "$cpid"
wait "$cpid" 2>/dev/null
t0=$(date +%s)
ws "$id" CANCELLED 15 || bad "killed client: its job cancelled"
t1=$(date +%s)
check "cancelled within the lease and the grace (took $((t1 - t0))s)" [ $((t1 - t0)) -le 6 ]
check "cancelled by the lease's expiry" bash -c "'$bin' describe job $id --server '$SERVER' --token '$R' | grep -q 'lease expiry'"
# ... also while it is still pending
blk=$(as "$A" submit --parsable --gpus 2 -- sh -c "while [ ! -f '$tmp/go' ]; do sleep 0.05; done")
ws "$blk" RUNNING || bad "blocker runs"
"$bin" run --server "$SERVER" --token "$A" --lease 1 --name killedp -- true > /dev/null 2>&1 &
cpid=$!
id=$(byname killedp)
ws "$id" PENDING || bad "pending interactive job"
kill -KILL "$cpid"
wait "$cpid" 2>/dev/null
ws "$id" CANCELLED 10 || bad "killed client of a pending job: cancelled"
touch "$tmp/go"
ws "$blk" DONE || bad "blocker done"
rm -f "$tmp/go"

# ---- SIGINT (Ctrl-C): cancelled at once, through the stop protocol; exit 1
"$bin" run --server "$SERVER" --token "$A" --name intr -- sleep 120 > /dev/null 2> "$tmp/i.err" &
cpid=$!
id=$(byname intr)
ws "$id" RUNNING || bad "interactive job runs"
t0=$(date +%s)
kill -INT "$cpid"
wait "$cpid"
rc=$?
t1=$(date +%s)
check "SIGINT: exit 1 (got $rc)" [ "$rc" = 1 ]
check "SIGINT: the job is CANCELLED at once (got $(st "$id"), $((t1 - t0))s)" [ "$(st "$id")" = CANCELLED ] && [ $((t1 - t0)) -le 4 ]
check "SIGINT: says so (got '$(cat "$tmp/i.err")')" grep -q "cancelling it (interrupted)" "$tmp/i.err"

# ---- the endpoints: the owner's, interactive and running jobs only
mkfifo "$tmp/fifo"
"$bin" run --server "$SERVER" --token "$A" --name fed -- cat < "$tmp/fifo" > "$tmp/fed.out" 2>&1 &
cpid=$!
exec 7> "$tmp/fifo" # the client's stdin stays open
id=$(byname fed)
ws "$id" RUNNING || bad "interactive job runs"
check "another user: 404 on stdin" [ "$(postj "$B" "/v1/jobs/$id/stdin" '{"data":"evil\n"}')" = 404 ]
check "another user: 404 on lease" [ "$(postj "$B" "/v1/jobs/$id/lease" '{}')" = 404 ]
check "no token: 401" [ "$(postj "" "/v1/jobs/$id/stdin" '{"data":"x"}')" = 401 ]
check "a bad body: 400" [ "$(postj "$A" "/v1/jobs/$id/stdin" '{"data":1}')" = 400 ]
check "not base64: 400" [ "$(postj "$A" "/v1/jobs/$id/stdin" '{"data_b64":"*"}')" = 400 ]
{ printf '{"data":"'; head -c 70000 /dev/zero | tr '\0' x; printf '"}'; } > "$tmp/bigbody"
check "over 64 KiB: 413" [ "$(post "$A" "/v1/jobs/$id/stdin" "$tmp/bigbody")" = 413 ]
check "the owner: 200" [ "$(postj "$A" "/v1/jobs/$id/stdin" '{"data":"hello\n"}')" = 200 ]
check "... written 6" grep -q '"written": *6' "$tmp/post.out"
check "the owner's lease: 200" [ "$(postj "$A" "/v1/jobs/$id/lease" '{"seconds":30}')" = 200 ]
check "an admin's stdin: 200" [ "$(postj "$R" "/v1/jobs/$id/stdin" '{"data_b64":"YWRtaW4K","eof":true}')" = 200 ]
check "after eof: 409" [ "$(postj "$A" "/v1/jobs/$id/stdin" '{"data":"late\n"}')" = 409 ]
exec 7>&-
wait "$cpid"
rc=$?
check "the task read what came, in order (rc $rc, got '$(cat "$tmp/fed.out")')" [ "$rc" = 0 ] && [ "$(cat "$tmp/fed.out")" = "$(printf 'hello\nadmin')" ]
check "the owner's view of another user's write: none arrived" bash -c "! grep -q evil '$tmp/fed.out'"
plain=$(as "$A" submit --parsable -- sleep 60)
ws "$plain" RUNNING || bad "plain job runs"
check "a job that is not interactive: 409" [ "$(postj "$A" "/v1/jobs/$plain/stdin" '{"data":"x"}')" = 409 ]
as "$A" cancel "$plain" > /dev/null
check "a final job: 409" [ "$(postj "$A" "/v1/jobs/$id/lease" '{}')" = 409 ]

# ---- jobs that end otherwise: exit 1 with the reason
expect 1 "FAILED: time limit of 2s exceeded" -- run -t 2s -- sleep 30
expect 1 "FAILED: launch failed .*cannot run '/nonexistent/cmd'" -- run -- /nonexistent/cmd

# ---- refused: several tasks, a spec file, no command
expect 2 "interactive" -- run -n 2 -- true
expect 2 "needs a command" -- run -G 1
expect 2 "lease" -- run --lease 0 -- true
expect 0 "usage: gsched run" -- "$bin" run --help
out=$("$bin" run --no-such-option -- true 2>&1); rc=$?
check "an unknown option: exit 2 with run's usage, not submit's (got $rc: $out)" \
  bash -c '[ "$1" = 2 ] && grep -q "usage: gsched run" <<< "$2" && ! grep -q "gsched submit" <<< "$2"' _ "$rc" "$out"

d_stop || bad "graceful stop"

# ---- daemon restarts (on the socket: the same address after a restart)
d_start rs --cluster 1x2 --grace 1s || { bad "socket daemon start"; finish; }
sid() { # the id of the job named $1 (bounded wait for it to exist)
  local id=""
  for _ in $(seq 100); do
    id=$(g queue -a -o '%i %j' --no-headers 2>/dev/null | awk -v n="$1" '$2 == n { print $1; exit }')
    [ -n "$id" ] && break
    sleep 0.1
  done
  echo "$id"
}
# a live client rides through a restart: its job runs on, its output keeps coming
"$bin" run --server "$SERVER" --lease 3 --name across -- sh -c 'echo before; sleep 3; echo after' \
  > "$tmp/across.out" 2> "$tmp/across.err" &
cpid=$!
id=$(sid across)
wait_state "$id" RUNNING || bad "across runs"
d_stop || bad "graceful stop (1)"
d_start rs --cluster 1x2 --grace 1s || { bad "restart (1)"; finish; }
wait "$cpid"
rc=$?
check "a live client across a restart: exit 0, all output (rc $rc, got '$(cat "$tmp/across.out")')" \
  [ "$rc" = 0 ] && [ "$(cat "$tmp/across.out")" = "$(printf 'before\nafter')" ]
# a dead client's job: after a restart its lease starts again (30 s) from the restart
"$bin" run --server "$SERVER" --lease 2 --name orphan -- sleep 300 > /dev/null 2>&1 &
cpid=$!
id=$(sid orphan)
wait_state "$id" RUNNING || bad "orphan runs"
kill -KILL "$cpid"
wait "$cpid" 2>/dev/null
d_stop || bad "graceful stop (2)"
sleep 3 # past the client's 2 s lease while the daemon is down
d_start rs --cluster 1x2 --grace 1s || { bad "restart (2)"; finish; }
t0=$(date +%s)
sleep 2
check "after a restart the lease starts again: still running (got $(state "$id"))" [ "$(state "$id")" = RUNNING ]
wait_state "$id" CANCELLED 45 || bad "the orphan is cancelled once the fresh lease ran out"
t1=$(date +%s)
check "cancelled about 30 s after the restart (took $((t1 - t0))s)" [ $((t1 - t0)) -ge 28 ] && [ $((t1 - t0)) -le 40 ]
d_stop || bad "graceful stop (3)"
finish
