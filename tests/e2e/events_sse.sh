#!/usr/bin/env bash
# The event stream (issue 16): GET /v1/events over TCP with tokens (and the socket): events
# of a submit, a cancel and a node mark arrive in order with increasing ids; a resume with
# Last-Event-ID (or ?since=) gives exactly the missed ones, an id newer than any gives
# "event: reset"; ?last=N, ?job=, ?kind=, ?follow=0; a user does not see another user's job
# events (but sees node events), nor asks for another's job (404); streams per user are capped
# (429); pings keep a stream open past --idle-timeout; every stream ends cleanly (its final
# chunk) when the daemon stops; `gsched events` prints, follows (-f) and resumes (--since),
# and ends when the daemon stops; `gsched queue -w` re-lists when events come.
# usage: events_sse.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

R=root.root-secret-0123456789ab
A=alice.alice-secret-0123456789
B=bob.bob-secret-0123456789abc
tok=$tmp/tokens
{ "$bin" token hash --user root --admin --token "$R" --iterations 1000
  "$bin" token hash --user alice --token "$A" --iterations 1000
  "$bin" token hash --user bob --token "$B" --iterations 1000; } > "$tok" 2>/dev/null
chmod 600 "$tok"

d_start ev --cluster 2x4:V100 --grace 1s --tokens "$tok" --listen 127.0.0.1:0 \
  --idle-timeout 4 --max-user-streams 3 || { bad "daemon start"; finish; }
as() { local t=$1 c=$2; shift 2; "$bin" "$c" --server "$SERVER" --token "$t" "$@"; }
# acurl TOKEN ARGS...: curl to the TCP address with that token
acurl() { local t=$1; shift; curl -s -H "Authorization: Bearer $t" "$@"; }
not() { ! "$@"; }
ids() { awk '/^id: / { printf "%s ", $2 }' "$1"; }
# wait_for FILE PATTERN [SECS]: until FILE has a line matching PATTERN (bounded)
wait_for() {
  for _ in $(seq $((${3:-20} * 10))); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "  $1: no '$2' after ${3:-20}s:"; tail -5 "$1" | sed 's/^/    /'
  return 1
}
increasing() { # the ids of FILE strictly increase
  local prev=0 i
  for i in $(ids "$1"); do [ "$i" -gt "$prev" ] || return 1; prev=$i; done
  [ "$prev" -gt 0 ]
}
CPIDS=""
bg_stream() { # bg_stream OUT TOKEN [QUERY]: a background stream; its pid in CPIDS
  acurl "$2" -N "$URL/v1/events${3:-}" > "$1" 2> "$1.err" &
  CPIDS="$CPIDS $!"
}

T0=$(date +%s)
bg_stream "$tmp/root.out" "$R"
bg_stream "$tmp/alice.out" "$A"
bg_stream "$tmp/bob.out" "$B"
check "streams open at once (a first comment)" wait_for "$tmp/bob.out" "^: gsched event stream"

a1=$(as "$A" submit --parsable -G 1 -- sleep 60)
b1=$(as "$B" submit --parsable -G 1 -- sleep 60)
as "$A" cancel "$a1" > /dev/null
as "$R" node bad n1 --reason fan > /dev/null
check "cancel reaches the admin's stream" wait_for "$tmp/root.out" "\"type\":\"cancelled\",\"job\":$a1"
check "ids increase" increasing "$tmp/root.out"
order=$(awk -F'"type":"' '/^data: / { split($2, t, "\""); printf "%s ", t[1] }' "$tmp/root.out")
check "submit, start, cancel in order ($order)" \
  contains "$order" "submitted started submitted started cancel-requested"
check "job events carry user, vc and state" \
  grep -q "\"kind\":\"job\",\"type\":\"submitted\",\"job\":$b1,\"node\":null,\"user\":\"bob\",\"vc\":\"default\"" "$tmp/root.out"
check "the node event (kind node, no job)" wait_for "$tmp/root.out" '"kind":"node","type":"bad","job":null,"node":"n1"' 5
check "alice sees her job" wait_for "$tmp/alice.out" "\"type\":\"cancelled\",\"job\":$a1"
check "alice does not see bob's job" not grep -q "\"job\":$b1," "$tmp/alice.out"
check "bob does not see alice's job" not grep -q "\"job\":$a1," "$tmp/bob.out"
check "bob sees his own" grep -q "\"job\":$b1," "$tmp/bob.out"
check "users see node events" wait_for "$tmp/bob.out" '"kind":"node","type":"bad"' 5

