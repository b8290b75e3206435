#!/usr/bin/env bash
# Restart and failure on Slurm.  (1) kill -9 of `gsched serve --executor slurm` while jobs run
# (one-task jobs and 2-node gangs; every task appends "start KEY TIME NODE GPUS" and
# "end KEY TIME" to a ledger): Slurm keeps running them, some end while no gsched watches;
# after the restart (same database) gsched reconciles with Slurm's job list: no task ran twice
# at once, no GPU of a node was used by two tasks at once (from the ledger's node and
# CUDA_VISIBLE_DEVICES), every acknowledged job ends DONE, and what Slurm runs is what gsched
# says runs.  (2) slurmctld restarts (fixture.sh restart-ctld) while gsched runs jobs: gsched
# reconnects and resynchronises: no node is taken down for it, the running jobs end DONE and a
# job submitted after the restart runs.
# usage: slurm_crash.sh GSCHED_BIN SOURCE_DIR
bin=$1 src=$2
SLURM_K=7
. "$src/tests/slurm/lib.sh"
s_up
s_start crash --grace 2s || { bad "gsched serve --executor slurm did not start"; finish; }

L=$tmp/ledger
cat > "$tmp/task.sh" << EOF
k=\$GSCHED_JOB_ID.\$GSCHED_TASK_INDEX
echo "start \$k \$(date +%s.%N) \$SLURMD_NODENAME \$CUDA_VISIBLE_DEVICES" >> '$L'
trap 'echo "end \$k \$(date +%s.%N)" >> "$L"; exit 0' TERM
sleep "\$1" &
wait \$!
echo "end \$k \$(date +%s.%N)" >> '$L'
EOF
# no two tasks hold one GPU of a node at once: intervals from the ledger (an unended task:
# until now), per node, per GPU index
gpu_overlap() {
  awk -v now="$(date +%s.%N)" '
    $1 == "start" { n++; key[n] = $2; t0[n] = $3; node[n] = $4; gpus[n] = $5; open[$2] = n }
    $1 == "end" { if ($2 in open) { t1[open[$2]] = $3; delete open[$2] } }
    END {
      for (i = 1; i <= n; i++) if (!(i in t1)) t1[i] = now
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) {
        if (node[i] != node[j] || t0[j] >= t1[i] || t0[i] >= t1[j]) continue
        split(gpus[i], a, ","); split(gpus[j], b, ",")
        for (x in a) for (y in b) if (a[x] == b[y]) {
          printf "  %s and %s both used %s GPU %s at once\n", key[i], key[j], node[i], a[x]; bad = 1
        }
      }
      exit bad
    }' "$L"
}
# every job gsched says RUNNING runs in Slurm, once (a job that just ended in Slurm may still
# be RUNNING in gsched until its next poll: a mismatch counts when it persists for 2 s)
mismatch() {
  local id
  for id in "$@"; do
    [ "$(state "$id")" = RUNNING ] && [ "$(sruns "$id" | wc -l)" != 1 ] && echo "$id"
  done
}
consistent() {
  local m id
  m=$(mismatch "$@")
  [ -z "$m" ] && return 0
  sleep 2
  m=$(mismatch $m)
  [ -z "$m" ] && return 0
  for id in $m; do echo "  job $id: gsched says RUNNING, Slurm runs it $(sruns "$id" | wc -l) time(s)"; done
  return 1
}

echo "# kill -9 of gsched while its jobs run on Slurm"
acked=""
for i in $(seq 1 8); do
  acked="$acked $(gsub -g $((i % 4 + 1)) --name "one$i" -- sh "$tmp/task.sh" $((1 + i % 4)))"
done
for i in 1 2 3; do
  acked="$acked $(gsub --tasks 2 -g 4 --name "gang$i" -- sh "$tmp/task.sh" $((2 + i)))"
done
acked="$acked $(gsub --tasks 4 -g 8 --name "all" -- sh "$tmp/task.sh" 1)"
check "12 jobs acknowledged" [ "$(echo $acked | wc -w)" = 12 ]
first=$(echo $acked | awk '{ print $1 }')
wait_state "$first" RUNNING 30 || bad "jobs run"
sleep 1
check "before the crash: what gsched runs, Slurm runs" consistent $acked
d_kill9
echo "  gsched killed; Slurm runs: $(squeue -h -t R | wc -l) job(s)"
sleep 3 # some jobs end while no gsched watches
s_start crash --grace 2s || { bad "gsched did not restart"; finish; }
check "after the restart: what gsched runs, Slurm runs" consistent $acked
for _ in $(seq 60); do
  consistent $acked > /dev/null || { bad "inconsistent while recovering"; consistent $acked; break; }
  [ -z "$(g queue --no-headers)" ] && break
  sleep 1
done
wait_idle 60 || bad "all jobs end"
lost=""
for id in $acked; do [ "$(state "$id")" = DONE ] || lost="$lost $id:$(state "$id")"; done
check "every acknowledged job ended DONE${lost:+ (not:$lost)}" [ -z "$lost" ]
check "no task ran twice at once" ledger_check "$L"
check "no GPU used by two tasks at once" gpu_overlap
check "every task of every job ran (18 tasks)" [ "$(awk '$1 == "start" { print $2 }' "$L" | sort -u | wc -l)" = 18 ]
echo "  task starts: $(grep -c '^start' "$L") for 18 tasks"
check "no Slurm job left running" wait_for 20 '[ -z "$(squeue -h -t R,CG)" ]'

echo "# slurmctld restarts while gsched runs"
: > "$L"
acked=""
for i in 1 2 3; do acked="$acked $(gsub -g 4 --name "r$i" -- sh "$tmp/task.sh" 4)"; done
first=$(echo $acked | awk '{ print $1 }')
wait_state "$first" RUNNING 30 || bad "jobs run"
# sample gsched's node states while slurmctld is away and for 2 s after it is back
( while [ ! -f "$tmp/sampled" ]; do g nodes --no-headers | awk '{ print $1, $2 }' >> "$tmp/nstates"; sleep 0.1; done ) &
sampler=$!
s_fixture restart-ctld > "$tmp/restart.log" 2>&1 || { bad "slurmctld did not restart"; cat "$tmp/restart.log"; }
sleep 2
touch "$tmp/sampled"
wait $sampler
check "node states sampled during the restart" [ "$(wc -l < "$tmp/nstates")" -ge 20 ]
check "no node taken down or drained for the restart" eval '! grep -Eq " (down|drain)" "$tmp/nstates"'
late=$(gsub -g 2 --name late -- sh "$tmp/task.sh" 0.5)
wait_state "$late" DONE 40 || bad "a job submitted after the restart runs"
wait_idle 40 || bad "all jobs end"
for id in $acked; do check "job $id DONE across the restart" [ "$(state "$id")" = DONE ]; done
check "no task ran twice at once" ledger_check "$L"
check "no GPU used by two tasks at once" gpu_overlap
d_stop || bad "graceful stop"
finish
