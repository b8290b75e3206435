#!/usr/bin/env bash
# Accounting (issue 16): `gsched history` (sacct) and GET /v1/history over a live daemon with
# fake GPUs: finished jobs only, ordered by end time, with exit code, elapsed time and GPU
# time (GPUs x time held); filters -u/-A/-s/-j/-S/-E, --format, -P, -n, --json; a user sees
# only their own jobs (another user's: 403), an admin everybody's; the answers survive a
# restart, and retention (serve --retention) moves old jobs into the accounting table without
# changing them while active jobs stay.
# usage: history.sh GSCHED_BIN SOURCE_DIR
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

# bad options are refused before any daemon is asked
expect 2 "not a time" -- "$bin" history --server http://127.0.0.1:9 -S yesterday
expect 2 "unknown field 'Bogus'" -- "$bin" history --server http://127.0.0.1:9 -o JobID,Bogus
expect 2 "not a final state" -- "$bin" history --server http://127.0.0.1:9 -s R
expect 0 "GPUHours .*GPU time held" -- "$bin" history --help

d_start hist --cluster 1x4 --grace 1s --tokens "$tok" --listen 127.0.0.1:0 || { bad "daemon start"; finish; }
as() { local t=$1 c=$2; shift 2; "$bin" "$c" --server "$SERVER" --token "$t" "$@"; }
asub() { local t=$1; shift; as "$t" submit --parsable "$@"; }
ws() { # wait until job $1 is in state $2 (admin's view)
  local s=""
  for _ in $(seq 300); do
    s=$(as "$R" describe job "$1" 2>/dev/null | awk '/^State:/ { print $2; exit }')
    [ "$s" = "$2" ] && return 0
    sleep 0.1
  done
  bad "job $1: state '$s', wanted $2"
  return 1
}

j1=$(asub "$A" --gpus 2 --name two --vc va -- sleep 1)
ws "$j1" DONE
j2=$(asub "$A" --gpus 1 --name fail --vc vb -- sh -c 'exit 3')
ws "$j2" FAILED
j3=$(asub "$B" --gpus 1 --name bobs --vc va -- sleep 60)
ws "$j3" RUNNING
as "$B" cancel "$j3" > /dev/null
ws "$j3" CANCELLED
j4=$(asub "$B" --gpus 4 --name active -- sleep 60)
ws "$j4" RUNNING

# ---- the admin sees every finished job, oldest end first; the running one is not there
out=$(as "$R" history -n -o JobID)
check "admin: finished jobs by end time (got $(echo $out))" [ "$(echo $out)" = "$j1 $j2 $j3" ]
out=$(as "$R" history)
check "default columns" contains "$out" "JobID  Name"
for c in User VC State ExitCode Start End Elapsed GPUs GPUHours; do
  check "default column $c" contains "$(echo "$out" | head -1)" "$c"
done
line=$(as "$R" history -P -n -o JobID,Name,User,VC,State,ExitCode,GPUs -j "$j2")
check "-P line of the failed job ($line)" [ "$line" = "$j2|fail|alice|vb|FAILED|3|1" ]
check "-P header" [ "$(as "$R" history -P -o jobid,gpuhours | head -1)" = "JobID|GPUHours" ]

# ---- GPU time: GPUs x time held (2 GPUs for about a second)
js=$(as "$R" history --json -j "$j1")
el=$(echo "$js" | sed -n 's/.*"elapsed_us": \([0-9]*\).*/\1/p')
gu=$(echo "$js" | sed -n 's/.*"gpu_us": \([0-9]*\).*/\1/p')
check "elapsed about 1 s ($el us)" [ "${el:-0}" -ge 1000000 ] && [ "${el:-0}" -lt 5000000 ]
check "gpu_us = 2 x elapsed ($gu vs $el)" [ "${gu:-0}" = "$((2 * ${el:-0}))" ]
check "a job cancelled while running has its GPU time" \
  [ "$(as "$R" history --json -j "$j3" | sed -n 's/.*"gpu_us": \([0-9]*\).*/\1/p')" -gt 0 ]

