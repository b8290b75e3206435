#!/usr/bin/env bash
# tests/slurm/fixture.sh - a private Slurm cluster on loopback for gsched's tests and benchmarks.
#
#   fixture.sh install         apt-get the Debian packages (munge slurmctld slurmd slurm-client
#                              libslurm-dev) when they are missing (root)
#   fixture.sh check           exit 0 if a fixture can run here, else print why and exit 77
#   fixture.sh up              write the config under $BASE, start a private munged, slurmctld and
#                              N slurmd (one port each, `slurmd -N nX`), wait until every node is
#                              idle and the scheduler has made its first pass
#   fixture.sh down            cancel every job, SIGTERM every daemon by the PID in its pid file
#                              (in parallel), wait until each is gone, SIGKILL what is left
#   fixture.sh env             print `export SLURM_CONF=...` for eval
#   fixture.sh pids            the daemons' PIDs, one "name pid" per line
#   fixture.sh stop-node NAME  stop (SIGSTOP) one slurmd: the node stops responding
#   fixture.sh cont-node NAME  resume it (SIGCONT)
#   fixture.sh restart-ctld    SIGTERM slurmctld by PID, start it again on its saved state
#
# Settings (environment): SLURM_FIXTURE_DIR (default /tmp/gsched-slurm-$PORT), SLURM_FIXTURE_NODES
# (4), SLURM_FIXTURE_GPUS (8 per node), SLURM_FIXTURE_CPUS (8), SLURM_FIXTURE_PORT (16817: slurmctld;
# the nodes take the next N ports), SLURM_FIXTURE_GPU_TYPE (empty: "gpu:8"; e.g. "v100":
# "gpu:v100:8"), SLURM_FIXTURE_LUA (1: install contrib/slurm/job_submit.lua so jobs enter held),
# SLURM_FIXTURE_PARTITIONS (default "gpu:all": the partitions, NAME:all or NAME:n[1-2]; the first
# is the default), SLURM_FIXTURE_TIMEOUT (SlurmdTimeout, 10 s), SLURM_FIXTURE_TOPOLOGY (a
# topology.conf to copy next to slurm.conf).
#
# Only 127.0.0.1 is used.  Nothing is started that this script does not stop by PID.  GPUs are
# character devices made with mknod (c 1 3, /dev/null's numbers) under $BASE/dev: Slurm needs
# files, never opens them here (task/none).  See ../../docs/slurm.md and the reference recipe
# this follows.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PORT=${SLURM_FIXTURE_PORT:-16817}
NODES=${SLURM_FIXTURE_NODES:-4}
GPUS=${SLURM_FIXTURE_GPUS:-8}
CPUS=${SLURM_FIXTURE_CPUS:-8}
GTYPE=${SLURM_FIXTURE_GPU_TYPE:-}
LUA=${SLURM_FIXTURE_LUA:-1}
PARTS=${SLURM_FIXTURE_PARTITIONS:-gpu:all}
TMO=${SLURM_FIXTURE_TIMEOUT:-10}
BASE=${SLURM_FIXTURE_DIR:-/tmp/gsched-slurm-$PORT}
CONF=$BASE/etc/slurm.conf
export SLURM_CONF=$CONF

say() { printf '%s\n' "$*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2fs", b - a }'; }

check() {
  if [ "$(id -u)" != 0 ]; then
    echo "SKIP: the Slurm fixture needs root (slurmd runs jobs as their users)"
    return 77
  fi
  local t
  for t in munged mungekey slurmctld slurmd sbatch squeue scontrol; do
    if ! command -v "$t" > /dev/null; then
      echo "SKIP: $t is not installed (tests/slurm/fixture.sh install: Debian's munge slurmctld slurmd slurm-client libslurm-dev)"
      return 77
    fi
  done
  if [ ! -d /sys/fs/cgroup ] || [ -z "$(ls -A /sys/fs/cgroup 2> /dev/null)" ]; then
    echo "SKIP: slurmd 22.05 needs a mounted /sys/fs/cgroup (it initialises its cgroup plugin even with task/none)"
    return 77
  fi
  return 0
}

install() {
  local missing="" p
  for p in munge slurmctld slurmd slurm-client libslurm-dev; do
    dpkg -s "$p" > /dev/null 2>&1 || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  [ "$(id -u)" = 0 ] || { say "install needs root"; return 1; }
  local t0
  t0=$(now)
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing > /dev/null
  say "installed$missing: $(since "$t0")"
}

nodelist() { if [ "$NODES" -gt 1 ]; then echo "n[1-$NODES]"; else echo n1; fi; }

