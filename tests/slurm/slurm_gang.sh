#!/usr/bin/env bash
# A 2-node gang through `gsched serve --executor slurm`: one Slurm job over the two nodes
# gsched chose (squeue shows it there, RUNNING, while gsched says RUNNING), and every task gets
# the environment a local task gets (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR = the first
# node's address, MASTER_PORT, GSCHED_JOB_ID, GSCHED_TASK_INDEX, GSCHED_WORLD_SIZE,
# GSCHED_NODE, GSCHED_GPUS) plus Slurm's CUDA_VISIBLE_DEVICES for the GPUs it gave on its node;
# checked from files the tasks write.  A 6-GPU job on n1 first makes gsched's choice differ
# from "the first nodes"; 5 GPUs per task cannot share a node.  A job whose tasks differ in
# size (members 1x2,1x1) is refused at submit (one GRES count per Slurm step), and so is an
# interactive job (gsched run: use srun).
# usage: slurm_gang.sh GSCHED_BIN SOURCE_DIR
bin=$1 src=$2
SLURM_K=2
. "$src/tests/slurm/lib.sh"
s_up
s_start gang --grace 2s || { bad "gsched serve --executor slurm did not start"; finish; }

block() { echo "while [ ! -f '$tmp/$1' ]; do sleep 0.05; done"; }
check "the model comes from Slurm: n1..n4, 8 GPUs each" [ "$(g nodes --no-headers | awk '{ printf "%s:%s ", $1, $3 }')" = "n1:8 n2:8 n3:8 n4:8 " ]

x=$(gsub -g 6 --name X -- sh -c "$(block x-done)")
wait_state "$x" RUNNING 30 || bad "X runs"
check "X runs on n1 in Slurm" wait_srun "$x" n1
mkdir -p "$tmp/gang"
gj=$(gsub --tasks 2 -g 5 --name G -- sh -c "env | sort > '$tmp/gang/env-'\$GSCHED_TASK_INDEX; $(block g-done)")
wait_state "$gj" RUNNING 30 || bad "the gang runs"
place=$(field "$gj" Placement)
echo "  gsched placed it on: $place"
gnodes=$(echo "$place" | tr ' ' '\n' | cut -d: -f1 | tr '\n' ' ')
check "gsched placed the gang on two nodes other than n1 (5 GPUs each)" \
  eval '[ "$(echo "$place" | wc -w)" = 2 ] && ! contains "$place" "n1:" && [ "$(echo "$place" | tr " " "\n" | cut -d: -f2 | sort -u)" = 0-4 ]'
sj=$(sjob "$gj")
check "one Slurm job carries the gang's tag" [ -n "$sj" ]
check "squeue: RUNNING on 2 nodes" wait_for 15 '[ "$(squeue -h -j "$sj" -o "%T %D")" = "RUNNING 2" ]'
check "squeue: on the nodes gsched chose" [ "$(scontrol show hostnames "$(squeue -h -j "$sj" -o %N)" | tr '\n' ' ')" = "$gnodes" ]
check "Slurm gives 5 GPUs per node" contains "$(sfield "$sj" TresPerNode)" "gpu:5"
check "both tasks wrote their environment" wait_for 20 '[ -s "$tmp/gang/env-0" ] && [ -s "$tmp/gang/env-1" ]'
first=$(echo "$gnodes" | awk '{ print $1 }')
addr=$(scontrol -o show node "$first" | tr ' ' '\n' | awk -F= '$1 == "NodeAddr" { print $2 }')
v() { awk -F= -v k="$2" '$1 == k { print substr($0, length(k) + 2) }' "$tmp/gang/env-$1"; }
for i in 0 1; do
  node=$(echo "$gnodes" | awk -v i=$((i + 1)) '{ print $i }')
  check "task $i: RANK=$i" [ "$(v $i RANK)" = $i ]
  check "task $i: LOCAL_RANK=0" [ "$(v $i LOCAL_RANK)" = 0 ]
  check "task $i: WORLD_SIZE=2" [ "$(v $i WORLD_SIZE)" = 2 ]
  check "task $i: GSCHED_WORLD_SIZE=2" [ "$(v $i GSCHED_WORLD_SIZE)" = 2 ]
  check "task $i: GSCHED_TASK_INDEX=$i" [ "$(v $i GSCHED_TASK_INDEX)" = $i ]
  check "task $i: GSCHED_JOB_ID=$gj" [ "$(v $i GSCHED_JOB_ID)" = "$gj" ]
  check "task $i: GSCHED_GPUS=5" [ "$(v $i GSCHED_GPUS)" = 5 ]
  check "task $i: GSCHED_NODE=$node" [ "$(v $i GSCHED_NODE)" = "$node" ]
  check "task $i: runs on $node in Slurm" [ "$(v $i SLURMD_NODENAME)" = "$node" ]
  check "task $i: MASTER_ADDR=$addr (the first node's address)" [ "$(v $i MASTER_ADDR)" = "$addr" ]
  check "task $i: CUDA_VISIBLE_DEVICES=0,1,2,3,4" [ "$(v $i CUDA_VISIBLE_DEVICES)" = 0,1,2,3,4 ]
  check "task $i: GSCHED_RUN=1" [ "$(v $i GSCHED_RUN)" = 1 ]
done
check "MASTER_PORT set, the same for both tasks" eval '[ -n "$(v 0 MASTER_PORT)" ] && [ "$(v 0 MASTER_PORT)" = "$(v 1 MASTER_PORT)" ]'
check "one start for both tasks" [ "$(events "$gj" | tr ' ' '\n' | grep -c '^started$')" = 1 ]
touch "$tmp/g-done" "$tmp/x-done"
wait_state "$gj" DONE 30 || bad "the gang finishes"
wait_state "$x" DONE 30 || bad "X finishes"
check "Slurm's jobs are no longer running" wait_for 20 '[ -z "$(squeue -h -t R,CG)" ]'
# tasks of different GPU counts (issue 14) cannot be one Slurm step: refused at submit, saying so
expect 2 "the slurm executor cannot run tasks of different GPU counts" -- \
  "$bin" submit --server "$SERVER" --members 1x2,1x1 -- true
# gsched run (issue 16): no interactive jobs through Slurm (srun is the way there)
expect 2 "the slurm executor cannot run interactive jobs" -- "$bin" run --server "$SERVER" -- true
d_stop || bad "graceful stop"
finish
