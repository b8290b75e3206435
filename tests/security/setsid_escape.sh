#!/usr/bin/env bash
# Issue 11 item 4: a task that starts `setsid sleep 600 &` (a new session: out of the task's
# process group) or double-forks survived its job, kept CUDA_VISIBLE_DEVICES, and the job's
# GPU was given to the next job while it still ran.  Now the local executor tracks every process
# of a task: in its own cgroup v2 when one can be made (`serve --cgroup auto|DIR`), otherwise
# (`--cgroup off`) through the shim, a child subreaper that kills what is left of its process
# tree before it reports the task's end.  A job's GPUs are free only once none of its processes
# is alive.
#   (a) --cgroup off (always runs): a job whose command leaves a setsid'ed and a double-forked
#       sleep behind and exits: when it is DONE nothing of it is alive, and the next job on its
#       GPU sees none of them; a cancelled job leaves nothing either.  A "fork runner" (fork,
#       the parent exits, the child setsid()s, again and again: never the same pid twice) is
#       killed too, at the job's end and at a cancel: one walk of /proc that happens to find
#       nothing is not taken for "all gone" (it outlived its job, reparented to PID 1).
#   (b) cgroups (only where a cgroup2 hierarchy is writable here, else exit 77 saying why): the
#       same, plus a job that also kills its own shim (which escapes the fallback): the job
#       stays RUNNING while its escaped processes live, until they are killed; its cgroup is
#       removed afterwards.
#   (c) as root, with cgroups: a job running as its owner's Unix account (a user the test makes,
#       gst-cgPID, removed at exit) cannot move itself out of its cgroup nor change it.
# Processes are found by a marker in their environment (SETSID_MARK=...), killed by PID only.
# usage: setsid_escape.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

MARK=gst$$x$RANDOM
# marked TAG: pids of live (not zombie) processes whose environment has SETSID_MARK=$MARK.TAG
# (one grep over every environ file, NUL-separated entries; a zombie's environ reads empty)
marked() {
  local e p st
  for e in $(grep -lzxE "SETSID_MARK=$MARK\.$1" /proc/[0-9]*/environ 2>/dev/null); do
    p=${e#/proc/}
    p=${p%/environ}
    st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)
    [ -n "$st" ] && [ "$st" != Z ] && echo "$p"
  done
}
nmarked() { marked "$1" | wc -l; }
# at exit: kill every process any of our jobs left (by PID), then the daemons
MADE_USER=""
cleanup() {
  local p ps
  # rounds: a fork runner the executor failed to kill gets a new pid all the time
  for _ in $(seq 100); do
    ps=$(marked '[0-9a-z]*')
    [ -z "$ps" ] && break
    for p in $ps; do kill -STOP "$p" 2>/dev/null; done
    for p in $ps; do kill -KILL "$p" 2>/dev/null; done
  done
  d_cleanup
  [ -n "$MADE_USER" ] && userdel "$MADE_USER" 2> /dev/null
}
trap cleanup EXIT

# The job's command: a setsid'ed sleep (own session) and a double fork whose middle process
# exits at once (the sleep is orphaned, in yet another session), then the command itself
# lingers a second ($1) and exits 0 - or kills its shim first ($2 = kill).
script() {
  local tail="sleep $1; exit 0"
  [ "${2:-}" = kill ] && tail="kill -KILL \$PPID; sleep $1; exit 0"
  printf '%s' "setsid sh -c 'sleep 600' & sh -c 'setsid sleep 600 & exit 0'; $tail"
}
# The next job on the same GPU counts the first job's processes it sees when it starts.
spy() {
  printf '%s' "echo spy-saw-\$(grep -lzx SETSID_MARK=$MARK.$1 /proc/[0-9]*/environ 2>/dev/null | wc -l)"
}
# watch ID TAG SECS: poll the job until it ends; "alive while running" counts samples where it was
# RUNNING with marked processes alive; a sample where it had ended with one alive is a failure
watch() {
  local id=$1 tag=$2 s n
  SEEN_RUNNING=0 ENDED_ALIVE=0 FINAL=""
  for _ in $(seq $(($3 * 10))); do
    s=$(state "$id")
    n=$(nmarked "$tag")
    case $s in
      RUNNING) [ "$n" -gt 0 ] && SEEN_RUNNING=$((SEEN_RUNNING + 1)) ;;
      DONE|FAILED|CANCELLED) FINAL=$s; [ "$n" -gt 0 ] && ENDED_ALIVE=$n; return 0 ;;
    esac
    sleep 0.1
  done
  return 1
}

