#!/usr/bin/env bash
# kill -9 of the daemon in the middle of an elastic rescale (issue 13, item 7), with a real
# PyTorch DDP job (contrib/elastic/train_ddp.py, CPU, gloo) elastic 1..2 on 3 fake GPUs, while a
# stream of 1-GPU rigid jobs takes whatever GPU is free.  The elastic job is resized by the
# operator (`gsched resize`, 1 -> 2 and 2 -> 1 at each crash point), and the daemon is killed
# with SIGKILL at one crash point per resize, then restarted on the same database and state:
#   draining  the job is DRAINING, its workers still up (after their checkpoint they wait
#             --exit-delay seconds before exiting 143): the test kills once it sees DRAINING;
#   exiting   an old worker kills the daemon itself as it exits 143 (its wrapper, just before
#             it ends): the drain ends while no daemon runs, the next one finds the exits;
#   starting  the first task of the new generation kills the daemon as it starts: the daemon
#             is in the middle of RESIZING and launching (other tasks may not be started yet);
#   launching the new generation runs but has not trained yet (--start-delay): the test kills
#             once the new generation's first task has started.
# Every task (the elastic job's ranks through a wrapper, the rigid jobs) appends to a ledger
# the daemon never sees: "S job.generation task node:gpus us" at start, "E ... us rc" at exit.
# Checks: after every restart, gsched's own views (the GPUs of the node and the placements of
# the running jobs) never give a GPU to two jobs; from the ledger, no GPU was used by two
# jobs, or by two generations of the elastic job, at the same time; every rescale reached its
# new size; the job then runs to completion with every step 0..N-1 exactly once in rank 0's
# log (a cooperating worker loses nothing, whatever the daemon went through), at the loss of
# an uninterrupted run.  Bounded waits, loopback only, every process stopped by pid.
# Skips (77) only where python3-torch is missing.
# usage: elastic_crash.sh GSCHED_BIN SOURCE_DIR   (GSCHED_ELASTIC_POLICY=NAME: the policy)
set -u
bin=$1 src=$2
. "$src/tests/e2e/lib/elastic.sh" # PY (a python3 with torch) or exit 77
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

N=400
ledger=$tmp/ledger
: > "$ledger"
# the elastic job's task: a wrapper that writes the ledger around the training process (bash
# defers a trapped SIGTERM until its foreground child exits, so the E line is always written)
# When the test has put "WHEN PID" into $tmp/killpoint, the first task to reach WHEN (start,
# exit) takes the file (mv: only one does) and kills the daemon PID with SIGKILL.
cat > "$tmp/task.sh" << EOF
me="\$GSCHED_JOB_ID.\${GSCHED_GENERATION:-\$GSCHED_RUN} \$GSCHED_TASK_INDEX \$GSCHED_NODE:\$CUDA_VISIBLE_DEVICES"
killpoint() {
  local when pid
  read -r when pid < "$tmp/killpoint" 2> /dev/null || return 0
  [ "\$when" = "\$1" ] && mv "$tmp/killpoint" "$tmp/killpoint.\$\$" 2> /dev/null && kill -KILL "\$pid"
}
trap : TERM
echo "S \$me \${EPOCHREALTIME/[.,]/}" >> "$ledger"
killpoint start
"$PY" "$src/contrib/elastic/train_ddp.py" --steps $N --step-time 0.1 --device cpu \
  --start-delay 2 --exit-delay 1
rc=\$?
echo "E \$me \${EPOCHREALTIME/[.,]/} \$rc" >> "$ledger"
killpoint exit
exit \$rc
EOF
cat > "$tmp/rigid.sh" << EOF
me="\$GSCHED_JOB_ID.\$GSCHED_RUN \$GSCHED_TASK_INDEX \$GSCHED_NODE:\$CUDA_VISIBLE_DEVICES"
trap 'echo "E \$me \${EPOCHREALTIME/[.,]/} 143" >> "$ledger"; exit 143' TERM
echo "S \$me \${EPOCHREALTIME/[.,]/}" >> "$ledger"
sleep 1.5 & wait \$!
trap "" TERM
echo "E \$me \${EPOCHREALTIME/[.,]/} 0" >> "$ledger"
EOF

