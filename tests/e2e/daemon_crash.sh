#!/usr/bin/env bash
# Durability under kill -9.  Two submitters keep submitting jobs (each with its own
# Idempotency-Key, retried until acknowledged) and a canceller cancels some of them, while
# the daemon is killed with SIGKILL at random moments and restarted - sometimes while it
# serves, sometimes a moment after it was started (during restart recovery).  The policy is
# preemptive (tiresias-las with a 1 GPU-second threshold), so kills also land in the
# middle of the preemption protocol (SIGTERM, grace, requeue), and a third of the jobs are
# 2-task gang jobs, so kills land between the tasks of one launch.
#
# Every task appends to a ledger the daemon never sees: "S job run task node:gpus us" when
# it starts, "E ..." when it ends, "K ..." when SIGTERM stops it.  The checks trust only the
# ledger and the submitters' acknowledgements:
#   - no acknowledged job lost: every acknowledged id exists and ends DONE, or CANCELLED
#     when a cancel of it was acknowledged (an acknowledged cancel is never lost either; a
#     cancel whose answer was lost to a kill may or may not have been committed);
#   - no duplicates: exactly one job per idempotency key, no job created twice;
#   - every task start has exactly one end (nothing left running, nothing killed unseen);
#   - no job runs twice at once: the runs of a job never overlap in time, and a DONE job's
#     last run ended normally on every task;
#   - no GPU is double-allocated: per GPU, tasks of different jobs or runs never overlap.
# Bounded: every wait has a deadline (the test takes about 30 s on a fast machine).  The
# deadlines measure progress, not speed: a submitter gives up only after STALL seconds
# without an acknowledgement (or at CAP), so a loaded, sanitizer-slowed machine is slow but
# does not fail; a daemon that cannot be restarted fails the test at once (with its log).
# usage: daemon_crash.sh GSCHED_BIN SOURCE_DIR   (GSCHED_CRASH_SEED=N replays the kill times)
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

seed=${GSCHED_CRASH_SEED:-$$}
RANDOM=$seed
echo "# seed $seed"
NJOBS=40   # per submitter
ROUNDS=10
STALL=90   # seconds without an acknowledged submission before a submitter gives up
CAP=$(( $(date +%s) + 480 ))   # and in any case then (ctest's limit is 600 s)
ledger=$tmp/ledger
: > "$ledger"
# bash: $EPOCHREALTIME is a builtin clock, so a SIGTERM to the task's process group cannot
# kill the clock half-way through a ledger line; the trap writes one K line and no E after.
cat > "$tmp/job.sh" <<'EOF'
me="$GSCHED_JOB_ID $GSCHED_RUN $GSCHED_TASK_INDEX $GSCHED_NODE:$CUDA_VISIBLE_DEVICES"
trap 'trap "" TERM; echo "K $me ${EPOCHREALTIME/[.,]/}" >> "$LEDGER"; exit 143' TERM
echo "S $me ${EPOCHREALTIME/[.,]/}" >> "$LEDGER"
sleep "0.$(( $$ % 5 + 2 ))" &
wait $!
trap "" TERM
echo "E $me ${EPOCHREALTIME/[.,]/}" >> "$LEDGER"
EOF

serve_args=(--cluster 2x4 --policy tiresias-las --set queues=1 --grace 3s)
d_start crash "${serve_args[@]}" || { bad "daemon start"; finish; }

