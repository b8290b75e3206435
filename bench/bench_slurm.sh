#!/usr/bin/env bash
# bench/bench_slurm.sh - gsched on Slurm against Slurm's own scheduler, side by side on one
# private Slurm fixture (tests/slurm/fixture.sh), in one run (`make bench-slurm`; root).
#
# Paths compared, each on the same cluster, one after the other, the cluster idle between them:
#   slurm   plain `sbatch -p free`: a partition the lua plugin leaves alone, scheduled by
#           slurmctld itself (gsched is not running during this path)
#   gsched  `gsched submit` to `gsched serve --executor slurm --executor-opt partitions=gpu`
#   adopt   plain `sbatch -p gpu` (held by contrib/slurm/job_submit.lua, adopted by gsched)
# Workloads per path:
#   burst   JOBS one-GPU jobs (sleep SLEEP) submitted back to back by one submitter
#   gang    GANGS gangs of GANG (NODESxGPUS: one task per node, all GPUs of the task on it),
#           submitted back to back; a gang is running when its last task has started
#   paced   PACED one-GPU jobs at RATE/s, fewer than the cluster holds: no job waits for
#           GPUs, so submit->running is the schedulers' own latency
# Each job writes its own start time (bash $EPOCHREALTIME, microseconds) into a file named by
# the bench's key and the task's rank; the bench writes each submit time just before it runs
# sbatch / gsched submit.  Per path: submits/s, submit->running median and p95 (seconds), and
# jobs started per second (jobs / (last start - first submit)).
#
# (b) what gsched adds per job: the daemon runs with LD_PRELOAD=build/bench/slurm_rpc_timer.so,
#     which appends one line per libslurm RPC (name, start, duration) to a file; the daemon's
#     log gives each job's decision time ("job N (user) started", ms); /metrics gives the
#     scheduling cycles.  Per job: submit -> decision, decision -> running, and the RPCs.
# (c) scale: a second fixture with SCALE_NODES slurmd (8 GPUs each): cluster-up time, RSS of
#     every Slurm daemon and of gsched, and a burst of SCALE_JOBS one-GPU jobs per path.
#
# usage: bench/bench_slurm.sh [--jobs N] [--gangs N] [--gang NODESxGPUS] [--paced N]
#                             [--rate R] [--sleep S] [--nodes N] [--scale-nodes N]
#                             [--scale-jobs N] [--paths slurm,gsched,adopt] [--no-scale]
#                             [--baseline BIN]
# --baseline BIN: also the paths gsched0 and adopt0, the same as gsched and adopt with another
# build of gsched (daemon and CLI: e.g. the commit before a change), in the same run on the
# same cluster (order: slurm, gsched0, adopt0, gsched, adopt; one daemon per build, the second
# on the first one's database so gsched's job ids, and the Slurm jobs' tags, never repeat).
# Environment: GSCHED_BIN (build/gsched), SLURM_FIXTURE_PORT (17400: slurmctld, nodes the next
# ports), BENCH_DIR (/tmp/gs-slurm-bench: the fixture in BENCH_DIR/slurm, everything else in
# BENCH_DIR/run, kept after the run for inspection).  Every daemon it starts is stopped by PID.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
GSCHED=${GSCHED_BIN:-$ROOT/build/gsched}
TIMER=${GSCHED_RPC_TIMER:-$(dirname "$GSCHED")/bench/slurm_rpc_timer.so}
FX=$ROOT/tests/slurm/fixture.sh
JOBS=1000 GANGS=100 GANG=2x8 PACED=100 RATE=20 SLEEP=0.5 NODES=4
SCALE_NODES=64 SCALE_JOBS=512 SCALE=1 PATHS=slurm,gsched,adopt BASELINE=""
while [ $# -gt 0 ]; do
  case $1 in
    --jobs) JOBS=$2; shift 2 ;;
    --gangs) GANGS=$2; shift 2 ;;
    --gang) GANG=$2; shift 2 ;;
    --paced) PACED=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --sleep) SLEEP=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --scale-nodes) SCALE_NODES=$2; shift 2 ;;
    --scale-jobs) SCALE_JOBS=$2; shift 2 ;;
    --paths) PATHS=$2; shift 2 ;;
    --no-scale) SCALE=0; shift ;;
    --baseline) BASELINE=$2; shift 2 ;;
    *) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
