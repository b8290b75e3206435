#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/gpu/run.sh - gsched on a real NVIDIA GPU: the checks of docs/gpu.md ("Procedure").
#
# usage: tests/gpu/run.sh GSCHED_BIN SOURCE_DIR OUTDIR [PHASE...]
#   phases (default: all, in this order):
#     discover   `gsched gpus` (NVML discovery and health readings); a daemon without --cluster
#                builds its cluster from NVML: `gsched nodes`, `gsched describe node`
#     ckptapi    `gsched cuda-ckpt suspend|resume` on a PyTorch process holding 1, 4, 16 GiB:
#                time per step, GPU memory freed while checkpointed, training bit-identical
#     protocol   a PyTorch training job preempted with the checkpoint protocol (gsched requeue:
#                SIGTERM, grace, requeue) resumes from its checkpoint and ends with the same
#                parameters as an uninterrupted run
#     timeslice  two training jobs whose memory does not fit on the GPU together, time-sliced by
#                gandiva with checkpoint-based suspend: both finish, bit-identical, with the time
#                of every suspend and resume
#     sigstop    the same two jobs with SIGSTOP time-slicing (executor-opt suspend=sigstop): the
#                second cannot get its memory
# Every check prints "ok - ..." or "not ok - ..."; figures go to OUTDIR/results.txt and the
# daemons' events and logs to OUTDIR/.  Needs an NVIDIA GPU (driver >= 570 for the checkpoint
# API) and python3 with torch; exits 77 (skip) without them.  Sizes of timeslice / sigstop:
# GPU_TS_FREE_GIB (GPU memory left free by a filler process, default 30), GPU_TS_BALLAST_GIB
# (per job, default 55 % of that: two jobs cannot fit together), GPU_TS_STEPS (3000, about 45 s
# of training each), GPU_TS_QUANTUM (gandiva's quantum, 30s).
set -u
bin=$1 src=$2 out=$3
shift 3
phases=${*:-discover ckptapi protocol timeslice sigstop}
mkdir -p "$out"
case $out in /*) ;; *) out=$(cd "$out" && pwd) ;; esac
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L > /dev/null 2>&1; then
  echo "SKIP: no NVIDIA GPU here (nvidia-smi -L fails)"
  exit 77
fi
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2> /dev/null; then
  echo "SKIP: python3 with CUDA-enabled torch is missing"
  exit 77
fi
train=$src/tests/gpu/train.py
# the python3 that has torch, by path: a job's PATH is the daemon's default, not this shell's
py=$(command -v python3)
res=$out/results.txt
note() { echo "$*" | tee -a "$res"; }
note "# gsched real-GPU run, $(date -u +%FT%TZ)"
note "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
gpu_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
used_mib() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; }

# reference: parameters after N steps without interruption
declare -A ref
reference() {
  local steps=$1
  [ -n "${ref[$steps]:-}" ] && return
  ref[$steps]=$(python3 "$train" --steps "$steps" --log-every 100000 | sed -n 's/.*params \([0-9a-f]*\).*/\1/p')
  note "reference: $steps steps -> params ${ref[$steps]}"
}
params_of() { sed -n 's/^done .*params \([0-9a-f]*\).*/\1/p' "$1" | tail -1; }

save_daemon() { # NAME: keep the daemon's log and every job's description
  local name=$1 id
  cp "$DDIR/daemon.log" "$out/$name.daemon.log" 2> /dev/null
  for id in $(g queue --all --no-headers -o %i 2> /dev/null); do
    g describe job "$id" > "$out/$name.job-$id.txt" 2>&1
    g logs "$id" > "$out/$name.job-$id.log" 2>&1
  done
}

