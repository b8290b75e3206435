#!/usr/bin/env bash
# Suspend / resume live: `gsched serve --policy gandiva` time-slices two 1-GPU jobs on one
# GPU (1 s quantum), which the daemon carries out with SIGSTOP / SIGCONT.  Checks, by state
# and never by timing:
#   - both jobs are suspended and continued, and both finish DONE with all their work;
#   - whenever the daemon shows a job as SUSPENDED (S), every process of its task is stopped
#     (state T in /proc), and the job RUNNING on the GPU is not;
#   - kill -9 while a job is suspended: after the restart the stopped tasks are gone (killed)
#     and the job is requeued (a suspended job holds no GPUs, so it cannot be adopted), then
#     it runs again to completion, from the start (GSCHED_RUN 2);
#   - cancelling a suspended job ends it (CANCELLED) and its processes.
# usage: daemon_timeslice.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

if ! "$bin" policies | grep -q '^gandiva '; then
  echo "ok - # SKIP 'gsched policies' does not list gandiva"
  finish
fi
# packing, migration and resizing do not exist in the daemon: off by default, refused if asked
out=$(timeout 20 "$bin" serve --cluster 1x1 --policy gandiva --set pack=on --db "$tmp/x.db" \
      --socket "$tmp/x.sock" 2>&1)
rc=$?
check "gandiva with packing is refused in the daemon (exit 2)" [ "$rc" -eq 2 ]
check "... saying why" grep -q "supports time-slicing only" <<< "$out"
# suspend=sigstop: SIGSTOP / SIGCONT whatever the machine's driver (ckpt_suspend.sh: suspend=cuda)
args=(--cluster 1x1 --policy gandiva --set quantum=1s --set introspect=1s --grace 2s
      --executor-opt suspend=sigstop)
# N steps of work; each step is a line "JOB RUN STEP" in the task's log
work() { echo "i=0; while [ \$i -lt $1 ]; do i=\$((i+1)); echo \"\$GSCHED_JOB_ID \$GSCHED_RUN \$i\"; sleep 0.1; done"; }

# pid of a job's task (its shim = its process group), from describe --json
taskpid() {
  g describe job "$1" --json 2>/dev/null | sed -n 's/.*"pid": \([0-9][0-9]*\).*/\1/p' | head -1
}
# states of every process of process group $1: e.g. "TT" or "SS"
group_states() { ps -e -o pgid=,stat= | awk -v g="$1" '$1 == g { printf "%s", substr($2, 1, 1) }'; }

d_start ts "${args[@]}" || { bad "daemon start"; finish; }
a=$(gsub --name A -- sh -c "$(work 30)")
b=$(gsub --name B -- sh -c "$(work 30)")
# processes of a job match its state: S -> all stopped (T; Z for an exited child; D for a shell
# whose vfork()ed child was stopped before it could exec), R -> none stopped
matches() {
  case $1 in
    S) [[ -n $2 && $2 =~ ^[TZD]+$ && $2 == *T* ]] ;;
    R) [[ -n $2 && $2 != *T* ]] ;;
    *) return 2 ;;
  esac
}
samples=0 good=0
for _ in $(seq 300); do
  q=$(g queue --no-headers 2>/dev/null)
  [ -z "$q" ] && break
  for id in $a $b; do
    st=$(echo "$q" | awk -v id="$id" '$1 == id { print $5 }')
    p=$(taskpid "$id")
    [ -n "$p" ] || continue
    matches "$st" "$(group_states "$p")"
    rc=$?
    [ "$rc" = 2 ] && continue
    if [ "$rc" != 0 ]; then
      # the signal follows the published state by a moment: look again before judging
      sleep 0.2
      st2=$(g queue --no-headers 2>/dev/null | awk -v id="$id" '$1 == id { print $5 }')
      [ "$st2" = "$st" ] || continue
      s2=$(group_states "$p")
      if ! matches "$st" "$s2"; then echo "  job $id is $st, its processes '$s2'"; samples=$((samples + 1)); continue; fi
    fi
    samples=$((samples + 1)) good=$((good + 1))
  done
  sleep 0.1
done
wait_idle 60 || bad "time-sliced jobs done"
check "time-slicing: both jobs DONE" [ "$(state "$a")" = DONE ] && [ "$(state "$b")" = DONE ]
check "time-slicing: A suspended and continued" contains "$(events "$a")" "suspended continued"
check "time-slicing: B suspended and continued" contains "$(events "$b")" "suspended continued"
check "time-slicing: processes stopped exactly when suspended ($good of $samples samples)" [ "$samples" -gt 0 ] && [ "$good" = "$samples" ]
check "time-slicing: all the work done in one run each" [ "$(g logs "$a" | grep -c "^$a 1 ")" = 30 ] && [ "$(g logs "$b" | grep -c "^$b 1 ")" = 30 ]
check "time-slicing: the suspend event says GPU memory stays held" contains "$(g describe job "$a")" "its GPU memory on n0:0 stays held"

echo "# kill -9 while a job is suspended"
c=$(gsub --name C -- sh -c "$(work 40)")
e=$(gsub --name E -- sh -c "$(work 40)")
sus=""
for _ in $(seq 200); do
  for id in $c $e; do [ "$(state "$id")" = SUSPENDED ] && sus=$id; done
  [ -n "$sus" ] && break
  sleep 0.05
done
check "a job got suspended" [ -n "$sus" ]
spid=$(taskpid "$sus")
d_kill9
check "its stopped task survives the daemon" [ -n "$(group_states "$spid")" ]
d_start ts "${args[@]}" || { bad "restart"; finish; }
# (zombies wait for whoever adopted them to reap them: only live processes count)
check "after the restart its stopped task is gone" [ -z "$(group_states "$spid" | tr -d Z)" ]
check "it was requeued because it was suspended" contains "$(g describe job "$sus")" "while the job was suspended"
wait_idle 60 || bad "jobs done after the restart"
check "both jobs DONE after the restart" [ "$(state "$c")" = DONE ] && [ "$(state "$e")" = DONE ]
check "the suspended job ran again from the start (run 2)" [ "$(g logs "$sus" | grep -c "^$sus 2 ")" = 40 ]

echo "# cancel a suspended job"
f=$(gsub --name F -- sh -c "$(work 100)")
h=$(gsub --name H -- sh -c "$(work 100)")
sus=""
for _ in $(seq 200); do
  for id in $f $h; do [ "$(state "$id")" = SUSPENDED ] && sus=$id; done
  [ -n "$sus" ] && break
  sleep 0.05
done
check "a job got suspended" [ -n "$sus" ]
spid=$(taskpid "$sus")
g cancel "$sus" > /dev/null
wait_state "$sus" CANCELLED 20 || bad "the suspended job is cancelled"
check "its processes are gone" [ -z "$(group_states "$spid" | tr -d Z)" ]
other=$f; [ "$sus" = "$f" ] && other=$h
g cancel "$other" > /dev/null
wait_idle 30 || bad "idle"
d_stop || bad "graceful stop"
finish