# common JOBS: the cases both modes run; $1 = daemon name for messages
common() {
  local m=$1 id1 id2 id3
  id1=$(gsub --gpus 1 --env "SETSID_MARK=$MARK.${m}1" -- sh -c "$(script 2)") || { bad "$m: submit"; return; }
  id2=$(gsub --gpus 1 --env "SETSID_MARK=$MARK.${m}2" -- sh -c "$(spy "${m}1")") || { bad "$m: submit spy"; return; }
  check "$m: job $id1 ends" watch "$id1" "${m}1" 60
  check "$m: job $id1 is DONE (got '$FINAL')" test "$FINAL" = DONE
  check "$m: its escaped processes were seen alive while it was RUNNING" test "$SEEN_RUNNING" -gt 0
  check "$m: none of its processes alive once it ended (saw $ENDED_ALIVE)" test "$ENDED_ALIVE" = 0
  check "$m: none alive a moment later ($(marked "${m}1" | tr '\n' ' '))" test "$(nmarked "${m}1")" = 0
  wait_state "$id2" DONE 60
  check "$m: the next job on its GPU saw none of them" eval "g logs $id2 | grep -qx spy-saw-0"
  # cancel: the command is still running, its escaped processes too
  id3=$(gsub --gpus 1 --grace 1s --env "SETSID_MARK=$MARK.${m}3" -- sh -c "$(script 600)") || { bad "$m: submit"; return; }
  wait_state "$id3" RUNNING 30
  for _ in $(seq 100); do [ "$(nmarked "${m}3")" -ge 4 ] && break; sleep 0.1; done
  check "$m: job $id3 runs with its escaped processes" test "$(nmarked "${m}3")" -ge 4
  g cancel "$id3" > /dev/null
  check "$m: cancelled job $id3 ends" watch "$id3" "${m}3" 60
  check "$m: job $id3 is CANCELLED (got '$FINAL')" test "$FINAL" = CANCELLED
  check "$m: none of its processes alive once it ended (saw $ENDED_ALIVE)" test "$ENDED_ALIVE" = 0
  check "$m: none alive a moment later" test "$(nmarked "${m}3")" = 0
}