# submitter NAME: NJOBS jobs with keys NAME-0.. (the same key always carries the same spec)
submitter() {
  local who=$1 n=0 id shape deadline=$(( $(date +%s) + STALL ))
  while [ "$n" -lt "$NJOBS" ] && [ "$(date +%s)" -lt "$deadline" ] && [ "$(date +%s)" -lt "$CAP" ]; do
    case $(( n % 3 )) in
      0) shape=(-g 1) ;;
      1) shape=(-g 2) ;;
      2) shape=(--tasks 2 -g 2) ;;
    esac
    if id=$("$bin" submit --parsable --server "$SERVER" \
          --idempotency-key "$who-$n" "${shape[@]}" --name "$who$n" --env LEDGER="$ledger" \
          -- bash "$tmp/job.sh" 2>> "$tmp/submit.err"); then
      echo "$who-$n $id" >> "$tmp/acked"
      n=$((n + 1))
      deadline=$(( $(date +%s) + STALL ))
    fi
    sleep 0.1
  done
}
# canceller: now and then cancel a random acknowledged job; log the acknowledged cancels
# (until the submitters are done)
canceller() {
  local id
  while [ -e "$tmp/cancelling" ] && [ "$(date +%s)" -lt "$CAP" ]; do
    sleep 0.4
    id=$(awk -v r="$RANDOM" 'NR > 0 { v[NR] = $2 } END { if (NR) print v[r % NR + 1] }' "$tmp/acked")
    [ -n "$id" ] || continue
    echo "$id" >> "$tmp/attempted"
    "$bin" cancel --server "$SERVER" "$id" > /dev/null 2>> "$tmp/cancel.err" &&
      echo "$id" >> "$tmp/cancelled"
  done
}
: > "$tmp/acked"
: > "$tmp/cancelled"
: > "$tmp/attempted"
touch "$tmp/cancelling"
submitter a & sub1=$!
submitter b & sub2=$!
canceller & canc=$!

early=0
for round in $(seq "$ROUNDS"); do
  sleep "$(( RANDOM % 2 )).$(( RANDOM % 10 ))"
  d_kill9
  echo "# round $round: killed the daemon with $(wc -l < "$tmp/acked") job(s) acknowledged"
  sleep "0.$(( RANDOM % 5 ))"
  if [ $(( RANDOM % 3 )) = 0 ]; then
    # start it and kill it again a moment later: during startup or restart recovery
    d_spawn crash "${serve_args[@]}"
    sleep "0.$(( RANDOM % 4 ))$(( RANDOM % 10 ))"
    d_kill9
    early=$((early + 1))
    sleep 0.1
  fi
  if ! d_start crash "${serve_args[@]}"; then
    # nothing to check without a daemon: stop the clients (by pid) and fail now
    bad "restart $round"
    rm -f "$tmp/cancelling"
    kill "$sub1" "$sub2" "$canc" 2>/dev/null
    wait "$sub1" "$sub2" "$canc" 2>/dev/null
    finish
  fi
done
echo "# $early kill(s) shortly after a start"

# the submitters end by themselves (all acknowledged, or STALL seconds without progress)
wait "$sub1" "$sub2"
rm -f "$tmp/cancelling"
wait "$canc" 2>/dev/null
wait_idle 300 || bad "jobs still active"

acked=$(wc -l < "$tmp/acked")
check "all $((2 * NJOBS)) submissions acknowledged" [ "$acked" -eq $((2 * NJOBS)) ]
check "some cancels were acknowledged" [ -s "$tmp/cancelled" ]
g queue --all --no-headers --limit 100000 > "$tmp/all"
missing=0 wrong=0
while read -r key id; do
  st=$(awk -v id="$id" '$1 == id { print $5 }' "$tmp/all")
  # acknowledged cancel: CANCELLED; a cancel the daemon may have committed without its answer
  # arriving (killed in between): either; no cancel: DONE
  want=CD
  grep -qx "$id" "$tmp/attempted" && want="CD|CA"
  grep -qx "$id" "$tmp/cancelled" && want=CA
  [ -z "$st" ] && { missing=$((missing + 1)); echo "  $key: job $id missing"; continue; }
  [[ $st =~ ^($want)$ ]] || { wrong=$((wrong + 1)); echo "  $key: job $id is $st, want $want"; }
done < "$tmp/acked"
check "no acknowledged job lost" [ "$missing" -eq 0 ]
check "every job DONE, or CANCELLED after an acknowledged cancel (never without one)" [ "$wrong" -eq 0 ]
check "one job per idempotency key" [ "$(awk '{print $2}' "$tmp/acked" | sort -u | wc -l)" -eq "$acked" ]
check "no job created twice" [ "$(wc -l < "$tmp/all")" -eq "$acked" ]
check "some jobs were preempted" grep -q '^K ' "$ledger"