# resume: after the second event, exactly the rest (a listing: follow=0 ends when caught up)
sleep 0.5 # the cancel's last events
all=$(ids "$tmp/root.out")
k=$(echo "$all" | awk '{ print $2 }')
want=$(echo "$all" | cut -d' ' -f3-)
got=$(acurl "$R" -H "Last-Event-ID: $k" "$URL/v1/events?follow=0" --max-time 10 > "$tmp/resume.out"; ids "$tmp/resume.out")
check "Last-Event-ID $k gives exactly the missed ones ($got)" [ "$got" = "$want" ]
got=$(acurl "$R" "$URL/v1/events?follow=0&since=$k" --max-time 10 > "$tmp/since.out"; ids "$tmp/since.out")
check "?since=$k as well" [ "$got" = "$want" ]
acurl "$R" -H "Last-Event-ID: 999999" "$URL/v1/events?follow=0" --max-time 10 > "$tmp/reset.out"
check "an unknown newer id: event reset" grep -q "^event: reset" "$tmp/reset.out"
got=$(acurl "$A" "$URL/v1/events?follow=0&since=0" --max-time 10 > "$tmp/a0.out"; ids "$tmp/a0.out")
check "a replay from 0 is alice's view too" not grep -q "\"job\":$b1," "$tmp/a0.out"
check "  ... and has her events" grep -q "\"job\":$a1," "$tmp/a0.out"
got=$(acurl "$R" "$URL/v1/events?follow=0&last=2" --max-time 10 > "$tmp/last.out"; ids "$tmp/last.out")
check "?last=2: the last two ($got)" [ "$got" = "$(echo "$all" | awk '{ print $(NF-1), $NF " " }')" ]
acurl "$R" "$URL/v1/events?follow=0&since=0&job=$b1" --max-time 10 > "$tmp/job.out"
check "?job=$b1: that job only" [ "$(grep -c '^data: ' "$tmp/job.out")" = "$(grep -c "\"job\":$b1," "$tmp/job.out")" ]
check "  ... all of its events" grep -q "\"type\":\"started\",\"job\":$b1" "$tmp/job.out"
acurl "$R" "$URL/v1/events?follow=0&since=0&kind=node" --max-time 10 > "$tmp/kind.out"
check "?kind=node: node events only" [ "$(grep -c '^event: node' "$tmp/kind.out")" -ge 1 ]
check "  ... no job event" not grep -q '^event: job' "$tmp/kind.out"
code=$(acurl "$A" -o /dev/null -w '%{http_code}' "$URL/v1/events?job=$b1" --max-time 10)
check "another user's job: 404 ($code)" [ "$code" = 404 ]
code=$(acurl "$A" -o /dev/null -w '%{http_code}' "$URL/v1/events?kind=jobs" --max-time 10)
check "a bad kind: 400 ($code)" [ "$code" = 400 ]
for v in abc -5 +5 99999999999999999999; do # an overflow is no id either (not a 'reset')
  code=$(acurl "$A" -o /dev/null -w '%{http_code}' -H "Last-Event-ID: $v" "$URL/v1/events?follow=0" --max-time 10)
  check "Last-Event-ID '$v': 400 ($code)" [ "$code" = 400 ]
done
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/v1/events" --max-time 10)
check "no token: 401 ($code)" [ "$code" = 401 ]
# the socket: the same stream (root on the socket is an admin)
curl -s --unix-socket "$SOCK" "http://localhost/v1/events?follow=0&since=$k" --max-time 10 > "$tmp/sock.out"
check "over the socket too" [ "$(ids "$tmp/sock.out")" = "$want" ]

# streams per user (3): alice holds one; two more are fine, a fourth is 429
curl -s -H "Authorization: Bearer $A" -N "$URL/v1/events" > "$tmp/alice2.out" 2>&1 &
A2PID=$! # curl itself (not a subshell): killed below
curl -s -H "Authorization: Bearer $A" -N "$URL/v1/events" > "$tmp/alice3.out" 2>&1 &
A3PID=$!
wait_for "$tmp/alice2.out" "^: gsched event stream" > /dev/null
wait_for "$tmp/alice3.out" "^: gsched event stream" > /dev/null
code=$(acurl "$A" -o "$tmp/429.out" -w '%{http_code}' "$URL/v1/events" --max-time 10)
check "a fourth stream of alice: 429 ($code)" [ "$code" = 429 ]
check "  ... saying which limit" grep -q -- '--max-user-streams' "$tmp/429.out"
code=$(acurl "$B" -o /dev/null -w '%{http_code}' "$URL/v1/events?follow=0" --max-time 10)
check "bob is not held back by alice's streams ($code)" [ "$code" = 200 ]
kill "$A2PID" "$A3PID"
wait "$A2PID" "$A3PID" 2>/dev/null
code=
for _ in $(seq 30); do # the daemon sees the hang-up within a second or so: a place again
  code=$(acurl "$A" -o /dev/null -w '%{http_code}' "$URL/v1/events?follow=0" --max-time 10)
  [ "$code" = 200 ] && break
  sleep 0.2
