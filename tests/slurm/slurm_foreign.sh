#!/usr/bin/env bash
# Foreign jobs: a job of a partition gsched does not manage ("debug", same nodes, scheduled by
# Slurm itself) holds 6 of n2's GPUs.  gsched counts them as taken: its node view shows 2
# free on n2, a job needing more than 2 GPUs per node is never placed there (a gang of 4 tasks
# x 5 GPUs, one task per node, waits instead of sitting in Slurm's queue for resources; jobs
# behind it backfill, fifo-backfill), every job gsched
# says is RUNNING is RUNNING in Slurm, and n2's GPUs return once the foreign job ends.
# usage: slurm_foreign.sh GSCHED_BIN SOURCE_DIR
bin=$1 src=$2
SLURM_K=5
. "$src/tests/slurm/lib.sh"
s_up SLURM_FIXTURE_PARTITIONS=gpu:all,debug:all
s_start foreign --policy fifo-backfill --grace 2s || { bad "gsched serve --executor slurm did not start"; finish; }

free() { g nodes --no-headers | awk -v n="$1" '$1 == n { print $5 }'; }
block() { echo "while [ ! -f '$tmp/$1' ]; do sleep 0.05; done"; }
# every job gsched says is RUNNING runs in Slurm, once (a mismatch counts when it persists
# for 2 s: gsched learns of an end at its next poll)
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
  for id in $m; do echo "  job $id: gsched says RUNNING, Slurm: '$(squeue -h -j "$(sjob "$id")" -o '%T %r' 2> /dev/null)'"; done
  return 1
}

f=$(sbatch --parsable -p debug --gres=gpu:6 -w n2 -o /dev/null --wrap 'sleep 300')
check "the foreign job runs on n2 (Slurm's own scheduling)" wait_sstate "$f" RUNNING 20
check "gsched counts n2's foreign GPUs as taken: 2 free" wait_for 20 '[ "$(free n2)" = 2 ]'
check "the other nodes stay fully free" [ "$(free n1) $(free n3) $(free n4)" = "8 8 8" ]
check "gsched did not adopt the foreign job" [ -z "$(g queue --no-headers)" ]

gang=$(gsub --tasks 4 -g 5 --name gang -- sh -c "$(block gang-done)")
sleep 2
check "a 4 x 5 GPU gang waits: n2 has only 2 GPUs for gsched" [ "$(state "$gang")" = PENDING ]
sg=$(sjob "$gang")
check "no Slurm job of the gang waits for resources" eval '[ -z "$sg" ] || [ "$(sfield "$sg" Priority)" = 0 ]'
small=$(gsub -g 2 --name small -- sh -c "$(block small-done)")
wait_state "$small" RUNNING 30 || bad "a 2-GPU job runs"
jobs="$gang $small"
for i in 1 2 3; do
  j=$(gsub -g 8 --name "big$i" -- sh -c "$(block big-done)")
  jobs="$jobs $j"
done
sleep 2
running=$(for j in $jobs; do [ "$(state "$j")" = RUNNING ] && echo "$j"; done | wc -l)
echo "  gsched runs $running of 5 jobs: $(g queue --no-headers | awk '{ printf "%s ", $0 }')"
check "every job gsched runs, Slurm runs (no GPU double-booked)" consistent $jobs
for j in $jobs; do
  pl=$(field "$j" Placement)
  case $pl in *n2:*) [ "$(echo "$pl" | tr ' ' '\n' | awk -F: '$1 == "n2" { print $2 }')" = 0-1 ] ||
    bad "job $j takes more than n2's 2 free GPUs: $pl" ;;
  esac
done
check "the gang still waits" [ "$(state "$gang")" = PENDING ]

scancel "$f"
check "n2's GPUs come back once the foreign job ends" wait_for 30 '[ "$(free n2)" != 2 ] && [ -n "$(free n2)" ]'
touch "$tmp/small-done" "$tmp/big-done"
wait_state "$gang" RUNNING 40 || bad "the gang runs once GPUs free up"
check "the gang uses n2 too" contains "$(field "$gang" Placement)" "n2:"
check "Slurm runs the gang on all 4 nodes" wait_srun "$gang" "n[1-4]"
touch "$tmp/gang-done"
wait_state "$gang" DONE 30 || bad "the gang finishes"
check "no Slurm job left running" wait_for 20 '[ -z "$(squeue -h -t R,CG)" ]'
d_stop || bad "graceful stop"
finish