# ---- filters
check "-u alice" [ "$(echo $(as "$R" history -n -o JobID -u alice))" = "$j1 $j2" ]
check "-A va" [ "$(echo $(as "$R" history -n -o JobID -A va))" = "$j1 $j3" ]
check "-s F,CA" [ "$(echo $(as "$R" history -n -o JobID -s F,CANCELLED))" = "$j2 $j3" ]
check "-s COMPLETED" [ "$(echo $(as "$R" history -n -o JobID -s COMPLETED))" = "$j1" ]
check "-S now-1hour" [ "$(echo $(as "$R" history -n -o JobID -S now-1hour))" = "$j1 $j2 $j3" ]
check "-E now-1hour: none" [ -z "$(as "$R" history -n -o JobID -E now-1hour)" ]
check "-S tomorrow: none" [ -z "$(as "$R" history -n -o JobID -S "$(date -d tomorrow +%Y-%m-%d)")" ]
check "-S today" [ "$(echo $(as "$R" history -n -o JobID -S "$(date -d '-1 day' +%Y-%m-%dT%H:%M)"))" = "$j1 $j2 $j3" ]
check "--limit 2" [ "$(echo $(as "$R" history -n -o JobID --limit 2))" = "$j1 $j2" ]
check "API paging: limit=1 offset=1" \
  contains "$(curl -s -H "Authorization: Bearer $R" "$SERVER/v1/history?limit=1&offset=1")" "\"id\": $j2,"
check "API: from/to in us" \
  contains "$(curl -s -H "Authorization: Bearer $R" "$SERVER/v1/history?to=1")" '"total": 0'
code=$(curl -s -o "$tmp/body" -w '%{http_code}' -H "Authorization: Bearer $R" "$SERVER/v1/history?state=RUNNING")
check "API: state=RUNNING is 400 (got $code)" [ "$code" = 400 ] && grep -q 'final states' "$tmp/body"

# ---- visibility: a user sees only their own jobs
check "alice sees her two" [ "$(echo $(as "$A" history -n -o JobID))" = "$j1 $j2" ]
check "bob sees his one" [ "$(echo $(as "$B" history -n -o JobID))" = "$j3" ]
expect 1 "only your own" -- as "$A" history -u bob
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $B" "$SERVER/v1/history?user=alice")
check "API: another user's history is 403 (got $code)" [ "$code" = 403 ]
code=$(curl -s -o /dev/null -w '%{http_code}' "$SERVER/v1/history")
check "API: no token is 401 (got $code)" [ "$code" = 401 ]

# ---- JSON fields
js=$(as "$R" history --json -j "$j2")
for k in id array_id array_task user vc name state exit_code reason submit_us start_us end_us \
  elapsed_us gpus gpu_us gpu_hours preemptions resizes runs; do
  check "json field $k" contains "$js" "\"$k\":"
done

# ---- restart: the same answers
as "$R" cancel "$j4" > /dev/null
ws "$j4" CANCELLED
before=$(as "$R" history --json)
d_stop || bad "graceful stop"
d_start hist --cluster 1x4 --grace 1s --tokens "$tok" --listen 127.0.0.1:0 || { bad "restart"; finish; }
check "history after a restart is the same" [ "$(as "$R" history --json)" = "$before" ]
d_stop || bad "graceful stop"

# ---- retention: finished jobs older than the retention move to the acct table; history is
# the same before and after, active jobs stay, and a restart after the purge recovers them
expect 2 "retention" -- "$bin" serve --retention -1 --socket "$tmp/none.sock"
d_start ret --cluster 1x4 --grace 1s --retention 3s || { bad "daemon start"; finish; }
sq() { # one value of a query on the daemon's database (read-only, beside the daemon: WAL)
  python3 -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, timeout=30)