done
check "a stream closed by its client frees its place ($code)" [ "$code" = 200 ]

# pings: --idle-timeout 4 never cuts a stream (a ping every 2 s): wait until the first
# streams are 6 s old (bounded), longer than the idle timeout
while [ $(($(date +%s) - T0)) -lt 7 ]; do sleep 0.5; done
check "pings keep the stream open past the idle timeout" grep -q '^: ping' "$tmp/root.out"
alive=1
for p in $CPIDS; do kill -0 "$p" 2>/dev/null || alive=0; done
check "every stream is still open" [ "$alive" = 1 ]

# the CLI: a listing, a resume, JSON lines, a user's view, and one following (-f) until the end
out=$(as "$R" events -n 100)
check "gsched events: a header and one line per event" \
  [ "$(echo "$out" | grep -c ' job \| node ')" = "$(echo "$all" | wc -w)" ]
check "  ... TIME ID KIND TYPE JOB/NODE USER REASON" \
  contains "$(echo "$out" | grep " cancelled ")" " job     cancelled        $a1          alice      cancelled by alice"
got=$(as "$R" events --since "$k" --json | awk -F'"seq":' '{ split($2, s, ","); printf "%s ", s[1] }')
check "gsched events --since $k --json: the rest ($got)" [ "$got" = "$want" ]
check "gsched events as alice: not bob's job" \
  [ "$(as "$A" events -n 100 --json | grep -c "\"job\":$b1,")" = 0 ]
check "  ... her own" [ "$(as "$A" events -n 100 --json | grep -c "\"job\":$a1,")" -ge 3 ]
expect 4 "no job" -- as "$A" events --job "$b1"
as "$A" events -f > "$tmp/cli-f.out" 2> "$tmp/cli-f.err" &
FPID=$!
as "$R" queue -w --iterations 3 > "$tmp/watch.out" 2> "$tmp/watch.err" & # (root: alice's closed streams may not all be freed yet)
WPID=$!
sleep 1
a2=$(as "$A" submit --parsable -G 1 -- sleep 60)
check "events -f prints a new event" wait_for "$tmp/cli-f.out" " submitted *$a2 "
sleep 1
as "$A" cancel "$a2" > /dev/null
for _ in $(seq 100); do kill -0 "$WPID" 2>/dev/null || break; sleep 0.1; done
wait "$WPID"
rc=$?
check "queue -w lists again on events: 3 listings, then --iterations ends it (rc $rc)" \
  [ "$rc" = 0 ] && [ "$(grep -c '^ *ID ' "$tmp/watch.out")" = 3 ]
check "  ... the second listing shows the job submitted meanwhile" \
  [ "$(grep -c "^ *$a2 " "$tmp/watch.out")" -ge 1 ]
check "  ... no polling fallback" not grep -q "instead" "$tmp/watch.err"
# without a stream (alice at her cap of 3: her first stream, events -f, and this one) it polls
curl -s -H "Authorization: Bearer $A" -N "$URL/v1/events" > "$tmp/alice4.out" 2>&1 &
A4PID=$!
wait_for "$tmp/alice4.out" "^: gsched event stream" > /dev/null
expect 0 "no event stream .*too many event streams.*listing every few seconds instead" -- \
  as "$A" queue -w -i 1 --iterations 2
kill "$A4PID"
wait "$A4PID" 2>/dev/null

# the daemon stops: every stream ends cleanly (curl exit 0: the final chunk came)
check "daemon stops while streams are open" d_stop
clean=1
for p in $CPIDS; do
  for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  wait "$p" 2>/dev/null || clean=0
done
check "streams ended cleanly at shutdown" [ "$clean" = 1 ]
for _ in $(seq 50); do kill -0 "$FPID" 2>/dev/null || break; sleep 0.1; done
wait "$FPID"
rc=$?
check "events -f ends when the daemon stops (rc $rc)" [ "$rc" = 0 ]
check "  ... saying how to resume" grep -q "resume with 'gsched events -f --since" "$tmp/cli-f.err"

finish