# Pair every start with its end: "job run task gpus start end how"
awk '$1 == "S" { s[$2" "$3" "$4] = $6; gp[$2" "$3" "$4] = $5 }
     $1 == "E" || $1 == "K" { e[$2" "$3" "$4] = $6; how[$2" "$3" "$4] = $1; n[$2" "$3" "$4]++ }
     END { for (k in s) print k, gp[k], s[k], (k in e) ? e[k] : "-", (k in how) ? how[k] : "-", (k in n) ? n[k] : 0
           for (k in e) if (!(k in s)) print k, "-", "-", e[k], how[k], n[k] }' "$ledger" > "$tmp/runs"
# (a task stopped by SIGTERM before it wrote its start line writes only a K line: harmless)
check "every task start has exactly one end" [ "$(awk '$5 != "-" && ($6 == "-" || $8 != 1) || $5 == "-" && $7 != "K"' "$tmp/runs" | tee "$tmp/unpaired" | wc -l)" = 0 ]
sed 's/^/  unpaired: /' "$tmp/unpaired" | head -5

# the runs of one job (per task) never overlap
overlap_runs=$(sort -k1,1n -k3,3n -k5,5n "$tmp/runs" | awk '
  $5 == "-" || $6 == "-" { next }
  { k = $1 " " $3
    if ((k in last) && $5 < last[k]) { bad++; print "  job " $1 " task " $3 ": run " $2 " started before run " lr[k] " ended" > "/dev/stderr" }
    if (!(k in last) || $6 > last[k]) { last[k] = $6; lr[k] = $2 } }
  END { print bad + 0 }')
check "no job ran twice at once" [ "$overlap_runs" = 0 ]

# a DONE job: every task of its last run ended normally
notdone_ok=0
while read -r key id; do
  [ "$(awk -v id="$id" '$1 == id { print $5 }' "$tmp/all")" = CD ] || continue
  last=$(awk -v id="$id" '$1 == id && $2 > m { m = $2 } END { print m + 0 }' "$tmp/runs")
  ends=$(awk -v id="$id" -v r="$last" '$1 == id && $2 == r && $7 == "E"' "$tmp/runs" | wc -l)
  tasks=$(awk -v id="$id" -v r="$last" '$1 == id && $2 == r' "$tmp/runs" | wc -l)
  if [ "$last" = 0 ] || [ "$ends" != "$tasks" ]; then
    notdone_ok=$((notdone_ok + 1)); echo "  job $id: last run $last, $ends of $tasks task(s) ended normally"
  fi
done < "$tmp/acked"
check "every DONE job's last run completed on all its tasks" [ "$notdone_ok" = 0 ]

# per GPU, tasks of different (job, run) never overlap
overlaps=$(awk '
  $5 == "-" || $6 == "-" { next }
  { split($4, ng, ":"); k = split(ng[2], gl, ",")
    for (i = 1; i <= k; i++) { n++; G[n] = ng[1] ":" gl[i]; A[n] = $5; B[n] = $6; J[n] = $1 "." $2 } }
  END {
    bad = 0
    for (x = 1; x <= n; x++) for (y = x + 1; y <= n; y++)
      if (G[x] == G[y] && J[x] != J[y] && A[x] < B[y] && A[y] < B[x]) {
        bad++; print "  GPU " G[x] ": job.run " J[x] " and " J[y] " overlap" > "/dev/stderr"
      }
    print bad
  }' "$tmp/runs")
check "no GPU double-allocated" [ "$overlaps" = 0 ]
d_stop || bad "graceful stop"
check "the daemon logged its recoveries" grep -q "recovered" "$DDIR/daemon.log"
# GSCHED_CRASH_KEEP=DIR keeps the ledger, acknowledgements and daemon state for a look
[ -n "${GSCHED_CRASH_KEEP:-}" ] && rm -rf "$GSCHED_CRASH_KEEP" && cp -r "$tmp" "$GSCHED_CRASH_KEEP"
finish
