#!/usr/bin/env bash
# `gsched cuda-ckpt state|suspend|resume` against the fake CUDA driver (tests/fake_cuda.c, built
# as build/tests/fake-cuda/libcuda.so.1; fake-cuda-old/ has no checkpoint API): real processes
# (sleeps that register themselves with the fake as CUDA processes on a GPU) are suspended and
# resumed, in place and onto other GPUs; the driver calls (calls.log), the printed times, the
# JSON output, a failing checkpoint rolled back, a process that is no CUDA process, an old
# driver, no driver, and bad input with their exit codes.  No daemon; every wait is bounded.
# usage: cuda_ckpt.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"
WORKERS=""
trap 'for p in $WORKERS; do kill -KILL "$p" 2>/dev/null; done; d_cleanup' EXIT

fakedir=$(dirname "$bin")/tests/fake-cuda
fake=$fakedir/libcuda.so.1
old=$(dirname "$bin")/tests/fake-cuda-old/libcuda.so.1
if [ ! -f "$fake" ] || [ ! -f "$old" ]; then
  echo "not ok - the fake CUDA libraries are not built ($fake, $old)"
  exit 1
fi
export GSCHED_FAKE_CUDA_DIR=$tmp/cuda GSCHED_FAKE_CUDA_GPUS=4
mkdir -p "$GSCHED_FAKE_CUDA_DIR"
D=$GSCHED_FAKE_CUDA_DIR
ck() { "$bin" cuda-ckpt "$@" --lib "$fake"; }
# pyok EXPR <<<JSON: the Python expression EXPR on the JSON object o is true
pyok() { python3 -c 'import json, sys; o = json.load(sys.stdin); sys.exit(0 if eval("(" + sys.argv[1] + ")") else 1)' "$1"; }

# a "CUDA process" on GPU $1: registers itself with the fake, then sleeps (bounded); its pid in W
worker() {
  bash -c 'printf "running\ngpu=%s\n" "$1" > "$2/proc.$$"; exec sleep 120' _ "$1" "$D" \
    </dev/null >/dev/null 2>&1 &
  W=$!
  disown "$W" # no "Killed" line at the end
  WORKERS="$WORKERS $W"
  for _ in $(seq 50); do [ -f "$D/proc.$W" ] && break; sleep 0.1; done
}
worker 1; p1=$W
worker 2; p2=$W
check "two processes registered" test -f "$D/proc.$p1" -a -f "$D/proc.$p2"

# state: PID STATE lines; a process that is no CUDA process is "none", exit 4
expect 0 "^$p1 +running" -- ck state "$p1" "$p2"
expect 4 "^$$ +none" -- ck state "$p1" "$$"

# suspend: lock (with the timeout) then checkpoint, both processes; the time and its phases
: > "$D/calls.log"
echo 150 > "$D/delay_ms"
out=$(ck suspend "$p1" "$p2" --timeout 2500); rc=$?
check "suspend: exit 0" test "$rc" -eq 0
check "suspend: prints its time and phases" grep -Eq \
  "^suspended 2 CUDA processes in [0-9]+\.[0-9] ms \(lock [0-9]+\.[0-9] ms, checkpoint [0-9]+\.[0-9] ms\)$" <<<"$out"
ms=$(sed -nE 's/^suspended 2 CUDA processes in ([0-9]+)\..*/\1/p' <<<"$out")
check "suspend: the time covers two 150 ms checkpoints ($ms ms)" test "${ms:-0}" -ge 300
check "suspend: both checkpointed" grep -Eq "^$p2 +checkpointed" <<<"$out"
check "suspend: both checkpointed ($p1)" grep -Eq "^$p1 +checkpointed" <<<"$out"
check "suspend: lock all, then checkpoint all" diff <(grep -vE '^(init|state)' "$D/calls.log") \
  <(printf 'lock %s 2500\nlock %s 2500\ncheckpoint %s\ncheckpoint %s\n' "$p1" "$p2" "$p1" "$p2")
check "suspend: the processes are not stopped or killed" kill -0 "$p1" "$p2"
expect 0 "^$p1 +checkpointed" -- ck state "$p1"

# resume onto other GPUs (1 -> 3, 2 -> 0), --json
: > "$D/calls.log"
echo 0 > "$D/delay_ms"
out=$(ck resume "$p1" "$p2" --remap 1:3,2:0 --json); rc=$?
check "resume --remap: exit 0" test "$rc" -eq 0
check "resume --json: ok, times, remap, states" pyok \
  'o["op"] == "resume" and o["ok"] is True and o["processes"] == 2 and
   all(isinstance(o[k], float) for k in ("ms", "restore_ms", "unlock_ms")) and
   o["remap"] == [[1, 3], [2, 0]] and [p["state"] for p in o["pids"]] == ["running"] * 2 and
   o["driver_version"] == 13000' <<<"$out"