# The fork runner: fork; the parent exits; the child setsid()s and goes on; every 500 forks
# it writes a heartbeat (its pid and count) to the file $1; it stops by itself at the time $2
# (an escaped runner ends).  The same program, as `frunner reap CMD...`, runs the daemon of
# that part as a child subreaper that reaps everything: a runner that escapes the daemon is
# reparented to it, not to PID 1 (which in a container may not reap: a fork runner's zombies
# would use up the machine's pids), and is killed when the daemon exits.  Needs a C compiler
# (else that part is not run, and says so).
RUNNER=""
if command -v cc > /dev/null; then
  cat > "$tmp/frunner.c" << 'EOF'
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static pid_t child;
static void fwd(int sig) { if (child > 0) kill(child, sig); }
/* kill every child of ours the moment it is seen, reap, until we have none (bounded) */
static void kill_children(void)
{
    time_t end = time(NULL) + 30;
    char me[32];
    snprintf(me, sizeof me, " %d ", (int)getpid());
    while (time(NULL) < end) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char p[300], b[512];
            snprintf(p, sizeof p, "/proc/%s/stat", e->d_name);
            int fd = open(p, O_RDONLY);
            if (fd < 0) continue;
            ssize_t r = read(fd, b, sizeof b - 1);
            close(fd);
            if (r <= 0) continue;
            b[r] = 0;
            char *rp = strrchr(b, ')');
            if (rp && rp[1] && rp[2] != 'Z' && !strncmp(rp + 3, me, strlen(me)))
                kill(atoi(e->d_name), SIGKILL);
        }
        if (d) closedir(d);
        pid_t w;
        while ((w = waitpid(-1, NULL, WNOHANG)) > 0) {
        }
        if (w < 0 && errno == ECHILD) return;
    }
}
int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "reap")) {
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        signal(SIGTERM, fwd);
        signal(SIGINT, fwd);
        signal(SIGHUP, fwd);
        child = fork();
        if (child == 0) {
            execv(argv[2], argv + 2);
            _exit(127);
        }
        int st = 0, code = 1;
        for (;;) {
            pid_t w = waitpid(-1, &st, 0);
            if (w == child) {
                code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                break;
            }
            if (w < 0 && errno != EINTR) break;
        }
        kill_children();
        return code;
    }
    if (argc < 3) return 2;
    time_t until = (time_t)atol(argv[2]);
    unsigned long n = 0;
    for (;;) {
        if (time(NULL) >= until) _exit(0);
        pid_t p = fork();
        if (p < 0) continue;
        if (p > 0) _exit(0);
        setsid();
        if (++n % 500 == 0) { /* written aside and renamed: a kill never leaves it empty */
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.%d", argv[1], (int)getpid());
            FILE *f = fopen(tmp, "w");
            if (f) {
                fprintf(f, "%d %lu\n", (int)getpid(), n);
                if (fclose(f) == 0) rename(tmp, argv[1]);
                else unlink(tmp);
            }
        }
    }
}
EOF
  cc -O2 -o "$tmp/frunner" "$tmp/frunner.c" 2> /dev/null && RUNNER=$tmp/frunner
fi
# beating FILE: 0 if the heartbeat file changes within 3 s (a runner is alive)
beating() {
  local a b
  a=$(cat "$1" 2> /dev/null)
  for _ in $(seq 30); do
    sleep 0.1
    b=$(cat "$1" 2> /dev/null)
    [ "$a" != "$b" ] && return 0
  done
  return 1
}
# forkrun NAME: a job's fork runner dies with it (the command exits; the job is cancelled)
forkrun() {
  local m=$1 id
  if [ -z "$RUNNER" ]; then
    echo "(no C compiler: the fork-runner part is not run)"
    return
  fi
  # (1) the command exits 0 while the runner it started goes on (it waits for the runner's
  # first heartbeat, up to 30 s, so a loaded machine cannot end it before the runner ran)
  id=$(gsub --gpus 1 --env "SETSID_MARK=$MARK.${m}f1" -- sh -c "$RUNNER $tmp/hb-${m}1 $(($(date +%s) + 40)) & i=0; while [ ! -s $tmp/hb-${m}1 ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((\$i + 1)); done; sleep 1; exit 0") || { bad "$m: submit runner"; return; }
  check "$m: fork-runner job $id ends DONE" wait_state "$id" DONE 60
  check "$m: ... its runner did run (heartbeat file written)" test -s "$tmp/hb-${m}1"
  check "$m: ... and runs no more (heartbeat: $(cat "$tmp/hb-${m}1" 2> /dev/null))" eval "! beating $tmp/hb-${m}1"
  # (2) cancelled (the runner ignores SIGTERM): the daemon kills the shim's process tree at
  # the end of the grace period
  id=$(gsub --gpus 1 --grace 1s --env "SETSID_MARK=$MARK.${m}f2" -- sh -c "trap '' TERM; $RUNNER $tmp/hb-${m}2 $(($(date +%s) + 40)) & sleep 600") || { bad "$m: submit runner"; return; }
  wait_state "$id" RUNNING 30
  for _ in $(seq 300); do [ -s "$tmp/hb-${m}2" ] && break; sleep 0.1; done
  check "$m: cancelled fork-runner job $id: its runner runs" beating "$tmp/hb-${m}2"
  g cancel "$id" > /dev/null
  check "$m: ... the job ends CANCELLED" wait_state "$id" CANCELLED 60
  check "$m: ... and its runner runs no more" eval "! beating $tmp/hb-${m}2"
}