GSCHED_CHECKPOINT_DIR=$tmp/refck "$PY" "$src/contrib/elastic/train_ddp.py" --steps "$N" \
  --device cpu > "$tmp/ref.log" 2>&1 || { bad "reference run"; cat "$tmp/ref.log"; finish; }

serve_args=(--cluster 1x3 --policy fifo --grace 30s)
d_start crash "${serve_args[@]}" || { bad "daemon start"; finish; }
id=$(gsub --name elastic --gpus 1-2 --checkpoint-dir "$tmp/ckpt" --env OMP_NUM_THREADS=1 \
  -- bash "$tmp/task.sh")
check "elastic job submitted" [ -n "$id" ]

# the rigid stream: one 1-GPU job at a time (submits fail while the daemon is down: retried)
touch "$tmp/streaming"
(
  n=0
  while [ -e "$tmp/streaming" ] && [ "$n" -lt 300 ]; do
    if r=$("$bin" submit --parsable --server "$SERVER" --name rigid -g 1 -- bash "$tmp/rigid.sh" 2> /dev/null); then
      n=$((n + 1))
      for _ in $(seq 100); do
        st=$("$bin" describe job "$r" --server "$SERVER" 2> /dev/null | awk '/^State:/ { print $2 }')
        case $st in DONE | FAILED | CANCELLED | REJECTED) break ;; esac
        [ -e "$tmp/streaming" ] || break
        sleep 0.2
      done
    fi
    sleep 0.3
  done
) &
stream=$!

# last_step: the last step rank 0 logged, and its world size
last() { g logs "$id" --task 0 2> /dev/null | awk '$1 == "step" { s = $2; w = $6 } END { print s + 0, w + 0 }'; }
# steps_at WORLD MIN SECS: wait until rank 0 logged a step >= MIN at WORLD
steps_at() {
  local w=$1 min=$2 secs=$3 cur
  for _ in $(seq $((secs * 5))); do
    cur=$(last)
    [ "${cur#* }" = "$w" ] && [ "${cur% *}" -ge "$min" ] && return 0
    sleep 0.2
  done
  echo "  no step >= $min at world $w within ${secs}s (last: $cur)"
  return 1
}

# views: from gsched itself, no GPU of n0 held by two jobs (running jobs' placements disjoint,
# the node's view agrees)
views_ok() {
  g queue --json > "$tmp/q.json" 2> /dev/null || { echo "  queue: daemon unreachable"; return 1; }
  "$PY" - "$tmp/q.json" << 'EOF'
import json, re, sys
seen, bad = {}, 0
for j in json.load(open(sys.argv[1]))["jobs"]:
    for part in (j.get("placement") or "").split() if isinstance(j.get("placement"), str) else []:
        node, gpus = part.split(":")
        for r in gpus.split(","):
            a, _, b = r.partition("-")
            for g in range(int(a), int(b or a) + 1):
                if (node, g) in seen:
                    print(f"  GPU {node}:{g} held by jobs {seen[(node, g)]} and {j['id']}"); bad += 1
                seen[(node, g)] = j["id"]
sys.exit(1 if bad else 0)
EOF
}

check "elastic job trains at 1" steps_at 1 5 120
round=0
for point in draining exiting starting launching; do
  for want in 2 1; do
    round=$((round + 1))
    before=$(wc -l < "$ledger")
    rm -f "$tmp"/killpoint*
    case $point in
      exiting) echo "exit $DPID" > "$tmp/killpoint" ;;
      starting) echo "start $DPID" > "$tmp/killpoint" ;;
    esac
    # the operator's resize (retried while the daemon refuses: a previous rescale not settled)
    ok=0
    for _ in $(seq 100); do
      g resize "$id" --gpus "$want" > "$tmp/resize.out" 2>&1 && { ok=1; break; }
      sleep 0.2
    done
    [ "$ok" = 1 ] || { bad "round $round: resize to $want: $(cat "$tmp/resize.out")"; break 2; }
    case $point in
      draining)
        wait_state "$id" DRAINING 60 || { bad "round $round: DRAINING"; break 2; }
        d_kill9
        ;;
      exiting | starting) # a task kills the daemon: wait for that (bounded)
        { # (2>: no "Killed" notice from bash)
          for _ in $(seq 600); do kill -0 "$DPID" || break; sleep 0.1; done
          kill -0 "$DPID" && bad "round $round: no task killed the daemon at $point"
          d_kill9
        } 2> /dev/null
        ;;
      launching) # the new generation's first S line
        for _ in $(seq 600); do
          tail -n +$((before + 1)) "$ledger" | grep -q "^S $id\." && break
          sleep 0.05
        done
        d_kill9
        ;;
    esac
    echo "# round $round: the daemon was killed at $point, resizing to $want"
    d_start crash "${serve_args[@]}" || { bad "round $round: restart"; break 2; }
    check "round $round ($point -> $want): gsched's views give no GPU to two jobs" views_ok
    s=$(last)
    if steps_at "$want" $((${s% *} + 5)) 120; then
      ok "round $round ($point -> $want): the job trains on at $want GPU(s)"
    else
      bad "round $round ($point -> $want): the job trains on at $want GPU(s)"
      break 2
    fi
    check "round $round: views after the relaunch" views_ok
  done