print(c.execute(sys.argv[2]).fetchone()[0])' "$DDIR/gsched.db" "$1"
}
r1=$(gsub --gpus 2 --name r1 -- sleep 0.5)
r2=$(gsub --gpus 1 --name r2 -- sh -c 'exit 2')
wait_state "$r1" DONE && wait_state "$r2" FAILED
ra=$(gsub --gpus 1 --name longer -- sleep 120)
wait_state "$ra" RUNNING
pre=$(g history --json)
check "before retention: rows in jobs" [ "$(sq "SELECT count(*) FROM jobs WHERE id IN ($r1, $r2)")" = 2 ]
for _ in $(seq 200); do
  [ "$(sq "SELECT count(*) FROM acct" 2>/dev/null)" = 2 ] && break
  sleep 0.1
done
check "retention moved both finished jobs into acct" \
  [ "$(sq "SELECT count(*) FROM acct WHERE id IN ($r1, $r2)")" = 2 ]
check "... out of jobs, events, tasks" \
  [ "$(sq "SELECT (SELECT count(*) FROM jobs WHERE id IN ($r1, $r2)) + (SELECT count(*) FROM events WHERE job_id IN ($r1, $r2)) + (SELECT count(*) FROM tasks WHERE job_id IN ($r1, $r2))")" = 0 ]
check "the active job stays" [ "$(state "$ra")" = RUNNING ]
check "history is the same after retention" [ "$(g history --json)" = "$pre" ]
check "the daemon says what it moved" grep -q "retention: moved [12] finished job" "$DDIR/daemon.log"
maxseq=$(sq "SELECT seq FROM sqlite_sequence WHERE name = 'events'")
d_kill9
d_start ret --cluster 1x4 --grace 1s --retention 3s || { bad "restart"; finish; }
check "after a restart: the same history" [ "$(g history --json)" = "$pre" ]
check "after a restart: the active job is back running" [ "$(state "$ra")" = RUNNING ]
g cancel "$ra" > /dev/null
wait_state "$ra" CANCELLED
newseq=$(sq "SELECT min(seq) FROM events WHERE seq > $maxseq")
check "event ids are never reused ($newseq > $maxseq)" [ -n "$newseq" ] && [ "$newseq" -gt "$maxseq" ]
d_stop || bad "graceful stop"

# ---- memory: finished jobs are forgotten (engine and daemon state; whole blocks of 256 and
# 1,024 slots freed), and everything about them still reads from the database
d_start mem --cluster 1x4 --grace 1s || { bad "daemon start"; finish; }
first=$(gsub --name first -- sh -c 'echo hello; exit 0')
wait_state "$first" DONE
for i in $(seq 4); do
  "$bin" submit --server "$SERVER" --array 0-299 --parsable -- true > /dev/null || bad "array $i"
done
wait_idle 120 || bad "the jobs did not all end"
sleep 1
check "an old job is still described (State DONE)" [ "$(state "$first")" = DONE ]
check "... with its events" contains "$(events "$first")" "finished"
check "... and its log" contains "$(g logs "$first" 2>&1)" "hello"
expect 1 "job $first is already DONE" -- g cancel "$first"
expect 1 "job $first is DONE: only pending jobs can be held" -- g hold "$first"
expect 4 "no job 999999" -- g cancel 999999
check "GET /v1/jobs/ID answers" contains "$(dcurl -s "$URL/v1/jobs/$first")" '"state": "DONE"'
check "the list of all jobs has it" contains "$(dcurl -s "$URL/v1/jobs?state=all&limit=5")" "\"id\": $first,"
check "history lists all 1,201" [ "$(g history -n -o JobID | wc -l)" = 1201 ]
later=$(gsub --name later -- true)
wait_state "$later" DONE
d_stop || bad "graceful stop"
n=$(sed -n 's/.* \([0-9]*\) finished job(s) forgotten since the start.*/\1/p' "$DDIR/daemon.log" | tail -1)
check "the daemon forgot the finished jobs (${n:-none} of 1,202)" [ "${n:-0}" -ge 1100 ]
finish