check "resume: restore with the GPU pairs, then unlock" diff \
  <(grep -vE '^(init|state)' "$D/calls.log") \
  <(printf 'restore %s pairs 1>3,2>0\nrestore %s pairs 1>3,2>0\nunlock %s\nunlock %s\n' \
    "$p1" "$p2" "$p1" "$p2")
check "resume: the processes moved to GPUs 3 and 0" \
  test "$(sed -n 2p "$D/proc.$p1")/$(sed -n 2p "$D/proc.$p2")" = "gpu=3/gpu=0"

# the default library name, found through LD_LIBRARY_PATH; in-place resume
expect 0 "^suspended 1 CUDA process in" -- env LD_LIBRARY_PATH="$fakedir" "$bin" cuda-ckpt suspend "$p1"
expect 0 "^resumed 1 CUDA process in .*\(restore .* ms, unlock .* ms\)$" -- \
  env LD_LIBRARY_PATH="$fakedir" "$bin" cuda-ckpt resume "$p1"

# a failing checkpoint: rolled back, the message names step, pid and error; exit 1
echo "checkpoint $p2" > "$D/fail"
out=$(ck suspend "$p1" "$p2" 2>&1); rc=$?
check "failed suspend: exit 1" test "$rc" -eq 1
check "failed suspend: says what failed" grep -q \
  "cuda-ckpt suspend: checkpoint of pid $p2: CUDA_ERROR_UNKNOWN: unknown error (rolled back)" <<<"$out"
check "failed suspend: both running again" grep -Eq "^$p1 +running" <<<"$out"
check "failed suspend: both running again ($p2)" grep -Eq "^$p2 +running" <<<"$out"
out=$(ck suspend "$p1" "$p2" --json 2>/dev/null)
check "failed suspend --json: ok false, error, failed_pid" pyok \
  "o['ok'] is False and o['failed_pid'] == $p2 and 'checkpoint of pid $p2:' in o['error']" <<<"$out"
rm -f "$D/fail"

# a process that is no CUDA process: nothing done, exit 4
: > "$D/calls.log"
expect 4 "pid $$ is not a CUDA process .*nothing done" -- ck suspend "$p1" "$$"
check "no lock when one pid is no CUDA process" sh -c "! grep -q '^lock' '$D/calls.log'"

# remap needs driver 12.9 or newer
ck suspend "$p1" >/dev/null
expect 1 "needs CUDA driver 12.9 or newer \(this is 12.8\)" -- \
  env GSCHED_FAKE_CUDA_VERSION=12080 "$bin" cuda-ckpt resume "$p1" --remap 3:1 --lib "$fake"
expect 2 "GPU 1 -> 7: this machine has GPUs 0-3" -- ck resume "$p1" --remap 1:7
expect 0 "^resumed 1 CUDA process in .* onto GPUs 3->1$" -- ck resume "$p1" --remap 3:1

# no driver with the checkpoint API
expect 1 "has no checkpoint API \(cuCheckpointProcessLock missing" -- \
  "$bin" cuda-ckpt suspend "$p1" --lib "$old"
expect 1 "CUDA driver library not available" -- "$bin" cuda-ckpt state "$p1" --lib "$tmp/none.so"

# bad input: exit 2, before the driver is touched
expect 0 "--remap OLD:NEW" -- "$bin" cuda-ckpt --help
expect 2 "which operation" -- "$bin" cuda-ckpt
expect 2 "unknown operation 'stop'" -- "$bin" cuda-ckpt stop 1
expect 2 "suspend: no PID given" -- "$bin" cuda-ckpt suspend
expect 2 "'12x' is not a process id" -- "$bin" cuda-ckpt suspend 12x
expect 2 "'0' is not a process id" -- "$bin" cuda-ckpt state 0
expect 2 "pid 5 named twice" -- "$bin" cuda-ckpt state 5 5
expect 2 "--timeout '1.5': expected milliseconds" -- "$bin" cuda-ckpt suspend 5 --timeout 1.5
expect 2 "--timeout is for suspend" -- "$bin" cuda-ckpt resume 5 --timeout 5
expect 2 "--remap is for resume" -- "$bin" cuda-ckpt suspend 5 --remap 0:1
expect 2 "--remap '0-1': expected OLD:NEW" -- "$bin" cuda-ckpt resume 5 --remap 0-1
expect 2 "GPU 1 named twice on one side" -- "$bin" cuda-ckpt resume 5 --remap 0:1,2:1
expect 2 "unrecognized option" -- "$bin" cuda-ckpt state 5 --frob

check "the processes survived it all" kill -0 "$p1" "$p2"
finish