GN=${GANG%x*} GG=${GANG#*x}
if [ -n "$BASELINE" ]; then
  BASELINE=$(cd "$(dirname "$BASELINE")" && pwd)/$(basename "$BASELINE")
  PATHS=$(echo ",$PATHS," | sed 's/,gsched,/,gsched0,gsched,/; s/,adopt,/,adopt0,adopt,/; s/^,//; s/,$//')
  # baseline paths first, each build's paths together: slurm,gsched0,adopt0,gsched,adopt
  PATHS=$(echo "$PATHS" | tr ',' '\n' | awk '{ k = ($0 == "slurm") ? 0 : ($0 ~ /0$/) ? 1 : 2; print k, NR, $0 }' |
    sort -k1,1n -k2,2n | awk '{ printf "%s%s", (NR > 1 ? "," : ""), $3 }')
fi
export SLURM_FIXTURE_PORT=${SLURM_FIXTURE_PORT:-17400}
TOP=${BENCH_DIR:-/tmp/gs-slurm-bench}
export SLURM_FIXTURE_DIR=$TOP/slurm SLURM_FIXTURE_LUA=1 SLURM_FIXTURE_PARTITIONS=gpu:all,free:all
export SLURM_CONF=$SLURM_FIXTURE_DIR/etc/slurm.conf
W=$TOP/run
SOCK=$W/gsched.sock
GPID=""

say() { printf '%s\n' "$*" >&2; }
has_path() { case ",$PATHS," in *,"$1",*) return 0 ;; esac; return 1; }

if ! out=$("$FX" check); then
  echo "$out"
  exit 77
fi

gsched_stop() {
  [ -n "$GPID" ] || return 0
  kill -TERM "$GPID" 2> /dev/null || true
  for _ in $(seq 100); do kill -0 "$GPID" 2> /dev/null || break; sleep 0.1; done
  kill -0 "$GPID" 2> /dev/null && kill -KILL "$GPID" 2> /dev/null || true
  wait "$GPID" 2> /dev/null || true
  GPID=""
}
cleanup() {
  gsched_stop
  "$FX" down 2> /dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rm -rf "$W"
mkdir -p "$W"
chmod 755 "$TOP" "$W"
JOB=$W/job.sh
cat > "$JOB" << 'EOF'
#!/bin/bash
# $1: start-file stem, $2: seconds to run.  The rank: srun's (a gang's task), else gsched's.
echo "$EPOCHREALTIME" > "$1.${SLURM_PROCID:-${RANK:-0}}"
sleep "$2"
EOF
chmod 755 "$JOB"

# ---- helpers ----------------------------------------------------------------------------
fixture_up() { # $1 nodes -> prints the fixture's "cluster up" seconds
  local log=$W/fixture-up-$1.log
  SLURM_FIXTURE_NODES=$1 "$FX" up 2> "$log" || { cat "$log" >&2; return 1; }
  sed -n 's/^cluster up .*: \([0-9.]*\)s$/\1/p' "$log"
}
rss_mib() { # PIDs... -> total VmRSS in MiB
  local p s=0 r
  for p in "$@"; do
    r=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2> /dev/null || echo 0)
    s=$((s + ${r:-0}))
  done
  awk -v s="$s" 'BEGIN { printf "%.0f", s / 1024 }'
}
slurm_pids() { "$FX" pids | awk '{ print $2 }'; }
slurmd_pids() { "$FX" pids | awk '$1 ~ /^slurmd-/ { print $2 }'; }

