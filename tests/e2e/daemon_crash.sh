#!/usr/bin/env bash
# Durability under kill -9: a submitter keeps submitting jobs (each with its own
# Idempotency-Key, retried until acknowledged) while the daemon is killed with SIGKILL at
# random moments and restarted.  Every job appends "S/E job run gpus time" to a ledger of
# its own, so the checks do not trust the daemon:
#   - no acknowledged job is lost: every acknowledged id exists and ends DONE;
#   - no duplicates: exactly one job per idempotency key;
#   - no job runs twice: one start and one end line per job;
#   - no GPU is double-allocated: per GPU, runs of different jobs never overlap in time.
# usage: daemon_crash.sh GSCHED_BIN SOURCE_DIR   (GSCHED_CRASH_SEED=N to replay a run)
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

seed=${GSCHED_CRASH_SEED:-$$}
RANDOM=$seed
echo "# seed $seed"
NJOBS=60
ROUNDS=8
ledger=$tmp/ledger
: > "$ledger"
cat > "$tmp/job.sh" <<'EOF'
echo "S $GSCHED_JOB_ID $GSCHED_RUN $CUDA_VISIBLE_DEVICES $(date +%s%N)" >> "$LEDGER"
sleep "0.$(( $$ % 5 + 2 ))"
echo "E $GSCHED_JOB_ID $GSCHED_RUN $CUDA_VISIBLE_DEVICES $(date +%s%N)" >> "$LEDGER"
EOF

serve_args=(--cluster 1x4 --policy fifo-backfill --grace 1s)
d_start crash "${serve_args[@]}" || { bad "daemon start"; finish; }

submitter() {
  local n=0 id port deadline=$(( $(date +%s) + 150 ))
  while [ "$n" -lt "$NJOBS" ] && [ "$(date +%s)" -lt "$deadline" ]; do
    port=$(cat "$DDIR/port" 2>/dev/null)
    # the same key always carries the same request (gpus derived from n)
    if [ -n "$port" ] && id=$("$bin" submit --parsable --server "http://127.0.0.1:$port" \
          --idempotency-key "key-$n" -g $(( n % 2 + 1 )) --name "j$n" -e LEDGER="$ledger" \
          -- sh "$tmp/job.sh" 2>> "$tmp/submit.err"); then
      echo "key-$n $id" >> "$tmp/acked"
      n=$((n + 1))
      sleep 0.1   # a steady stream, so kills land in the middle of it
    else
      sleep 0.1
    fi
  done
}
: > "$tmp/acked"
submitter &
subpid=$!

for round in $(seq "$ROUNDS"); do
  sleep "$(( RANDOM % 2 )).$(( RANDOM % 10 ))"
  d_kill9
  echo "# round $round: killed the daemon with $(wc -l < "$tmp/acked") job(s) acknowledged"
  sleep "0.$(( RANDOM % 5 ))"
  d_start crash "${serve_args[@]}" || { bad "restart $round"; break; }
done

for _ in $(seq 1500); do kill -0 "$subpid" 2>/dev/null || break; sleep 0.1; done
kill "$subpid" 2>/dev/null
wait "$subpid" 2>/dev/null
wait_idle 120 || bad "jobs still active"

acked=$(wc -l < "$tmp/acked")
check "all $NJOBS submissions acknowledged" [ "$acked" -eq "$NJOBS" ]
g queue --all --no-headers --limit 100000 > "$tmp/all"
missing=0 notdone=0
while read -r key id; do
  st=$(awk -v id="$id" '$1 == id { print $5 }' "$tmp/all")
  [ -z "$st" ] && { missing=$((missing + 1)); echo "  $key: job $id missing"; }
  [ -n "$st" ] && [ "$st" != CD ] && { notdone=$((notdone + 1)); echo "  $key: job $id is $st"; }
done < "$tmp/acked"
check "no acknowledged job lost" [ "$missing" -eq 0 ]
check "every acknowledged job done" [ "$notdone" -eq 0 ]
check "one job per idempotency key" [ "$(awk '{print $2}' "$tmp/acked" | sort -u | wc -l)" -eq "$acked" ]
check "no job created twice" [ "$(wc -l < "$tmp/all")" -eq "$acked" ]

# each job started and ended exactly once
runs_ok=$(awk '$1 == "S" { s[$2]++ } $1 == "E" { e[$2]++ }
  END { bad = 0; for (j in s) if (s[j] != 1 || e[j] != 1) { bad++; print "  job " j ": " s[j] " start(s), " e[j] " end(s)" > "/dev/stderr" }
        for (j in e) if (!(j in s)) bad++; print bad }' "$ledger")
check "no job ran twice (one start, one end each)" [ "$runs_ok" = 0 ]
check "every acknowledged job ran" [ "$(awk '$1 == "S" { print $2 }' "$ledger" | sort -u | wc -l)" -eq "$acked" ]

# per GPU, intervals of different jobs never overlap
overlaps=$(awk '
  $1 == "S" { start[$2] = $5; gpus[$2] = $4 }
  $1 == "E" { end[$2] = $5 }
  END {
    n = 0
    for (j in start) {
      k = split(gpus[j], g, ",")
      for (i = 1; i <= k; i++) { n++; G[n] = g[i]; A[n] = start[j]; B[n] = (j in end) ? end[j] : 9e18; J[n] = j }
    }
    bad = 0
    for (x = 1; x <= n; x++) for (y = x + 1; y <= n; y++)
      if (G[x] == G[y] && J[x] != J[y] && A[x] < B[y] && A[y] < B[x]) {
        bad++; print "  GPU " G[x] ": jobs " J[x] " and " J[y] " overlap" > "/dev/stderr"
      }
    print bad
  }' "$ledger")
check "no GPU double-allocated" [ "$overlaps" = 0 ]
d_stop || bad "graceful stop"
check "the daemon logged its recoveries" grep -q "recovered" "$DDIR/daemon.log"
finish
