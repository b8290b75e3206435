# Helpers of the Slurm end-to-end tests (sourced, not run): a private Slurm fixture per test
# (tests/slurm/fixture.sh) with `gsched serve --executor slurm` on top.
#
# Usage (a test tests/slurm/NAME.sh, run by ctest as slurm_NAME with GSCHED_BIN SOURCE_DIR):
#   bin=$1 src=$2; SLURM_K=3; . "$src/tests/slurm/lib.sh"; s_up [fixture settings...]
#
# Sourcing it skips the test (exit 77, "SKIP: reason") unless `fixture.sh check` passes (root,
# Slurm installed, cgroups mounted) and gsched was built with the slurm executor; then it
# takes the machine-wide lock "slurm" (need_root, tests/e2e/lib/root.sh: one Slurm test at a
# time on the machine, whatever the checkout) and the helpers of tests/e2e/lib/daemon.sh.
# The test's fixture has its own ports (slurmctld on 17200 + 10*SLURM_K, its nodes on the
# next ones) and its own directory /tmp/gs-slurm-tK; the EXIT trap stops the gsched daemons
# (by pid), then the fixture (every Slurm daemon by the pid in its pid file), then removes
# the users the test made (s_user) and the test's files.
#
#   s_up [VAR=VALUE...]        start the fixture (SLURM_FIXTURE_* settings as arguments); exports
#                              SLURM_CONF; fails the test when it cannot start
#   s_fixture CMD [ARGS]       tests/slurm/fixture.sh CMD with this test's settings
#   s_start NAME [serve args]  d_start NAME --executor slurm --executor-opt partitions=$S_PARTS
#                              (S_PARTS: gpu) [args]
#   s_user NAME                make the Unix user NAME (gst-*) unless it exists; removed at exit
#   sjob ID                    the Slurm job id of gsched job ID (its admin comment gsched:ID), or ""
#   sruns ID                   "SLURMID NODELIST" of each RUNNING Slurm job tagged gsched:ID
#   sfield SLURMID KEY         a KEY=value of `scontrol -o show job SLURMID`
#   wait_for SECS 'CODE'       eval the shell CODE every 0.1 s until it succeeds (1 on timeout;
#                              quote it: its $(...) must run at each poll)
#   wait_sstate SLURMID STATE [SECS]  until squeue shows the Slurm job in STATE (e.g. RUNNING)
#   wait_srun ID NODELIST [SECS]  until Slurm runs gsched job ID (its tagged Slurm job RUNNING)
#                              on NODELIST (squeue's %N, e.g. n[1-2]); gsched says RUNNING at
#                              launch, Slurm a moment later
#   wait_log ID TEXT [TASK]    until the log of gsched job ID's task contains TEXT
#   ledger_check FILE          a per-task ledger (lines "start|end KEY TIME") shows no key
#                              running twice at once

