#!/usr/bin/env bash
# Rates (issue 11, defect 12 and item 4): wrong bearer tokens were not rate-limited (~53
# guesses/s on 2 cores, each costing the daemon a PBKDF2), and a user could queue or submit
# without bound.  Now failed token checks from one address get 429 + Retry-After after a
# small burst (a valid token still works at once), and `serve --max-pending-per-user N` and
# `--submit-rate R/s` answer 429 with a clear message beyond their limits.  Varying the source
# address over 127.0.0.0/8 (curl --interface 127.0.N.M) gave each guess a fresh bucket (600
# PBKDF2 checks in 9.5 s, no 429): all of loopback is now one client key.
# usage: rate_limit.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

if ! command -v curl > /dev/null; then
  echo "SKIP: curl is not installed (needed to send raw requests)"
  exit 77
fi

A=alice.alice-secret-0123456789
tok=$tmp/tokens
"$bin" token hash --user alice --token "$A" --iterations 1000 > "$tok" 2>/dev/null
chmod 600 "$tok"

# 1. wrong tokens: after the burst, 429 with Retry-After, not checked; the valid token works
d_start auth --cluster 1x1 --listen 127.0.0.1:0 --tokens "$tok" || { bad "daemon start"; finish; }
code() { curl -s -o "$tmp/out" -D "$tmp/hdr" -w '%{http_code}' -H "Authorization: Bearer $1" "$SERVER/v1/jobs"; }
check "the valid token works (200)" test "$(code "$A")" = 200
codes=""
t0=$(date +%s%N)
for i in $(seq 30); do
  c=$(code "alice.wrong-guess-number-$i-xxxxxxxx")
  codes="$codes $c"
  [ "$c" = 429 ] && cp "$tmp/out" "$tmp/a429" && cp "$tmp/hdr" "$tmp/a429.hdr"
done
secs=$(( ($(date +%s%N) - t0 + 999999999) / 1000000000 ))
echo "# 30 wrong guesses in ${secs}s:$codes"
n401=$(grep -o 401 <<< "$codes" | wc -l)
n429=$(grep -o 429 <<< "$codes" | wc -l)
# a burst of 10, then one more per second: at most 10 + secs + 1 of them are checked
allowed=$(( 10 + secs + 1 ))
check "the first 5 guesses are checked (401)" eval '[[ $codes == " 401 401 401 401 401"* ]]'
check "at most $allowed of 30 guesses checked in ${secs}s (got $n401)" test "$n401" -le "$allowed"
check "the others are 429 ($n429)" test "$n429" -ge $(( 30 - allowed )) -a "$n429" -ge 1 -a $(( n401 + n429 )) = 30
check "429 carries Retry-After" grep -qi '^Retry-After: [1-9]' "$tmp/a429.hdr"
check "429 says why" grep -q "too many failed token checks" "$tmp/a429"
check "the valid token still works at once (200)" test "$(code "$A")" = 200
check "the CLI with the valid token still works" \
  "$bin" queue --server "$SERVER" --token "$A"
d_stop

# 1b. the same guesses, each from another loopback address: still one client (127.0.0.0/8)
d_start authlo --cluster 1x1 --listen 127.0.0.1:0 --tokens "$tok" || { bad "daemon start"; finish; }
if curl -s -o /dev/null --interface 127.0.3.7 "$SERVER/v1/health"; then
  check "the valid token works (200)" test "$(code "$A")" = 200
  codes=""
  t0=$(date +%s%N)
  for i in $(seq 30); do
    c=$(curl -s -o "$tmp/out" -w '%{http_code}' --interface "127.0.$((i / 200 + 1)).$((i % 200 + 2))" \
          -H "Authorization: Bearer alice.wrong-guess-number-$i-xxxxxxxx" "$SERVER/v1/jobs")
    codes="$codes $c"
  done
  secs=$(( ($(date +%s%N) - t0 + 999999999) / 1000000000 ))
  echo "# 30 wrong guesses from 30 loopback addresses in ${secs}s:$codes"
  n401=$(grep -o 401 <<< "$codes" | wc -l)
  n429=$(grep -o 429 <<< "$codes" | wc -l)
  allowed=$(( 10 + secs + 1 ))
  check "30 source addresses in 127/8: at most $allowed guesses checked (got $n401)" \
    test "$n401" -le "$allowed"
  check "... the others are 429 ($n429)" test "$n429" -ge 1 -a $(( n401 + n429 )) = 30
  check "the valid token still works from yet another address (200)" \
    test "$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.9.9 -H "Authorization: Bearer $A" "$SERVER/v1/jobs")" = 200
else
  echo "# cannot send from 127.0.3.7 here: the source-address part is not checked"
fi
d_stop