for phase in $phases; do
  case $phase in
  discover)
    echo "# discover"
    "$bin" gpus > "$out/gpus.txt" 2>&1
    check "gsched gpus lists the GPU" grep -q "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print $NF}')" "$out/gpus.txt"
    "$bin" gpus --json > "$out/gpus.json" 2>&1
    check "gsched gpus --json is JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$out/gpus.json"
    cat "$out/gpus.txt" | tee -a "$res"
    d_start disc || { bad "daemon on NVML discovery"; continue; }
    g nodes > "$out/nodes.txt" 2>&1
    g describe node "$(hostname)" > "$out/describe-node.txt" 2>&1 || g describe node 0 > "$out/describe-node.txt" 2>&1
    check "the daemon's cluster comes from NVML (gsched nodes)" grep -q "$(nvidia-smi -L | wc -l)" "$out/nodes.txt"
    cat "$out/nodes.txt" "$out/describe-node.txt" | tee -a "$res"
    d_stop || bad "graceful stop"
    ;;
  ckptapi)
    echo "# ckptapi"
    reference 600
    for gib in 1 4 16; do
      log=$tmp/api-$gib.log
      python3 "$train" --steps 600 --ballast-gib "$gib" --log-every 100 --step-sleep 0.01 > "$log" 2>&1 &
      pid=$!
      for _ in $(seq 600); do grep -q '^step 100 ' "$log" && break; sleep 0.1; done
      before=$(used_mib)
      "$bin" cuda-ckpt suspend "$pid" > "$tmp/s.txt" 2>&1
      src_rc=$?
      during=$(used_mib)
      sleep 2
      remap=()
      [ "$gib" = 1 ] && remap=(--remap 0:0) # the remap path of newer drivers, onto the same GPU
      "$bin" cuda-ckpt resume "$pid" "${remap[@]}" > "$tmp/r.txt" 2>&1
      rrc=$?
      after=$(used_mib)
      wait "$pid"
      check "cuda-ckpt suspend + resume ${remap[*]} of a $gib GiB process (rc $src_rc/$rrc)" [ "$src_rc" = 0 ] && [ "$rrc" = 0 ]
      check "... GPU memory freed while checkpointed ($before -> $during -> $after MiB)" [ "$during" -lt $((before / 4 + 100)) ]
      check "... training bit-identical to the uninterrupted run, ballast intact" \
        bash -c "[ '$(params_of "$log")' = '${ref[600]}' ] && grep -q 'ballast ok' '$log'"
      note "ckptapi ${gib}GiB: used ${before} MiB -> ${during} MiB; $(tr '\n' ' ' < "$tmp/s.txt"); $(tr '\n' ' ' < "$tmp/r.txt")"
    done
    ;;
  protocol)
    echo "# protocol"
    reference 1500
    d_start proto --grace 60s || { bad "daemon start"; continue; }
    j=$(gsub --name train -- "$py" "$train" --steps 1500 --log-every 100 --step-sleep 0.005)
    for _ in $(seq 1200); do g logs "$j" 2> /dev/null | grep -q '^step 300 ' && break; sleep 0.1; done
    t0=$(date +%s.%N)
    g requeue "$j" > "$tmp/rq.txt" 2>&1
    check "gsched requeue of the running training job" [ $? = 0 ]
    wait_state "$j" DONE 120 || bad "the requeued job finishes"
    g logs "$j" > "$tmp/proto.log" 2>&1
    check "it saved its checkpoint on SIGTERM" grep -q '^checkpoint saved at step' "$tmp/proto.log"
    check "run 2 resumed from that step" grep -Eq '^start step [1-9][0-9]* run 2' "$tmp/proto.log"
    check "final parameters equal the uninterrupted run's" [ "$(params_of "$tmp/proto.log")" = "${ref[1500]}" ]
    note "protocol: $(grep -E '^(checkpoint saved|start step)' "$tmp/proto.log" | tr '\n' ';')"
    save_daemon proto
    d_stop || bad "graceful stop"
    ;;
  timeslice | sigstop)
    echo "# $phase"
    # A filler process outside gsched leaves GPU_TS_FREE_GIB of the GPU's memory (default 30)
    # free, so the two jobs' checkpoints stay small enough for a short run; each job takes 55 %
    # of that: one fits, two do not.
    free_gib=${GPU_TS_FREE_GIB:-30}
    fill_gib=$(python3 -c "print(max(0, round($gpu_mib / 1024 - $free_gib - 1, 1)))")
    filler_log=$tmp/filler.log
    python3 -c "