set -u
case $bin in /*) ;; *) bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin") ;; esac
case $src in /*) ;; *) src=$(cd "$src" && pwd) ;; esac
FIX=$src/tests/slurm/fixture.sh
S_PORT=$((17200 + 10 * ${SLURM_K:-0}))
S_DIR=/tmp/gs-slurm-t${SLURM_K:-0}
S_PARTS=${S_PARTS:-gpu}
export SLURM_FIXTURE_PORT=$S_PORT SLURM_FIXTURE_DIR=$S_DIR
export SLURM_FIXTURE_TIMEOUT=${SLURM_FIXTURE_TIMEOUT:-5}
export SLURM_CONF=$S_DIR/etc/slurm.conf

why=$(bash "$FIX" check) || {
  echo "${why:-SKIP: tests/slurm/fixture.sh check failed}"
  exit 77
}
. "$src/tests/e2e/lib/root.sh"
need_root "runs a private Slurm cluster" slurm munged slurmctld slurmd sbatch squeue scontrol scancel
# the slurm executor is compiled in only where libslurm-dev was there at build time (a test
# of the fixture alone sets S_FIXTURE_ONLY=1)
if [ "${S_FIXTURE_ONLY:-0}" != 1 ]; then
  probe=$(mktemp -d)
  out=$(SLURM_CONF=$probe/none timeout 5 "$bin" serve --executor slurm --cluster 1x1 --db "$probe/db" \
    --socket "$probe/sock" --log-dir "$probe/logs" --single-user 2>&1 < /dev/null)
  rm -rf "$probe"
  case $out in
    *"built without libslurm"*)
      echo "SKIP: gsched was built without the slurm executor (install Debian's libslurm-dev and rebuild)"
      exit 77
      ;;
  esac
fi

tmp=$(mktemp -d /tmp/gs-slurm-t${SLURM_K:-0}-gsched.XXXXXX)
chmod 755 "$tmp" # jobs run by slurmd as other users write their files below it
. "$src/tests/e2e/lib/daemon.sh"

# wait_state (lib/daemon.sh) says on a timeout what Slurm shows of the job (s_show)
eval "$(declare -f wait_state | sed '1s/^wait_state/d_wait_state/')"
wait_state() {
  d_wait_state "$@" && return 0
  s_show "$1"
  return 1
}
# s_show ID: the Slurm jobs tagged gsched:ID (state, reason, priority, restarts, nodes), the
# job's last gsched events, Slurm's nodes (state, GPUs in use) and queue
s_show() {
  scontrol -o show job 2> /dev/null | awk -v t="AdminComment=gsched:$1" '
    { tag = 0; out = ""
      for (i = 1; i <= NF; i++) {
        if ($i == t) tag = 1
        if ($i ~ /^(JobId|JobState|Reason|Priority|Restarts|NodeList|ExitCode)=/) out = out " " $i
      }
      if (tag) print "   Slurm:" out }'
  "$bin" describe job "$1" --server "$SERVER" 2> /dev/null | awk '/^Events:/ { on = 1; next } on' |
    tail -4 | sed 's/^/   /'
  scontrol -o show node 2> /dev/null | awk '{ out = ""
      for (i = 1; i <= NF; i++) if ($i ~ /^(NodeName|State|GresUsed)=/) out = out " " $i
      print "   Slurm node:" out }'
  squeue -h -t all -o '   Slurm queue: %i %T %r %N %k' 2> /dev/null | head -8
}

S_USERS=""
s_cleanup() {
  local p u
  for p in $DPIDS; do kill -TERM "$p" 2> /dev/null; done
  for p in $DPIDS; do
    for _ in $(seq 50); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2> /dev/null
  done
  bash "$FIX" down > /dev/null 2>&1
  for u in $S_USERS; do userdel "$u" 2> /dev/null; done
  rm -rf "$S_DIR"
  d_cleanup
}
trap s_cleanup EXIT

s_fixture() { bash "$FIX" "$@"; }

s_up() {
  local t0=$SECONDS
  if ! env "$@" bash "$FIX" up > "$tmp/fixture-up.log" 2>&1; then
    # a fixture left by a killed run of this test: stop it by its pid files and retry once
    bash "$FIX" down > /dev/null 2>&1
    if ! env "$@" bash "$FIX" up > "$tmp/fixture-up.log" 2>&1; then
      bad "the Slurm fixture did not start:"
      cat "$tmp/fixture-up.log"
      finish
    fi
  fi
  echo "# fixture up on port $S_PORT in $((SECONDS - t0))s"
}

s_start() {
  local name=$1
  shift
  d_start "$name" --executor slurm --executor-opt "partitions=$S_PARTS" "$@"
}

s_user() {
  if ! id "$1" > /dev/null 2>&1; then
    useradd -M -d /nonexistent -s /bin/sh "$1" || { echo "SKIP: useradd $1 failed"; exit 77; }
    S_USERS="$S_USERS $1"
  fi
}

sjob() {
  scontrol -o show job 2> /dev/null |
    awk -v t="AdminComment=gsched:$1" '{ for (i = 1; i <= NF; i++) if ($i == t) { sub(/^JobId=/, "", $1); print $1; exit } }'
}

sruns() {
  scontrol -o show job 2> /dev/null | awk -v t="AdminComment=gsched:$1" '
    { tag = 0; st = ""; nl = ""
      for (i = 1; i <= NF; i++) {
        if ($i == t) tag = 1
        if (index($i, "JobState=") == 1) st = substr($i, 10)
        if (index($i, "NodeList=") == 1) nl = substr($i, 10)
      }
      if (tag && st == "RUNNING") { sub(/^JobId=/, "", $1); print $1, nl } }'
}

sfield() {
  scontrol -o show job "$1" 2> /dev/null |
    awk -v k="$2=" '{ for (i = 1; i <= NF; i++) if (index($i, k) == 1) { print substr($i, length(k) + 1); exit } }'
}

wait_for() {
  for _ in $(seq $(($1 * 10))); do
    eval "$2" && return 0
    sleep 0.1
  done
  return 1
}

sstate() { squeue -h -j "$1" -o %T 2> /dev/null | head -1; }
wait_sstate() {
  local s=""
  for _ in $(seq $((${3:-30} * 10))); do
    s=$(sstate "$1")
    [ "$s" = "$2" ] && return 0
    sleep 0.1
  done
  echo "  Slurm job $1: state '$s' after ${3:-30}s, wanted $2"
  return 1
}

wait_srun() {
  local s=""
  for _ in $(seq $((${3:-15} * 10))); do
    s=$(squeue -h -j "$(sjob "$1")" -o '%T %N' 2> /dev/null)
    [ "$s" = "RUNNING $2" ] && return 0
    sleep 0.1
  done
  echo "  job $1: Slurm shows '$s' after ${3:-15}s, wanted RUNNING $2"
  return 1
}

wait_log() {
  for _ in $(seq 300); do
    contains "$("$bin" logs "$1" --task "${3:-0}" --server "$SERVER" 2> /dev/null)" "$2" && return 0
    sleep 0.1
  done
  echo "  job $1 task ${3:-0}: no '$2' in its log"
  return 1
}

# ledger_check FILE: lines "start KEY T" / "end KEY T" (T: seconds.nanoseconds): no KEY has two
# starts without an end between them; prints the offending key
ledger_check() {
  sort -k3,3n "$1" | awk '
    $1 == "start" { if (open[$2]) { print "  " $2 " started twice at once"; bad = 1 } open[$2] = 1 }
    $1 == "end" { open[$2] = 0 }
    END { exit bad }'
}