GBIN=$GSCHED # the build the running daemon (and the CLI) are of
G() { # gsched CMD [ARGS]: the CLI of this bench's daemon
  local c=$1
  shift
  "$GBIN" "$c" --server "unix:$SOCK" "$@"
}
path_bin() { case $1 in *0) echo "$BASELINE" ;; *) echo "$GSCHED" ;; esac; }

gsched_up() { # start gsched ($1: its build, default GSCHED) on the fixture; sets GPID and GUP
  local t0=$EPOCHREALTIME
  GBIN=${1:-$GSCHED}
  # the database is kept within one fixture's life (a second build's daemon goes on with the
  # first one's job ids: a new id 1 would find the Slurm job tagged gsched:1 of the first)
  [ -n "${KEEP_DB:-}" ] || rm -f "$W/gsched.db"*
  rm -f "$SOCK"
  RPCF=$W/rpc.txt
  [ "$GBIN" = "$GSCHED" ] || RPCF=$W/rpc0.txt
  LD_PRELOAD=$TIMER GSCHED_RPC_TIMES=$RPCF \
    "$GBIN" serve --executor slurm --executor-opt partitions=gpu --single-user \
    --db "$W/gsched.db" --socket "$SOCK" --log-dir "$W/logs" --log-file "$W/gsched.log" \
    > /dev/null 2>> "$W/gsched.err" &
  GPID=$!
  for _ in $(seq 300); do
    if ! kill -0 "$GPID" 2> /dev/null; then
      GPID=""
      say "gsched serve --executor slurm did not start:"
      tail -5 "$W/gsched.err" "$W/gsched.log" >&2 2> /dev/null || true
      return 1
    fi
    G queue > /dev/null 2>&1 && break
    sleep 0.05
  done
  GUP=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
}

metric() { # NAME -> value from /metrics (sum of every series of that name)
  curl -s --unix-socket "$SOCK" -H 'X-Gsched-Client: 1' http://localhost/metrics |
    awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $2 } END { printf "%.6f", s }'
}

# submit ONE job of workload $2 on path $1 with start-file stem $3; prints an id or "-"
submit() {
  local path=$1 kind=$2 stem=$3
  case $path:$kind in
    slurm:one) sbatch --parsable -p free -o /dev/null --gres=gpu:1 "$JOB" "$stem" "$SLEEP" ;;
    slurm:gang)
      sbatch --parsable -p free -o /dev/null -N "$GN" --ntasks-per-node=1 --gres="gpu:$GG" \
        --wrap "srun $JOB $stem $SLEEP"
      ;;
    adopt:one | adopt0:one) sbatch --parsable -p gpu -o /dev/null --gres=gpu:1 "$JOB" "$stem" "$SLEEP" ;;
    adopt:gang | adopt0:gang)
      sbatch --parsable -p gpu -o /dev/null -N "$GN" --ntasks-per-node=1 --gres="gpu:$GG" \
        --wrap "srun $JOB $stem $SLEEP"
      ;;
    gsched:one | gsched0:one) G submit --parsable -G 1 -- "$JOB" "$stem" "$SLEEP" ;;
    gsched:gang | gsched0:gang) G submit --parsable -N "$GN" --gpus-per-task "$GG" -- "$JOB" "$stem" "$SLEEP" ;;
  esac
}

wait_quiet() { # until no job of partition $1 is left in Slurm (and gsched has none active)
  local part=$1 deadline=$(($(date +%s) + 300))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    if [ -z "$(squeue -h -p "$part" -t PD,R,CG,S,CF -o %i 2> /dev/null)" ]; then
      if [ -z "$GPID" ] || [ -z "$(G queue -h 2> /dev/null)" ]; then return 0; fi
    fi
    sleep 0.2
  done
  say "warning: jobs of partition $part still there after 300 s"
  squeue -p "$part" | head -5 >&2
}