import sys, time, torch
x = torch.empty(int($fill_gib * (1 << 30)), dtype=torch.uint8, device='cuda')
print('filler', flush=True)
time.sleep(3600)" > "$filler_log" 2>&1 &
    filler=$!
    for _ in $(seq 600); do grep -q filler "$filler_log" && break; sleep 0.1; done
    ballast=${GPU_TS_BALLAST_GIB:-$(python3 -c "print(round($free_gib * 0.55 - 1, 1))")}
    steps=${GPU_TS_STEPS:-3000}
    reference "$steps"
    mode=cuda
    [ "$phase" = sigstop ] && mode=sigstop
    d_start "$phase" --policy gandiva --set quantum=${GPU_TS_QUANTUM:-30s} \
      --set introspect=${GPU_TS_QUANTUM:-30s} --grace 60s \
      --executor-opt suspend=$mode || { bad "daemon start"; kill "$filler"; continue; }
    note "$phase: GPU memory free besides a ${fill_gib} GiB filler: $((gpu_mib - $(used_mib))) MiB"
    a=$(gsub --name A -- "$py" "$train" --steps "$steps" --ballast-gib "$ballast" --log-every 500 --step-sleep 0.013)
    sleep 5
    b=$(gsub --name B -- "$py" "$train" --steps "$steps" --ballast-gib "$ballast" --log-every 500 --step-sleep 0.013)
    note "$phase: two jobs of ${ballast} GiB ballast each, $steps steps, quantum ${GPU_TS_QUANTUM:-30s}"
    t0=$(date +%s)
    if [ "$phase" = timeslice ]; then
      wait_idle 300 || bad "$phase: the jobs end within 5 minutes"
    else # B cannot get its memory while A is stopped: once B has failed, end the run
      for _ in $(seq 1800); do
        case $(state "$b") in FAILED | DONE | CANCELLED) break ;; esac
        sleep 0.1
      done
      g logs "$b" > "$tmp/sig-b.log" 2>&1
      g cancel "$a" > /dev/null 2>&1
      wait_idle 120
    fi
    note "$phase: ended after $(($(date +%s) - t0)) s: A $(state "$a"), B $(state "$b")"
    if [ "$phase" = timeslice ]; then
      for id in $a $b; do
        g logs "$id" > "$tmp/ts-$id.log" 2>&1
        check "timeslice: job $id DONE" [ "$(state "$id")" = DONE ]
        check "timeslice: job $id suspended and resumed" contains "$(events "$id")" "suspended"
        check "timeslice: job $id ran in one run (no restart)" [ "$(grep -c '^start step' "$tmp/ts-$id.log")" = 1 ]
        check "timeslice: job $id parameters equal the uninterrupted run's, ballast intact" \
          bash -c "[ '$(params_of "$tmp/ts-$id.log")' = '${ref[$steps]}' ] && grep -q 'ballast ok' '$tmp/ts-$id.log'"
        g describe job "$id" | grep -Ei 'checkpoint|restor|suspend|resum' | tee -a "$res"
      done
    else
      check "sigstop: B could not run while A's memory stayed on the GPU" grep -qi "out of memory" "$tmp/sig-b.log"
      note "sigstop: B: $(grep -i 'out of memory' "$tmp/sig-b.log" | head -1 | cut -c1-200)"
    fi
    save_daemon "$phase"
    d_stop || bad "graceful stop"
    kill "$filler" 2> /dev/null
    wait "$filler" 2> /dev/null
    ;;
  *) echo "unknown phase $phase"; exit 2 ;;
  esac
done
finish
