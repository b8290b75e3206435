#!/usr/bin/env bash
# The live elastic controller (issue 13, docs/elastic.md) end to end, with a shell worker that
# honours the protocol: each task logs its environment, rank 0 appends hint lines to
# $GSCHED_HINTS (with garbage lines among them) and, on SIGTERM, saves its step to
# $GSCHED_CHECKPOINT_DIR, copies $GSCHED_CONTROL and exits 143; a new generation resumes from
# the checkpoint.
#   - `gsched resize` 1 -> 2 -> 1 GPUs: DRAINING, relaunched as generation 2 with 2 ranks
#     (WORLD_SIZE, RANK, GSCHED_NUM_GPUS, a new MASTER_PORT, the same checkpoint directory),
#     then generation 3 on 1; the control file said the target; no step lost; LAUNCHING until
#     the first hint of a generation; describe shows each resize with its kind and reason;
#   - 4xx: a rigid job (409), a size not in --sizes or past --max-gpus (400), a pending job
#     (409), a bad body (400);
#   - kill -9 of the daemon while a job is DRAINING (its worker takes its time to checkpoint):
#     after the restart it is still DRAINING on the same reservation, a rigid job submitted
#     then gets only GPUs nobody holds or reserved, and once the worker exits the job is
#     relaunched on its reserved GPUs; no GPU is used by two jobs at once;
#   - a worker that ignores SIGTERM is SIGKILLed at the drain timeout (forced) and relaunched.
# usage: elastic_resize.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

ledger=$tmp/ledger
: > "$ledger"
# the worker: $1 = go file (exists: may exit on SIGTERM; absent: waits for it first),
# $2 = done file (exists: finish with 0), $3 = 1: ignore SIGTERM altogether
cat > "$tmp/worker.sh" <<'EOF'
#!/bin/sh
L=LEDGER
go=$1 done=$2 deaf=${3:-0}
echo "start job=$GSCHED_JOB_ID gen=$GSCHED_GENERATION rank=$RANK world=$WORLD_SIZE gpus=$GSCHED_NUM_GPUS port=$MASTER_PORT cuda=$CUDA_VISIBLE_DEVICES ckpt=$GSCHED_CHECKPOINT_DIR local=$LOCAL_RANK" >> $L
term=
if [ "$deaf" = 1 ]; then trap '' TERM; else trap 'term=1' TERM; fi
step=$(cat "$GSCHED_CHECKPOINT_DIR/step" 2>/dev/null || echo 0)
echo "resume job=$GSCHED_JOB_ID gen=$GSCHED_GENERATION rank=$RANK step=$step" >> $L
first=1
while [ -z "$term" ] && [ ! -e "$done" ]; do
  step=$((step + 1))
  if [ "$RANK" = 0 ]; then
    [ -n "$first" ] && printf 'not json\n{"step": "x"}\n[1,2]\n' >> "$GSCHED_HINTS"
    first=
    echo "{\"step\":$step,\"samples\":$((step * 32)),\"step_time\":0.1,\"sync_time\":0.01,\"local_bsz\":32,\"accum\":1,\"generation\":$GSCHED_GENERATION}" >> "$GSCHED_HINTS"
  fi
  sleep 0.1
done
if [ -e "$done" ]; then echo "done job=$GSCHED_JOB_ID gen=$GSCHED_GENERATION rank=$RANK step=$step" >> $L; exit 0; fi
if [ "$RANK" = 0 ]; then
  while [ ! -e "$go" ]; do sleep 0.1; done
  echo "$step" > "$GSCHED_CHECKPOINT_DIR/step.tmp" && mv "$GSCHED_CHECKPOINT_DIR/step.tmp" "$GSCHED_CHECKPOINT_DIR/step"
  echo "{\"step\":$step,\"ckpt_step\":$step}" >> "$GSCHED_HINTS"
  echo "control job=$GSCHED_JOB_ID gen=$GSCHED_GENERATION $(cat "$GSCHED_CONTROL")" >> $L
fi
echo "saved job=$GSCHED_JOB_ID gen=$GSCHED_GENERATION rank=$RANK step=$step" >> $L
exit 143
EOF
sed -i "s|LEDGER|$ledger|" "$tmp/worker.sh"
chmod +x "$tmp/worker.sh"