# run workload $2 (one|gang|paced) on path $1: N jobs; results in $W/$1-$2.{sub,start/}
run_phase() {
  local path=$1 kind=$2 n ranks=1 skind=one i t0 stem id dir part
  case $kind in
    one) n=$JOBS ;;
    gang) n=$GANGS ranks=$GN skind=gang ;;
    paced) n=$PACED ;;
    scale) n=$SCALE_JOBS ;;
  esac
  dir=$W/$path-$kind
  mkdir -p "$dir/start"
  chmod 1777 "$dir/start"
  : > "$dir/sub"
  echo "$ranks" > "$dir/ranks"
  if [ -n "$GPID" ]; then
    echo "$(metric gsched_schedule_cycle_duration_seconds_sum) $(metric gsched_schedule_cycle_duration_seconds_count)" > "$dir/cycles0"
  fi
  say "  $path $kind: $n job(s)"
  t0=$EPOCHREALTIME
  for ((i = 1; i <= n; i++)); do
    if [ "$kind" = paced ]; then # submit i at t0 + (i-1)/RATE
      local due
      due=$(awk -v t="$t0" -v i="$i" -v r="$RATE" -v now="$EPOCHREALTIME" \
        'BEGIN { d = t + (i - 1) / r - now; if (d > 0) printf "%.3f", d; else print 0 }')
      [ "$due" != 0 ] && sleep "$due"
    fi
    stem=$dir/start/$i
    local ts=$EPOCHREALTIME
    id=$(submit "$path" "$skind" "$stem" 2>> "$dir/submit.err") || id=-
    echo "$i $ts ${id%%;*}" >> "$dir/sub"
  done
  # wait until every task has written its start time (bounded; or nothing is left to start:
  # no job of the partition in Slurm and none active in gsched, three times a second apart),
  # then until all is over
  case $path in slurm) part=free ;; *) part=gpu ;; esac
  local want=$((n * ranks)) got deadline=$(($(date +%s) + 600)) idle=0 polls=0
  while :; do
    got=$(find "$dir/start" -type f | wc -l)
    [ "$got" -ge "$want" ] && break
    if [ "$(date +%s)" -ge "$deadline" ]; then
      say "warning: $path $kind: $got of $want task starts after 600 s"
      break
    fi
    polls=$((polls + 1))
    if [ $((polls % 5)) = 0 ]; then
      if [ -z "$(squeue -h -p "$part" -t PD,R,CG,S,CF -o %i 2> /dev/null)" ] &&
        { [ -z "$GPID" ] || [ -z "$(G queue -h 2> /dev/null)" ]; }; then
        idle=$((idle + 1))
      else
        idle=0
      fi
      if [ "$idle" -ge 3 ]; then
        say "warning: $path $kind: $got of $want task starts, and nothing is left to start"
        break
      fi
    fi
    sleep 0.2
  done
  wait_quiet "$part"
  if [ -n "$GPID" ]; then
    echo "$(metric gsched_schedule_cycle_duration_seconds_sum) $(metric gsched_schedule_cycle_duration_seconds_count)" > "$dir/cycles1"
  fi
}

# per-job submit->running (one line per job: key submit start|NA id) from a phase's files
latencies() {
  local dir=$1 ranks
  ranks=$(cat "$dir/ranks")
  while read -r key ts id; do
    local s="" r f
    for ((r = 0; r < ranks; r++)); do
      f=$dir/start/$key.$r
      if [ -s "$f" ]; then
        read -r v < "$f"
        if [ -z "$s" ] || awk -v a="$v" -v b="$s" 'BEGIN { exit !(a > b) }'; then s=$v; fi
      else
        s=NA
        break
      fi
    done
    echo "$key $ts ${s:-NA} $id"
  done < "$dir/sub"
}

