#!/usr/bin/env bash
# Preemption on Slurm: a 2-node checkpointing gang (test priority, VC default = n1+n2 of
# tests/slurm/clusters/hived-lab.yaml) is preempted by a prod job of its VC: every task gets
# SIGTERM and saves its progress to GSCHED_CHECKPOINT_DIR within the grace period; Slurm shows
# the job held meanwhile (PENDING, priority 0, requeued) while the prod job runs; once the prod
# job ends gsched resumes the gang in the same Slurm job and each task resumes from its
# checkpoint.  A job that ignores SIGTERM is killed at the end of its grace period and held.
# usage: slurm_preempt.sh GSCHED_BIN SOURCE_DIR
bin=$1 src=$2
SLURM_K=3
. "$src/tests/slurm/lib.sh"
s_up
s_start preempt --cluster "$src/tests/slurm/clusters/hived-lab.yaml" --policy hived --grace 10s ||
  { bad "gsched serve --executor slurm --policy hived did not start"; finish; }

block() { echo "while [ ! -f '$tmp/$1' ]; do sleep 0.05; done"; }
evtime() {
  "$bin" describe job "$1" --server "$SERVER" 2> /dev/null |
    awk -v t="$2" '/^Events:/ { on = 1; next } on && $2 == t { print $1; exit }'
}
ge() { [ -n "$1" ] && [ -n "$2" ] && [[ ! "$1" < "$2" ]]; }
sheld() {
  [ "$(sstate "$1") $(sfield "$1" Priority)" = "PENDING 0" ] && return 0
  echo "  Slurm job '$1' is '$(sfield "$1" JobState)' with priority '$(sfield "$1" Priority)', reason '$(sfield "$1" Reason)'"
  return 1
}

mkdir -p "$tmp/ck"
cat > "$tmp/ckpt.sh" << 'EOF'
ck=$GSCHED_CHECKPOINT_DIR/ckpt-$GSCHED_JOB_ID-$RANK
if [ -f "$ck" ]; then echo "rank $RANK run $GSCHED_RUN resumed from $(cat "$ck") on $SLURMD_NODENAME"; sleep 0.5; exit 0; fi
step=0
trap 'echo "rank $RANK run $GSCHED_RUN: SIGTERM at step $step, saving"; echo "step-$step" > "$ck"; exit 0' TERM
echo "rank $RANK run $GSCHED_RUN training on $SLURMD_NODENAME"
while :; do step=$((step + 1)); sleep 0.1; done
EOF

echo "# a checkpointing gang preempted by a prod job"
t=$(gsub --vc default --priority test --tasks 2 -g 8 --checkpoint-dir "$tmp/ck" --name train -- sh "$tmp/ckpt.sh")
wait_state "$t" RUNNING 30 || bad "the gang runs"
wait_log "$t" "run 1 training" 0 || bad "task 0 trains"
wait_log "$t" "run 1 training" 1 || bad "task 1 trains"
st=$(sjob "$t")
check "one Slurm job runs it on n1+n2" wait_srun "$t" "n[1-2]"
p=$(gsub --vc default --priority prod -g 8 --name prod -- sh -c "$(block prod-done)")
wait_state "$p" RUNNING 40 || bad "the prod job runs without waiting"
check "the gang waits, preempted once" [ "$(state "$t") $(field "$t" Preemptions)" = "PENDING 1" ]
check "Slurm holds the gang's job (PENDING, priority 0)" sheld "$st"
check "Slurm requeued it (restart count 1)" [ "$(sfield "$st" Restarts)" = 1 ]
check "Slurm runs the prod job where gsched placed it" wait_srun "$p" "$(field "$p" Placement | cut -d: -f1)"
if [ -s "$tmp/ck/ckpt-$t-0" ] && [ -s "$tmp/ck/ckpt-$t-1" ]; then ok "both tasks saved a checkpoint"; else
  bad "both tasks saved a checkpoint"
  for i in 0 1; do echo "  task $i's log:"; g logs "$t" --task $i 2>&1 | tail -3 | sed 's/^/    /'; done
  echo "  the batch script's log:"; tail -5 "$DDIR/logs/$t/batch.log" 2> /dev/null | sed 's/^/    /'
fi
check "no SIGKILL needed" [ "$(events "$t" | tr ' ' '\n' | grep -c '^killed$')" = 0 ]
check "prod started after the gang's tasks were gone" ge "$(field "$p" Started | awk '{print $1}')" "$(evtime "$t" requeued)"
sleep 1
check "still held while prod runs" sheld "$st"
touch "$tmp/prod-done"
wait_state "$p" DONE 30 || bad "prod done"
wait_state "$t" DONE 40 || bad "the gang resumes and finishes"
check "events: preempted, requeued, resumed, finished" contains "$(events "$t")" "preempted task-exited task-exited requeued resumed"
check "two runs" [ "$(field "$t" Runs)" = 2 ]
for i in 0 1; do
  log=$(g logs "$t" --task $i)
  check "task $i saved on SIGTERM" contains "$log" "rank $i run 1: SIGTERM at step"
  check "task $i resumed from its checkpoint in run 2" contains "$log" "rank $i run 2 resumed from step-"
done
check "the same Slurm job ran both runs" [ "$(sjob "$t")" = "$st" ]

echo "# a job that ignores SIGTERM: SIGKILL at the end of its grace period"
cat > "$tmp/stubborn.sh" << 'EOF'
if [ "$GSCHED_RUN" -ge 2 ]; then echo "run $GSCHED_RUN"; exit 0; fi
trap '' TERM
echo "run 1 ignores SIGTERM"
sleep 60
EOF
s=$(gsub --vc vc1 --priority test -g 8 --grace 2s --name stubborn -- sh "$tmp/stubborn.sh")
wait_state "$s" RUNNING 30 || bad "stubborn runs"
wait_log "$s" "ignores SIGTERM" || bad "stubborn set its trap"
ss=$(sjob "$s")
p=$(gsub --vc vc1 --priority prod -g 8 --name prod2 -- sleep 0.5)
wait_state "$p" RUNNING 40 || bad "prod2 runs after the kill"
check "stubborn killed once" [ "$(events "$s" | tr ' ' '\n' | grep -c '^killed$')" = 1 ]
check "prod2 started after the kill" ge "$(field "$p" Started | awk '{print $1}')" "$(evtime "$s" killed)"
check "Slurm holds the stubborn job" sheld "$ss"
wait_state "$s" DONE 40 || bad "stubborn finishes in run 2"
check "stubborn: two runs" [ "$(field "$s" Runs)" = 2 ]
check "no Slurm job left running" wait_for 20 '[ -z "$(squeue -h -t R,CG)" ]'
d_stop || bad "graceful stop"
finish