# 2. --max-pending-per-user: the 4th pending submission is 429 naming the option
d_start pend --cluster 1x1 --max-pending-per-user 3 --grace 1s || { bad "daemon start"; finish; }
run=$(gsub -- sleep 60)
check "a running job does not count ($run)" wait_state "$run" RUNNING 30
ids=""
for i in 1 2 3; do ids="$ids $(gsub -- sleep 60)"; done
check "3 pending submissions accepted ($ids)" test "$(wc -w <<< "$ids")" = 3
out=$("$bin" submit --server "$SERVER" -- sleep 60 2>&1); rc=$?
check "the 4th is refused (exit $rc): $out" test "$rc" != 0
check "... naming the limit" eval '[[ $out == *"--max-pending-per-user 3"* ]]'
code=$(dcurl -s -o /dev/null -w '%{http_code}' -H 'X-Gsched-Client: 1' -H 'Content-Type: application/json' \
         -d '{"command": "true"}' "$URL/v1/jobs")
check "... with status 429 (got $code)" test "$code" = 429
check "a dry run is not counted" "$bin" submit --dry-run --server "$SERVER" -- true
first=$(awk '{print $1}' <<< "$ids")
g cancel "$first" > /dev/null
ok_again=""
for _ in $(seq 50); do
  ok_again=$(gsub -- sleep 60 2>/dev/null) && break
  sleep 0.1
done
check "after a cancel there is room again ($ok_again)" test -n "$ok_again"
for i in $run $ids $ok_again; do g cancel "$i" > /dev/null 2>&1; done
d_stop

# 2b. the cap counts jobs: a non-gang submit of N tasks adds N pending jobs (it was counted
# as one: {"tasks": 500, "gang": false} queued 500 jobs past --max-pending-per-user 3)
d_start pend2 --cluster 1x1 --max-pending-per-user 3 --grace 1s || { bad "daemon start"; finish; }
run=$(gsub -- sleep 60)
check "a running job does not count ($run)" wait_state "$run" RUNNING 30
post() { dcurl -s -o "$tmp/out" -D "$tmp/hdr" -w '%{http_code}' -H 'X-Gsched-Client: 1' \
           -H 'Content-Type: application/json' -d "$1" "$URL/v1/jobs"; }
npend() { g queue --json -t PD | grep -c '"id"'; }
code=$(post '{"gpus": 1, "tasks": 500, "gang": false, "command": ["true"]}')
check "a non-gang job of 500 tasks is refused with 429 (got $code)" test "$code" = 429
check "... saying why" grep -q "non-gang job of 500 tasks would be 500 pending jobs" "$tmp/out"
check "... no job was queued ($(npend))" test "$(npend)" = 0
code=$(post '{"gpus": 1, "tasks": 2, "gang": false, "command": ["true"]}')
check "a non-gang job of 2 tasks fits (got $code)" test "$code" = 201
check "... and is 2 pending jobs ($(npend))" test "$(npend)" = 2
code=$(post '{"gpus": 1, "tasks": 2, "gang": false, "command": ["true"]}')
check "another one would make 4 > 3: 429 (got $code)" test "$code" = 429
check "... naming what is pending and what it adds" \
  grep -q "already has 2 pending job(s) (this non-gang job of 2 tasks adds 2)" "$tmp/out"
code=$(post '{"gpus": 1, "tasks": 1, "command": ["true"]}')
check "one more job makes 3: accepted (got $code)" test "$code" = 201
check "at most 3 pending jobs ($(npend))" test "$(npend)" = 3
g cancel "$run" > /dev/null 2>&1
d_stop

# 3. --submit-rate 1/s: a burst of 1, then 429 until the bucket refills
d_start rate --cluster 1x1 --submit-rate 1/s || { bad "daemon start"; finish; }
n_ok=0 n_429=0
t0=$(date +%s%N)
for i in $(seq 6); do
  c=$(dcurl -s -o "$tmp/out" -D "$tmp/hdr" -w '%{http_code}' -H 'X-Gsched-Client: 1' \
        -H 'Content-Type: application/json' -d '{"command": "true"}' "$URL/v1/jobs")
  case $c in 201) n_ok=$((n_ok + 1)) ;; 429) n_429=$((n_429 + 1)); cp "$tmp/out" "$tmp/429"; cp "$tmp/hdr" "$tmp/429.hdr" ;; esac
done
secs=$(( ($(date +%s%N) - t0 + 999999999) / 1000000000 ))
# a burst of 1, then 1 more per second
allowed=$(( 1 + secs ))
check "a burst of 6 in ${secs}s: 1 to $allowed accepted ($n_ok), the rest 429 ($n_429)" \
  test "$n_ok" -ge 1 -a "$n_ok" -le "$allowed" -a "$n_429" -ge 1 -a $(( n_ok + n_429 )) = 6
check "the 429 names --submit-rate" grep -q -- "--submit-rate" "$tmp/429"
check "... with Retry-After" grep -qi '^Retry-After: [1-9]' "$tmp/429.hdr"
sleep 1.2
check "after a second a submit goes through again" gsub -- true
check "daemon stops cleanly" d_stop
finish