# summary row of a phase: path jobs submits/s median p95 started/s missing
summary() {
  local path=$1 kind=$2 dir=$W/$1-$2
  [ -s "$dir/sub" ] || return 0
  latencies "$dir" > "$dir/lat"
  awk -v path="$path" '
    { n++; if (n == 1 || $2 < s0) s0 = $2; if ($2 > s1) s1 = $2
      if ($3 == "NA") { miss++; next }
      lat[++k] = $3 - $2; if ($3 > e1) e1 = $3 }
    END {
      # insertion sort is fine for a few thousand values in awk
      for (i = 2; i <= k; i++) { v = lat[i]; for (j = i - 1; j >= 1 && lat[j] > v; j--) lat[j + 1] = lat[j]; lat[j + 1] = v }
      med = k ? lat[int((k + 1) / 2)] : 0; p95 = k ? lat[int(k * 0.95 + 0.999999)] : 0
      rate = (s1 > s0) ? (n - 1) / (s1 - s0) : 0; srate = (e1 > s0) ? k / (e1 - s0) : 0
      printf "%-7s %6d %10.1f %10.3f %10.3f %11.1f %8d\n", path, n, rate, med, p95, srate, miss
    }' "$dir/lat"
}

table() { # $1 kind, $2 title
  local p
  echo
  echo "$2"
  printf '%-7s %6s %10s %10s %10s %11s %8s\n' path jobs submits/s median_s p95_s started/s missing
  for p in ${PATHS//,/ }; do summary "$p" "$1"; done
}

# (b) per job: submit -> decision (daemon log), decision -> running, for gsched paths
decisions() { # prints "gschedid epoch" for every "job N (...) started" line of the daemon log
  TZ=UTC awk '/ gsched: job [0-9]+ \(.*\) started: / {
      split($1, d, /[-T:Z]/); sec = d[6]; ip = int(sec)
      t = mktime(d[1] " " d[2] " " d[3] " " d[4] " " d[5] " " ip) + (sec - ip)
      id = $4; if (!(id in seen)) { seen[id] = 1; printf "%s %.3f\n", id, t } }' "$W/gsched.log"
}

breakdown() { # $1 path $2 kind: median/p95 of submit->decision and decision->running
  local dir=$W/$1-$2
  [ -s "$dir/lat" ] || return 0
  decisions > "$W/decisions"
  # the sbatch id -> gsched id, from the daemon's "job N (user): adopted from slurm:ID" lines
  sed -n 's/.* gsched: job \([0-9]*\) (.*): adopted from slurm:\([0-9]*\)$/\1 \2/p' \
    "$W/gsched.log" > "$dir/ext"
  awk -v path="$1" -v kind="$2" '
    FILENAME == ARGV[1] { dec[$1] = $2; next }
    FILENAME == ARGV[2] { ext[$2] = $1; next }
    { id = $4; if (path ~ /^adopt/) id = ext[$4]
      if ($3 == "NA" || !(id in dec)) next
      a[++k] = dec[id] - $2; b[k] = $3 - dec[id] }
    function q(x, n, f,   i, j, v) { for (i = 2; i <= n; i++) { v = x[i]; for (j = i - 1; j >= 1 && x[j] > v; j--) x[j + 1] = x[j]; x[j + 1] = v }
      return n ? x[int(n * f + 0.999999)] : 0 }
    END { if (!k) { printf "%-7s %-6s (no decision times in the log)\n", path, kind; exit }
      ma = q(a, k, 0.5); pa = q(a, k, 0.95); mb = q(b, k, 0.5); pb = q(b, k, 0.95)
      printf "%-7s %-6s %6d %12.3f %12.3f %12.3f %12.3f\n", path, kind, k, ma, pa, mb, pb }' \
    "$W/decisions" "${dir}/ext" "$dir/lat" 2> /dev/null
}

rpc_table() { # [$1: the file, default $W/rpc.txt]
  local f=${1:-$W/rpc.txt}
  [ -s "$f" ] || { echo "(no RPC times recorded: $f)"; return 0; }
  printf '%-24s %8s %10s %10s %10s\n' call count median_ms p95_ms total_s
  sort -k1,1 -k3,3g "$f" | awk '
    function flush() { if (!n) return
      printf "%-24s %8d %10.2f %10.2f %10.2f\n", name, n, v[int((n + 1) / 2)] * 1000, v[int(n * 0.95 + 0.999999)] * 1000, tot
      n = 0; tot = 0 }
    $1 != name { flush(); name = $1 }
    { v[++n] = $3; tot += $3 }
    END { flush() }'
}