done

# (after a failed round: no more waiting)
[ "$fail" = 0 ] || g cancel "$id" > /dev/null 2>&1
wait_state "$id" DONE 300 && ok "elastic job DONE" || bad "elastic job DONE"
rm -f "$tmp/streaming"
wait "$stream" 2> /dev/null
wait_idle 60 || bad "jobs still active"

g logs "$id" --task 0 > "$tmp/rank0.log"
awk '$1 == "step"' "$tmp/rank0.log" > "$tmp/steps"
check "every step 0..$((N - 1)) exactly once, in order" \
  [ "$(awk '{ print $2 }' "$tmp/steps" | tr '\n' ' ')" = "$(seq 0 $((N - 1)) | tr '\n' ' ')" ]
bad_loss=$(join <(awk '{ print $2, $4 }' "$tmp/steps" | sort -k1,1) \
  <(awk '$1 == "step" { print $2, $4 }' "$tmp/ref.log" | sort -k1,1) |
  awk '{ d = $2 - $3; if (d < 0) d = -d; if (d > 1e-3 * $3 + 1e-6) n++ } END { print n + 0 }')
check "the loss at every step is the uninterrupted run's" [ "$bad_loss" = 0 ]
check "every generation of the elastic job exited 0 or 143" \
  [ -z "$(awk -v j="$id" '$1 == "E" && index($2, j ".") == 1 && $6 != 0 && $6 != 143' "$ledger")" ]
check "some rigid jobs ran" grep -qv "^. $id\." "$ledger"

# from the ledger: per GPU, tasks of different jobs or generations never overlap in time
awk '$1 == "S" { s[$2" "$3] = $5; gp[$2" "$3] = $4 } $1 == "E" { e[$2" "$3] = $5 }
     END { for (k in s) print k, gp[k], s[k], (k in e) ? e[k] : "-" }' "$ledger" > "$tmp/runs"
check "every task start has its end" [ -z "$(awk '$5 == "-"' "$tmp/runs")" ]
overlaps=$(awk '
  $5 == "-" { next }
  { split($3, ng, ":"); k = split(ng[2], gl, ",")
    for (i = 1; i <= k; i++) { n++; G[n] = ng[1] ":" gl[i]; A[n] = $4; B[n] = $5; J[n] = $1 } }
  END {
    for (x = 1; x <= n; x++) for (y = x + 1; y <= n; y++)
      if (G[x] == G[y] && J[x] != J[y] && A[x] < B[y] && A[y] < B[x]) {
        bad++; print "  GPU " G[x] ": " J[x] " and " J[y] " overlap" > "/dev/stderr"
      }
    print bad + 0
  }' "$tmp/runs")
check "no GPU used by two jobs or two generations at once" [ "$overlaps" = 0 ]
d_stop && ok "graceful stop" || bad "graceful stop"
# GSCHED_CRASH_KEEP=DIR keeps the ledger, the logs and the daemon's state for a look
[ -n "${GSCHED_CRASH_KEEP:-}" ] && rm -rf "$GSCHED_CRASH_KEEP" && cp -r "$tmp" "$GSCHED_CRASH_KEEP"
finish