write_conf() {
  rm -rf "$BASE"
  mkdir -p "$BASE"/{etc,state,spool,run,log,munge,dev}
  chmod 755 "$BASE" "$BASE/munge" # munged wants its socket directory passable by all
  chmod 1777 "$BASE/log"           # job output of any user may go here
  local i gres gresfile
  for ((i = 0; i < GPUS; i++)); do mknod "$BASE/dev/nvidia$i" c 1 3; done
  if [ -n "$GTYPE" ]; then gres="gpu:$GTYPE:$GPUS"; else gres="gpu:$GPUS"; fi
  cat > "$CONF" << EOF
ClusterName=fixture
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$BASE/munge/munge.socket
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool/%n
SlurmctldPidFile=$BASE/run/slurmctld.pid
SlurmdPidFile=$BASE/run/slurmd-%n.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
SlurmdParameters=config_overrides
SlurmdTimeout=$TMO
MinJobAge=300
MaxJobCount=100000
KillWait=5
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
EOF
  if [ "$LUA" = 1 ]; then
    echo "JobSubmitPlugins=lua" >> "$CONF"
    cp "$ROOT/contrib/slurm/job_submit.lua" "$BASE/etc/job_submit.lua"
  fi
  if [ -n "${SLURM_FIXTURE_TOPOLOGY:-}" ]; then
    echo "TopologyPlugin=topology/tree" >> "$CONF"
    cp "$SLURM_FIXTURE_TOPOLOGY" "$BASE/etc/topology.conf"
  fi
  echo "NodeName=DEFAULT CPUs=$CPUS Boards=1 SocketsPerBoard=1 CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=4096 Gres=$gres State=UNKNOWN" >> "$CONF"
  for ((i = 1; i <= NODES; i++)); do
    echo "NodeName=n$i NodeHostname=n$i NodeAddr=127.0.0.1 Port=$((PORT + i))" >> "$CONF"
  done
  local p name set first=YES
  for p in ${PARTS//,/ }; do
    name=${p%%:*}
    set=${p#*:}
    [ "$set" = all ] && set=$(nodelist)
    echo "PartitionName=$name Nodes=$set Default=$first MaxTime=INFINITE State=UP" >> "$CONF"
    first=NO
  done
  if [ "$GPUS" -gt 0 ]; then
    if [ -n "$GTYPE" ]; then gresfile="Type=$GTYPE "; else gresfile=""; fi
    printf 'AutoDetect=off\nNodeName=%s Name=gpu %sFile=%s/dev/nvidia[0-%d]\n' \
      "$(nodelist)" "$gresfile" "$BASE" $((GPUS - 1)) > "$BASE/etc/gres.conf"
  fi
  # slurmd autodetects the cgroup version at start even with task/none; a hybrid host (v1
  # controllers plus a cgroup2 mount) is refused by the autodetection, so name v1 there.
  if [ -d /sys/fs/cgroup/memory ] || [ -d /sys/fs/cgroup/freezer ]; then
    echo "CgroupPlugin=cgroup/v1" > "$BASE/etc/cgroup.conf"
  else
    echo "CgroupPlugin=autodetect" > "$BASE/etc/cgroup.conf"
  fi
}

pidof_file() { [ -s "$1" ] && cat "$1" || true; }

alive() { [ -n "$1" ] && kill -0 "$1" 2> /dev/null; }

wait_idle() {
  local want=$1 deadline=$(($(date +%s) + $2)) n
  while [ "$(date +%s)" -lt "$deadline" ]; do
    n=$(sinfo -h -N -o '%N %T' 2> /dev/null | awk '$2 == "idle" { print $1 }' | sort -u | wc -l)
    [ "$n" -ge "$want" ] && return 0
    sleep 0.1
  done
  return 1
}

start_ctld() { # $1: extra flags (-i for a fresh state)
  slurmctld ${1:-} -f "$CONF"
  local i
  for i in $(seq 100); do
    scontrol ping 2> /dev/null | grep -q UP && return 0
    sleep 0.1
  done
  say "slurmctld did not come up; see $BASE/log/slurmctld.log"
  tail -20 "$BASE/log/slurmctld.log" >&2 || true
  return 1
}

up() {
  check || exit $?
  if [ -s "$BASE/run/slurmctld.pid" ] && alive "$(pidof_file "$BASE/run/slurmctld.pid")"; then
    say "a fixture is already up in $BASE (fixture.sh down first)"
    return 1
  fi
  local t0
  t0=$(now)
  write_conf
  mungekey --create --keyfile="$BASE/munge/munge.key" > /dev/null 2>&1
  chmod 600 "$BASE/munge/munge.key"
  munged --key-file="$BASE/munge/munge.key" --socket="$BASE/munge/munge.socket" \
    --pid-file="$BASE/run/munged.pid" --log-file="$BASE/log/munged.log" \
    --seed-file="$BASE/munge/munge.seed"
  start_ctld -i
  local i
  for ((i = 1; i <= NODES; i++)); do
    slurmd -f "$CONF" -N "n$i"
  done
  if ! wait_idle "$NODES" 60; then
    say "nodes did not become idle:"
    sinfo -N >&2 || true
    tail -5 "$BASE"/log/slurmd-n1.log >&2 || true
    return 1
  fi
  say "cluster up ($NODES nodes x $GPUS gpu, all idle): $(since "$t0")"
  # slurmctld schedules nothing during its first seconds: wait for the first pass so that
  # the callers' timings do not include it
  sleep 3.5
  say "scheduler ready: $(since "$t0")"
}

pids() {
  local f
  for f in "$BASE"/run/*.pid; do
    [ -e "$f" ] || continue
    printf '%s %s\n' "$(basename "$f" .pid)" "$(pidof_file "$f")"
  done
}

down() {
  [ -d "$BASE/run" ] || return 0
  local t0 f p left
  t0=$(now)
  if [ -s "$BASE/run/slurmctld.pid" ] && alive "$(pidof_file "$BASE/run/slurmctld.pid")"; then
    scancel --full --quiet $(squeue -h -o %i 2> /dev/null | sort -u) 2> /dev/null || true
    for _ in $(seq 50); do
      [ -z "$(squeue -h -t R,CG,S 2> /dev/null)" ] && break
      sleep 0.1
    done
  fi
  # a stopped slurmd cannot exit: continue them all first
  for f in "$BASE"/run/slurmd-*.pid; do
    [ -e "$f" ] && p=$(pidof_file "$f") && alive "$p" && kill -CONT "$p" 2> /dev/null || true
  done
  for f in "$BASE"/run/slurmd-*.pid "$BASE/run/slurmctld.pid"; do
    [ -e "$f" ] || continue
    p=$(pidof_file "$f")
    alive "$p" && kill -TERM "$p" 2> /dev/null || true
  done
  for _ in $(seq 100); do
    left=0
    for f in "$BASE"/run/slurmd-*.pid "$BASE/run/slurmctld.pid"; do
      [ -e "$f" ] || continue
      p=$(pidof_file "$f")
      alive "$p" && left=1
    done
    [ $left = 0 ] && break
    sleep 0.1
  done
  for f in "$BASE"/run/slurmd-*.pid "$BASE/run/slurmctld.pid"; do
    [ -e "$f" ] || continue
    p=$(pidof_file "$f")
    alive "$p" && { say "SIGKILL $(basename "$f" .pid) ($p)"; kill -KILL "$p" 2> /dev/null || true; }
  done
  # job steps outlive their slurmd (slurmstepd is re-parented): kill those of this fixture
  for p in $(pgrep -f "^slurmstepd: \[" 2> /dev/null || true); do
    if grep -qs "$BASE" "/proc/$p/cmdline" "/proc/$p/environ" 2> /dev/null; then
      kill -KILL "$p" 2> /dev/null || true
    fi
  done
  p=$(pidof_file "$BASE/run/munged.pid")
  if alive "$p"; then
    kill -TERM "$p"
    for _ in $(seq 50); do alive "$p" || break; sleep 0.1; done
    alive "$p" && kill -KILL "$p" 2> /dev/null || true
  fi
  rm -f "$BASE"/run/*.pid
  say "cluster down: $(since "$t0")"
}

node_pid() { pidof_file "$BASE/run/slurmd-$1.pid"; }

case "${1:-}" in
  install) install ;;
  check) check ;;
  up) up ;;
  down) down ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  pids) pids ;;
  stop-node) kill -STOP "$(node_pid "$2")" ;;
  cont-node) kill -CONT "$(node_pid "$2")" ;;
  kill-node) kill -TERM "$(node_pid "$2")" ;;
  start-node) slurmd -f "$CONF" -N "$2" ;;
  restart-ctld)
    p=$(pidof_file "$BASE/run/slurmctld.pid")
    alive "$p" && kill -TERM "$p"
    for _ in $(seq 100); do alive "$p" || break; sleep 0.1; done
    start_ctld
    ;;
  *)
    sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