cycles_row() { # $1 path $2 kind: cycles and mean cycle during the phase
  local dir=$W/$1-$2
  [ -s "$dir/cycles1" ] || return 0
  paste "$dir/cycles0" "$dir/cycles1" | awk -v p="$1" -v k="$2" -v n="$(wc -l < "$dir/sub")" '
    { c = $4 - $2; s = $3 - $1; printf "%-7s %-6s %8d %14.3f %14.3f\n", p, k, c, (c ? s / c * 1000 : 0), (n ? s / n * 1000 : 0) }'
}

# ---- the 4-node (or --nodes) comparison ------------------------------------------------------
say "fixture: $NODES nodes x 8 GPUs on port $SLURM_FIXTURE_PORT, $SLURM_FIXTURE_DIR"
UP=$(fixture_up "$NODES")
HAVE_GSCHED=1
if has_path gsched || has_path adopt; then
  # the help into a variable first: `| grep -q` may end the pipe early (SIGPIPE, pipefail)
  if ! help=$("$GSCHED" serve --help 2>&1) || ! grep -q -- '--executor-opt' <<< "$help"; then
    say "$GSCHED has no --executor-opt: only the slurm path runs"
    HAVE_GSCHED=0
  fi
fi
KINDS="one gang paced"
KEEP_DB=""
for p in ${PATHS//,/ }; do
  [ "$p" = slurm ] || [ "$HAVE_GSCHED" = 1 ] || continue
  if [ "$p" != slurm ] && [ -n "$GPID" ] && [ "$GBIN" != "$(path_bin "$p")" ]; then
    gsched_stop
    KEEP_DB=1
  fi
  if [ "$p" != slurm ] && [ -z "$GPID" ]; then
    gsched_up "$(path_bin "$p")" || { HAVE_GSCHED=0; continue; }
    say "gsched serve --executor slurm ($GBIN) up in ${GUP}s (pid $GPID)"
  fi
  for k in $KINDS; do run_phase "$p" "$k"; done
done
gsched_stop
KEEP_DB=""

echo
echo "== gsched on Slurm vs Slurm's own scheduler: $NODES nodes x 8 GPUs (fixture up in ${UP}s), jobs sleep ${SLEEP}s"
echo "   (slurm = sbatch -p free, scheduled by slurmctld; gsched = gsched submit; adopt = sbatch -p gpu, adopted by gsched)"
[ -n "$BASELINE" ] && echo "   (gsched0, adopt0: the same with the baseline build $BASELINE; gsched, adopt: $GSCHED)"
table one "-- burst: $JOBS one-GPU jobs submitted back to back"
table gang "-- gangs: $GANGS gangs of $GN nodes x $GG GPUs (running = last task started)"
table paced "-- paced: $PACED one-GPU jobs at $RATE/s (no job waits for GPUs)"
echo
echo "-- median submit->running, gsched paths minus slurm (seconds; positive = gsched slower)"
for k in one gang paced; do
  s=$(summary slurm "$k" | awk '{ print $4 }')
  for p in gsched0 adopt0 gsched adopt; do
    has_path "$p" || continue
    v=$(summary "$p" "$k" | awk '{ print $4 }')
    [ -n "$s" ] && [ -n "$v" ] && awk -v k="$k" -v p="$p" -v a="$v" -v b="$s" \
      'BEGIN { printf "%-6s %-7s %+8.3f s  (x%.2f)\n", k, p, a - b, (b > 0 ? a / b : 0) }'
  done
done
if [ "$HAVE_GSCHED" = 1 ] && [ -s "$W/gsched.log" ]; then
  echo
  echo "-- (b) per job, gsched paths: submit -> decision (daemon log 'started', ms) and decision -> running"
  printf '%-7s %-6s %6s %12s %12s %12s %12s\n' path kind jobs dec_med_s dec_p95_s run_med_s run_p95_s
  for p in gsched0 adopt0 gsched adopt; do has_path "$p" && for k in one gang paced; do breakdown "$p" "$k"; done; done
  echo
  echo "-- scheduling cycles during each phase (/metrics gsched_schedule_cycle_duration_seconds)"
  printf '%-7s %-6s %8s %14s %14s\n' path kind cycles mean_cycle_ms cycle_ms_per_job
  for p in gsched0 adopt0 gsched adopt; do has_path "$p" && for k in one gang paced; do cycles_row "$p" "$k"; done; done
  echo
  echo "-- libslurm calls made by gsched serve over all phases (LD_PRELOAD slurm_rpc_timer.so)"
  rpc_table
  if [ -n "$BASELINE" ]; then
    echo "-- the same, baseline build (paths gsched0, adopt0)"
    rpc_table "$W/rpc0.txt"
  fi
  cp "$W/rpc.txt" "$W/rpc-$NODES.txt" 2> /dev/null || true
fi
"$FX" down 2> /dev/null

# ---- (c) scale --------------------------------------------------------------------------------
if [ "$SCALE" = 1 ]; then
  echo
  say "scale fixture: $SCALE_NODES nodes"
  SUP=$(fixture_up "$SCALE_NODES")
  # shellcheck disable=SC2046
  RSS_ALL=$(rss_mib $(slurm_pids))
  # shellcheck disable=SC2046
  RSS_D=$(rss_mib $(slurmd_pids))
  echo "== scale: $SCALE_NODES slurmd x 8 GPUs on loopback: cluster up in ${SUP}s (all idle; +3.5 s first scheduler pass)"
  echo "   RSS idle: munged + slurmctld + $SCALE_NODES slurmd = ${RSS_ALL} MiB (slurmd alone ${RSS_D} MiB, $(awk -v a="$RSS_D" -v n="$SCALE_NODES" 'BEGIN { printf "%.1f", a / n }') MiB each)"
  rm -f "$W/rpc.txt" "$W/rpc0.txt"
  for p in ${PATHS//,/ }; do
    [ "$p" = slurm ] || [ "$HAVE_GSCHED" = 1 ] || continue
    if [ "$p" != slurm ] && [ -n "$GPID" ] && [ "$GBIN" != "$(path_bin "$p")" ]; then
      gsched_stop
      KEEP_DB=1
    fi
    if [ "$p" != slurm ] && [ -z "$GPID" ]; then
      gsched_up "$(path_bin "$p")" || { HAVE_GSCHED=0; continue; }
      echo "   gsched serve --executor slurm on $SCALE_NODES nodes: up in ${GUP}s, RSS $(rss_mib "$GPID") MiB"
    fi
    SLEEP_SAVED=$SLEEP
    SLEEP=1
    run_phase "$p" scale
    SLEEP=$SLEEP_SAVED
  done
  # shellcheck disable=SC2046
  echo "   RSS after the bursts: Slurm daemons $(rss_mib $(slurm_pids)) MiB${GPID:+, gsched $(rss_mib "$GPID") MiB}"
  gsched_stop
  KEEP_DB=""
  table scale "-- burst: $SCALE_JOBS one-GPU jobs (sleep 1 s) on $SCALE_NODES nodes x 8 GPUs"
  if [ "$HAVE_GSCHED" = 1 ] && [ -s "$W/rpc.txt" ]; then
    echo
    echo "-- libslurm calls made by gsched serve on $SCALE_NODES nodes"
    rpc_table
  fi
  "$FX" down 2> /dev/null
fi
echo
echo "files: $W (per phase: sub = key submit-time id, start/KEY.RANK = start times; gsched.log, rpc.txt)"
