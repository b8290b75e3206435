#!/usr/bin/env bash
# Review of the local-executor hardening, defect 1: a job's directory (GSCHED_JOB_DIR) is its
# own, so a job could replace its log (task-I.log) by a link, a directory or a FIFO.  When
# the job was preempted and launched again, opening the log failed (ELOOP, EISDIR, ENXIO) and
# the executor took that for the node's failure: "executor cannot launch tasks: draining every
# node", the job requeued without counting, the re-check of the daemon's directories passed,
# the job launched again, drained again - one user's job kept every node drained forever.
# Now what is wrong inside the job's own directory is the job's: the executor moves the entry
# aside (task-I.log.replaced-RUN; the name, never what a link points to) and makes a fresh log
# that says so; when even that fails, the launch failure is counted against
# --launch-attempts and the job ends FAILED with the reason.  Only a failure of the daemon's
# own directories drains the nodes.
# Runs as any user (the job runs as the daemon's user; a multi-user daemon takes the same path).
# usage: log_swap.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

# las with two queues: a job past 2 GPU-seconds of service is demoted, so a new 1-GPU job
# preempts it; the victim's first run replaces its log ($1: how), its later runs say so and end
d_start ls --cluster 1 --policy tiresias-las --set queues=2 --grace 2s --launch-attempts 3 || exit 1
victim() {
  printf '%s' "if [ \"\$GSCHED_RUN\" = 1 ]; then echo first-run; sleep 1; rm -f \"\$GSCHED_LOG\"; $1; sleep 100; else echo \"run-\$GSCHED_RUN-here\"; fi"
}
# swap NAME HOW: the victim replaces its log by HOW, is preempted, and must run again with a fresh log
swap() {
  local m=$1 how=$2 v p ev out
  v=$(gsub -g 1 --name "victim-$m" -- sh -c "$(victim "$how")") || { bad "$m: submit"; return; }
  wait_state "$v" RUNNING 20 || { bad "$m: victim runs"; return; }
  sleep 3.5 # past the first queue's threshold, and the log is replaced
  p=$(gsub -g 1 --name "preemptor-$m" -- sleep 0.5) || { bad "$m: submit preemptor"; return; }
  check "$m: the preemptor runs and ends" wait_state "$p" DONE 30
  check "$m: the victim ends DONE (it ran again)" wait_state "$v" DONE 30
  ev=$(events "$v")
  check "$m: the victim was preempted ($ev)" contains "$ev" preempted
  check "$m: ... and relaunched without a launch failure" eval '! contains "$ev" launch-failed'
  out=$(g logs "$v" 2>&1)
  check "$m: its new log has its second run" contains "$out" "run-2-here"
  check "$m: ... and says the old one was moved aside" contains "$out" "moved aside to task-0.log.replaced-2"
  check "$m: no node was drained" eval '! grep -q "draining every node" "$DDIR/daemon.log"'
}
swap symlink 'ln -s /etc/passwd "$GSCHED_LOG"'
swap dir 'mkdir -p "$GSCHED_LOG/sub"'
swap fifo 'mkfifo "$GSCHED_LOG"'

# a job that blocks the way aside too (task-0.log a non-empty directory, and every name it could
# be moved to a file): its launch failures are its own - counted, then FAILED - never the node's
block='for r in 2 3 4 5 6; do : > "$GSCHED_LOG.replaced-$r"; done'
v=$(gsub -g 1 --name blocker -- sh -c "$(victim "$block; mkdir -p \"\$GSCHED_LOG/sub\"")") || bad "blocker: submit"
wait_state "$v" RUNNING 20 || bad "blocker: runs"
sleep 3.5
p=$(gsub -g 1 --name preemptor-b -- sleep 0.5) || bad "blocker: submit preemptor"
check "blocker: the preemptor ends" wait_state "$p" DONE 30
check "blocker: the job ends FAILED after its launch attempts" wait_state "$v" FAILED 30
r=$(field "$v" Reason)
check "blocker: the reason names the attempts ($r)" contains "$r" "launch failed 3 times"
check "blocker: ... and the log" contains "$r" "cannot open log"
check "blocker: no node was drained" eval '! grep -q "draining every node" "$DDIR/daemon.log"'
n=$(gsub -g 1 --name after -- true)
check "a later job runs (nodes in service)" wait_state "$n" DONE 30
check "gsched nodes: not drained" eval '! g nodes | grep -q drained'
check "SIGTERM stops cleanly" d_stop
finish