d_start el --cluster 1x4 --policy fifo || exit 1
go=$tmp/go done=$tmp/done
touch "$go"
id=$(gsub --gpus 1-4 --sizes 1,2,4 --name el -- "$tmp/worker.sh" "$go" "$done")
check "elastic job submitted" [ -n "$id" ]
wait_state "$id" RUNNING 30
# LAUNCHING until the first hint, then RUNNING; garbage lines are counted, not fatal
phase() { "$bin" describe job "$1" --server "$SERVER" | awk '/^  Phase:/ {print $2; exit}'; }
wait_phase() {
  for _ in $(seq 300); do [ "$(phase "$1")" = "$2" ] && return 0; sleep 0.1; done
  echo "  job $1: phase $(phase "$1"), wanted $2"; return 1
}
check "phase RUNNING after the first hint" wait_phase "$id" RUNNING
check "garbage hint lines counted" bash -c "'$bin' describe job $id --server '$SERVER' | grep -q 'Hints:.* 3 ignored'"
check "generation 1 on 1 GPU" grep -q "start job=$id gen=1 rank=0 world=1 gpus=1 " "$ledger"

# ---- 4xx ----
rigid=$(gsub --gpus 1 --name rigid -- sleep 30)
wait_state "$rigid" RUNNING 30
expect 1 "not elastic" -- g resize "$rigid" --gpus 2
expect 2 "'gpus': 3 is not a size of job $id \(sizes: 1,2,4\)" -- g resize "$id" --gpus 3
expect 2 "'gpus': 8 is not a size" -- g resize "$id" --gpus 8
post() { dcurl -s -o /dev/null -w '%{http_code}' -X POST -H 'X-Gsched-Client: 1' \
  -H 'Content-Type: application/json' -d "$2" "$URL$1"; }
check "bad body: 400" [ "$(post "/v1/jobs/$id/resize" '{"gpus": "two"}')" = 400 ]
check "unknown job: 404" [ "$(post /v1/jobs/999/resize '{"gpus": 2}')" = 404 ]
g cancel "$rigid" > /dev/null
wait_state "$rigid" CANCELLED 30
pend=$(gsub --gpus 2-4 --hold --name pend -- true)
expect 1 "only a running job" -- g resize "$pend" --gpus 4
g cancel "$pend" > /dev/null

# ---- 1 -> 2 -> 1 ----
expect 0 "Resizing job $id: 1 -> 2 GPUs" -- g resize "$id" --gpus 2
gen_running() { # id gen: wait until generation gen reported its first step
  for _ in $(seq 300); do
    if [ "$(field "$1" "  Generation")" = "$2" ] && [ "$(phase "$1")" = RUNNING ]; then return 0; fi
    sleep 0.1
  done
  echo "  job $1: generation $(field "$1" "  Generation") phase $(phase "$1"), wanted $2 RUNNING"
  return 1
}
check "generation 2 running" gen_running "$id" 2
check "generation 2: 2 ranks" bash -c "grep -c 'start job=$id gen=2 rank=[01] world=2 gpus=2 ' '$ledger' | grep -qx 2"
check "control file said the target" grep -q "control job=$id gen=1 {\"generation\":1,\"target_gpus\":2," "$ledger"
p1=$(sed -n "s/^start job=$id gen=1 .*port=\([0-9]*\) .*/\1/p" "$ledger" | head -1)
p2=$(sed -n "s/^start job=$id gen=2 rank=0 .*port=\([0-9]*\) .*/\1/p" "$ledger" | head -1)
check "a new MASTER_PORT per generation ($p1, $p2)" [ -n "$p1" ] && [ "$p1" != "$p2" ]
c1=$(sed -n "s/^start job=$id gen=1 .*ckpt=\([^ ]*\) .*/\1/p" "$ledger" | head -1)
c2=$(sed -n "s/^start job=$id gen=2 rank=1 .*ckpt=\([^ ]*\) .*/\1/p" "$ledger" | head -1)
check "the same checkpoint directory ($c1)" [ -n "$c1" ] && [ "$c1" = "$c2" ]
s1=$(sed -n "s/^saved job=$id gen=1 rank=0 step=\([0-9]*\)/\1/p" "$ledger")
r2=$(sed -n "s/^resume job=$id gen=2 rank=0 step=\([0-9]*\)/\1/p" "$ledger")
check "generation 2 resumed at the saved step ($s1)" [ -n "$s1" ] && [ "$s1" = "$r2" ]
expect 0 "1 -> 2|2 -> 1" -- g resize "$id" --gpus 1
check "generation 3 running" gen_running "$id" 3
check "generation 3: 1 rank" grep -q "start job=$id gen=3 rank=0 world=1 gpus=1 " "$ledger"
out=$("$bin" describe job "$id" --server "$SERVER")
check "describe: resizes with kind and reason" contains "$out" "operator rescale 2 -> 1 GPUs (generation 2): resized by"
check "describe: relaunched events" contains "$out" "relaunched"
check "describe: checkpoint from hints" bash -c "echo '$out' | grep -q '^  Checkpoint: *[0-9]'"
check "describe: rescales counted" bash -c "echo '$out' | grep -Eq '^  Rescales: +2 '"
check "describe: the drained generation checkpointed" contains "$out" "generation 2 checkpointed (exit code 143)"
touch "$done"
wait_state "$id" DONE 30
check "job done" [ "$(state "$id")" = DONE ]

