#!/usr/bin/env bash
# bench_scale.sh - the scale benchmark (issue 15): a generated workload of 1,000,000 jobs
# (Gavel's mix: 1/2/4/8 GPUs, durations 60*10^U(1.5,3) s or 60*10^U(3,4) s, 16 VCs) at 90 %
# load of 16,384 GPUs (64 racks x 32 nodes x 8 GPUs), under every policy that is not an
# emulation (gandiva-emul, a time-stepped reproduction of the Tiresias simulator's Gandiva, is
# left out), each in its own process: median wall and CPU seconds of the simulation proper
# and peak RSS (bench_sim; docs/benchmarks.md). hived, quota and private run on a HiveD config
# of the 16 VCs over the same nodes (marked *).
#
# usage: bench/bench_scale.sh [BENCH_SIM_OPTION...] [POLICY...]
#   e.g. bench/bench_scale.sh --runs 1 fifo srtf     (defaults: --runs 3 --timeout 600)
# env: BUILD (default build), JOBS (default 1000000), LOAD (default 0.9), CLUSTER (64x32x8)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${BUILD:-$here/build}/bench/bench_sim
[ -x "$bin" ] || { echo "bench_scale: $bin missing (make build first)" >&2; exit 2; }
exec "$bin" --gen "jobs=${JOBS:-1000000},load=${LOAD:-0.9},mix=gavel,vcs=16" \
  --cluster "${CLUSTER:-64x32x8}" --runs 3 --timeout 600 --skip gandiva-emul "$@"