# limits JOBTAG: a job with cpus/memory either runs under cpu.max/memory.max or its log says
# they are not enforced (never silently)
limits() {
  local m=$1 id out
  id=$(gsub --gpus 1 --cpus 1 --mem 64M -- sh -c \
    'p=$(sed -n "s/^0:://p" /proc/self/cgroup); echo "cgroup=$p"; cat "'"${cgmnt:-/nonexistent}"'$(dirname "$p")/memory.max" "'"${cgmnt:-/nonexistent}"'$(dirname "$p")/cpu.max" 2>/dev/null; exit 0') || { bad "$m: submit limits"; return; }
  check "$m: the job with cpus/memory is DONE" wait_state "$id" DONE 30
  out=$(g logs "$id")
  if contains "$out" "not enforced on this machine"; then
    ok "$m: cpus/memory not enforced, and the task's log says so"
  else
    check "$m: memory.max = 64 MiB" contains "$out" 67108864
    check "$m: cpu.max = 1 CPU" contains "$out" "100000 100000"
  fi
  [ "$m" = off ] && check "off: ... not enforced without cgroups" contains "$out" "cpus and memory not enforced"
}

# the cgroup2 mount: the file system type is the field after the "-" separator
cgmnt=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
# (a) without cgroups: the shim's process tree
# (under the reaper when there is one: see RUNNER)
realbin=$bin
if [ -n "$RUNNER" ]; then
  printf '#!/bin/sh\nexec %s reap %s "$@"\n' "$RUNNER" "$(command -v "$bin" || echo "$bin")" > "$tmp/gw"
  chmod +x "$tmp/gw"
  bin=$tmp/gw
fi
d_start off --cluster 1x1 --cgroup off || exit 1
bin=$realbin
check "off: the daemon says how it tracks tasks" grep -q "cgroup.*off" "$DDIR/daemon.log"
common off
limits off
forkrun off
d_stop
if [ "$fail" -ne 0 ]; then finish; fi

# (b) with cgroups, where we may make one
cgself=$(sed -n 's/^0:://p' /proc/self/cgroup)
why=""
if [ -z "$cgmnt" ]; then
  why="no cgroup2 hierarchy is mounted"
elif ! mkdir "$cgmnt${cgself%/}/gst-probe-$$" 2> /dev/null; then
  why="cannot create a cgroup under $cgmnt${cgself%/} (not delegated to us, or read-only)"
else
  rmdir "$cgmnt${cgself%/}/gst-probe-$$"
fi
if [ -n "$why" ]; then
  echo "$pass passed, $fail failed (without cgroups)"
  echo "SKIP: the cgroup part: $why"
  exit 77