# ---- kill -9 while DRAINING ----
rm -f "$go" "$done"
id2=$(gsub --gpus 1-2 --drain-timeout 60 --name slow -- "$tmp/worker.sh" "$go" "$done")
wait_state "$id2" RUNNING 30
check "slow: running" wait_phase "$id2" RUNNING
expect 0 "1 -> 2 GPUs" -- g resize "$id2" --gpus 2
wait_state "$id2" DRAINING 30
gpus_of() { dcurl -s "$URL/v1/nodes?gpus=1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for n in d["nodes"]:
    for g in n.get("gpu_list", []):
        print(g.get("index", g.get("local")), g.get("job"))
'; }
before=$(gpus_of | sort)
d_kill9
d_start el --cluster 1x4 --policy fifo || exit 1
wait_state "$id2" DRAINING 30
check "still DRAINING after kill -9" [ "$(state "$id2")" = DRAINING ]
after=$(gpus_of | sort)
check "the same GPUs held and reserved after the restart" [ "$before" = "$after" ]
busy=$(echo "$after" | awk -v j="$id2" '$2 == j' | wc -l)
check "2 GPUs held by the draining job (1 + 1 reserved)" [ "$busy" = 2 ]
other=$(gsub --gpus 2 --name other -- sh -c "echo \"other cuda=\$CUDA_VISIBLE_DEVICES\" >> '$ledger'; sleep 30")
wait_state "$other" RUNNING 30
touch "$go"
check "relaunched after the restart" gen_running "$id2" 2
oc=$(sed -n 's/^other cuda=//p' "$ledger" | tr ',' '\n')
ec=$(sed -n "s/^start job=$id2 gen=2 rank=[01] .*cuda=\([0-9]*\) .*/\1/p" "$ledger")
all=$(printf '%s\n%s\n' "$oc" "$ec" | sort -n | tr '\n' ' ')
check "no GPU used by two jobs ($all)" [ "$all" = "0 1 2 3 " ]
touch "$done"
wait_state "$id2" DONE 30
g cancel "$other" > /dev/null

# ---- a worker that ignores SIGTERM: SIGKILL at the drain timeout ----
rm -f "$done"
id3=$(gsub --gpus 1-2 --drain-timeout 1 --name deaf -- "$tmp/worker.sh" "$go" "$done" 1)
wait_state "$id3" RUNNING 30
check "deaf: running" wait_phase "$id3" RUNNING
expect 0 "1 -> 2 GPUs" -- g resize "$id3" --gpus 2
check "deaf: relaunched" gen_running "$id3" 2
out=$("$bin" describe job "$id3" --server "$SERVER")
check "deaf: forced (SIGKILL after the drain timeout)" contains "$out" "forced"
touch "$done"
wait_state "$id3" DONE 30
d_stop
check "daemon stopped cleanly" true
finish
