#!/usr/bin/env bash
# bench/bench_elastic_live.sh - rescale latency of a live elastic job (`make bench-elastic-live`):
# a real PyTorch DDP job on the CPU (contrib/elastic/train_ddp.py with gsched_elastic.py, gloo),
# elastic 1..2 GPUs, under `gsched serve --cluster 1x2` (fake GPUs), resized RUNS times by the
# operator, alternately 1 -> 2 and 2 -> 1 (`gsched resize`: the decision is the engine's
# gs_engine_rescale in the cycle that takes the request).
#
# Per rescale, from the decision (the moment `gsched resize` is sent; its answer comes once the
# DRAIN is committed) to, as the daemon's job events and the job's log say:
#   exited    event "rescaled": every task of the old generation has exited 143 (the step in
#             progress, the checkpoint, the process exit) and the daemon has seen it (RESIZING);
#   launched  event "relaunched": the new generation's tasks are started;
#   ready     rank 0 has restored the checkpoint (its "start at step" line): Python and torch
#             imports, the process group's rendezvous, the load;
#   step      rank 0 has logged its first step at the new size: **the rescale latency**.
# Times: the job logs time.time() ('--log-time'), the events carry the daemon's wall clock
# (time_us), the bench takes $EPOCHREALTIME: one clock, one machine.  Prints
# one line per rescale and the medians (overall and per direction).
#
# usage: bench/bench_elastic_live.sh [--runs N] [--step-time S] [--policy P]
# Environment: GSCHED_BIN (build/gsched), BENCH_DIR (/tmp/gs-elastic-bench, kept after the run:
# the daemon's log, the job's logs).  The daemon and the job are stopped by PID at the end.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
GSCHED=${GSCHED_BIN:-$ROOT/build/gsched}
D=${BENCH_DIR:-/tmp/gs-elastic-bench}
RUNS=10 STEP_TIME=0.02 POLICY=fifo
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --step-time) STEP_TIME=$2; shift 2 ;;
    --policy) POLICY=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_elastic_live.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
  esac
done
PY=""
for p in "$(command -v python3)" /usr/bin/python3; do
  [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import torch' 2> /dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || { echo "bench_elastic_live.sh: needs python3-torch (apt-get install python3-torch)" >&2; exit 1; }
[ -x "$GSCHED" ] || { echo "bench_elastic_live.sh: no $GSCHED (make build)" >&2; exit 1; }

rm -rf "$D"
mkdir -p "$D"
SERVER=unix:$D/gsched.sock
"$GSCHED" serve --cluster 1x2 --policy "$POLICY" --db "$D/gsched.db" --socket "$D/gsched.sock" \
  --log-dir "$D/logs" --single-user > "$D/daemon.log" 2>&1 &
DPID=$!
JOB=""
cleanup() {
  [ -n "$JOB" ] && "$GSCHED" cancel "$JOB" --server "$SERVER" > /dev/null 2>&1 || true
  for _ in $(seq 100); do
    [ -z "$JOB" ] && break
    "$GSCHED" describe job "$JOB" --server "$SERVER" 2> /dev/null | grep -q '^State: *CANCELLED' && break
    sleep 0.1
  done
  kill -TERM "$DPID" 2> /dev/null || true
  wait "$DPID" 2> /dev/null || true
}
trap cleanup EXIT
for _ in $(seq 200); do [ -S "$D/gsched.sock" ] && break; sleep 0.05; done
g() { "$GSCHED" "$1" --server "$SERVER" "${@:2}"; }

JOB=$(g submit --parsable --name bench --gpus 1-2 --checkpoint-dir "$D/ckpt" --env OMP_NUM_THREADS=1 \
  -- "$PY" "$ROOT/contrib/elastic/train_ddp.py" --steps 100000000 --step-time "$STEP_TIME" \
  --device cpu --log-time)
# wait_gen GEN SECS: rank 0 logged a step in generation GEN
wait_gen() {
  for _ in $(seq $(($2 * 20))); do
    g logs "$JOB" --task 0 2> /dev/null | awk -v g="$1" '$1 == "step" && $8 == g { f = 1 } END { exit !f }' && return 0
    sleep 0.05
  done
  echo "bench_elastic_live.sh: no step of generation $1 within $2 s; the job's log:" >&2
  g logs "$JOB" --task 0 | tail -20 >&2
  exit 1
}
wait_gen 1 120
world=$(g logs "$JOB" --task 0 | awk '$1 == "step" { w = $6 } END { print w }')
echo "# policy $POLICY, step time $STEP_TIME s, $RUNS rescales, torch $("$PY" -c 'import torch; print(torch.__version__)'), $(nproc) CPU(s)"
: > "$D/decisions"
for i in $(seq "$RUNS"); do
  sleep 2 # a few steps at this size
  want=$((3 - world))
  echo "$((i + 1)) $world $want ${EPOCHREALTIME/,/.}" >> "$D/decisions"
  g resize "$JOB" --gpus "$want" > /dev/null
  wait_gen $((i + 1)) 120
  world=$want
done
g logs "$JOB" --task 0 > "$D/rank0.log"
g describe job "$JOB" --json > "$D/job.json"

"$PY" - "$D/decisions" "$D/rank0.log" "$D/job.json" << 'EOF'
import json, statistics, sys

dec = [l.split() for l in open(sys.argv[1])]
log = open(sys.argv[2]).read().splitlines()
ev = json.load(open(sys.argv[3])).get("events", [])
rows = []
def after(kind, t):  # the first event of this type at or after t
    return min((e["time_us"] / 1e6 for e in ev if e["type"] == kind and e["time_us"] / 1e6 >= t - 0.002), default=float("nan"))
for gen, old, new, t0 in dec:
    gen, t0 = int(gen), float(t0)
    first = next(float(l.split()[-1]) for l in log if l.startswith("step ") and l.split()[7] == str(gen))
    ready = next(float(l.split()[-1]) for l in log if l.startswith("start at step") and l.split()[9] == str(gen))
    exited = after("rescaled", t0)
    launched = after("relaunched", exited)
    rows.append((f"{old}->{new}", exited - t0, launched - t0, ready - t0, first - t0))
cols = ("exited", "launched", "ready", "step")
print(f"{'rescale':8}" + "".join(f"{c:>10}" for c in cols) + "   (seconds from the decision)")
for r in rows:
    print(f"{r[0]:8}" + "".join(f"{v:10.3f}" for v in r[1:]))
for name, sel in (("median", rows), ("1->2", [r for r in rows if r[0] == "1->2"]), ("2->1", [r for r in rows if r[0] == "2->1"])):
    if sel:
        print(f"{name:8}" + "".join(f"{statistics.median(r[k] for r in sel):10.3f}" for k in range(1, 5)) + f"   ({len(sel)} rescales)")
EOF