fi
d_start cg --cluster 1x1 --cgroup auto || exit 1
check "cg: the daemon tracks tasks in cgroups" grep -q "cgroup v2 at $cgmnt" "$DDIR/daemon.log"
common cg
limits cg
# the job kills its own shim: the fallback could not find its orphans any more, the cgroup can
id4=$(gsub --gpus 1 --env "SETSID_MARK=$MARK.cg4" -- sh -c "$(script 600 kill)") || bad "cg: submit"
id5=$(gsub --gpus 1 --env "SETSID_MARK=$MARK.cg5" -- sh -c "$(spy cg4)") || bad "cg: submit spy"
check "cg: job $id4 (kills its shim) ends" watch "$id4" cg4 60
check "cg: job $id4 failed (got '$FINAL')" test "$FINAL" = FAILED
check "cg: none of its processes alive once it ended (saw $ENDED_ALIVE)" test "$ENDED_ALIVE" = 0
check "cg: none alive a moment later" test "$(nmarked cg4)" = 0
wait_state "$id5" DONE 60
check "cg: the next job on its GPU saw none of them" eval "g logs $id5 | grep -qx spy-saw-0"
base=$(sed -n 's/.*cgroup v2 at \([^ ,;:]*\).*/\1/p' "$DDIR/daemon.log" | head -1)
check "cg: no task cgroup left under $base" test -z "$(ls -d "$base"/job-* 2>/dev/null)"
d_stop

# (c) a job that runs as its owner's Unix account (root daemon, multi-user mode) can neither
# leave its cgroup nor change it: the task cgroups belong to the daemon
if [ "$(id -u)" != 0 ] || ! command -v useradd > /dev/null; then
  echo "(the multi-user part needs root and useradd: not run)"
  finish
fi
U=gst-cg$$
useradd -M -d /nonexistent -s /bin/sh "$U" || { bad "useradd $U"; finish; }
MADE_USER=$U
UT=$U.cg-secret-0123456789abcdef R=root.root-admin-secret-0123456789
{
  "$bin" token hash --user "$U" --token "$UT" --iterations 1000
  "$bin" token hash --user root --admin --token "$R" --iterations 1000
} > "$tmp/tokens" 2> /dev/null
chmod 600 "$tmp/tokens"
chmod 711 "$tmp" # the job's own directory is below it
export GSCHED_TOKEN=$R # the helpers look as the admin
D_MULTIUSER=1 d_start multi --cluster 1x1 --tokens "$tmp/tokens" --listen 127.0.0.1:0 \
  --cgroup auto || exit 1
attack='p=$(sed -n "s/^0:://p" /proc/self/cgroup); T=$0$(dirname "$p"); echo "uid=$(id -u) in=$p"
for f in "$0/cgroup.procs" "$T/cgroup.procs" "$T/shim/cgroup.procs" "$(dirname "$T")/cgroup.procs"; do
  echo $$ 2>/dev/null > "$f" && echo "ESCAPED-TO $f"; done
echo 1 2>/dev/null > "$T/cgroup.max.descendants" && echo "CHANGED $T"
mkdir "$T/job/mine" 2>/dev/null && echo "MADE $T/job/mine"
echo "after=$(sed -n "s/^0:://p" /proc/self/cgroup)"
setsid sh -c "sleep 600" & sh -c "setsid sleep 600 & exit 0"; sleep 1; exit 0'
id6=$("$bin" submit --parsable --server "$SERVER" --token "$UT" --gpus 1 \
  --env "SETSID_MARK=$MARK.mu6" -- sh -c "$attack" "$cgmnt") || bad "multi: submit"
check "multi: job $id6 ends" watch "$id6" mu6 60
check "multi: job $id6 is DONE (got '$FINAL')" test "$FINAL" = DONE
out=$(g logs "$id6")
check "multi: the job ran as $U, not root" contains "$out" "uid=$(id -u "$U") in=/"
check "multi: it could not move itself out of its cgroup" eval 'contains "$out" after= && ! contains "$out" ESCAPED'
check "multi: ... nor change its cgroup" eval 'contains "$out" after= && ! contains "$out" CHANGED && ! contains "$out" MADE'
check "multi: ... and stayed in it" eval 'printf "%s\n" "$out" | grep -q "^after=/.*/job$"'
check "multi: none of its processes alive once it ended (saw $ENDED_ALIVE)" test "$ENDED_ALIVE" = 0
check "multi: none alive a moment later" test "$(nmarked mu6)" = 0
d_stop
finish
