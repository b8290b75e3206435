#!/usr/bin/env bash
# Node failure on Slurm: `fixture.sh stop-node` (SIGSTOP of the slurmd running a gsched job)
# makes Slurm mark the node DOWN (SlurmdTimeout 5 s here); gsched takes the node out of
# service (its GPUs down) and requeues the job, which runs again on another node, once (Slurm's
# own requeue is re-held, gsched places it), in a new Slurm job: the old one may still live on
# the stopped node, whose slurmd's late messages for it would hit a reused job's new allocation
# when it comes back (Slurm requeued it then and lost count of its GPUs), so it is cancelled.
# `fixture.sh cont-node` brings the node back (ReturnToService=2): its GPUs return to gsched
# and a gang over all four nodes can run.
# usage: slurm_node.sh GSCHED_BIN SOURCE_DIR
bin=$1 src=$2
SLURM_K=6
. "$src/tests/slurm/lib.sh"
s_up
s_start node --grace 2s --executor-opt start_timeout=10 || { bad "gsched serve --executor slurm did not start"; finish; }

nstate() { g nodes --no-headers | awk -v n="$1" '$1 == n { print $2 }'; }
nfree() { g nodes --no-headers | awk -v n="$1" '$1 == n { print $5 }'; }
sinfo_state() { sinfo -h -N -n "$1" -o %T | head -1; }

a=$(gsub -g 8 --name A -- sh -c "echo \"run \$GSCHED_RUN on \$SLURMD_NODENAME\"; while [ ! -f '$tmp/a-done' ]; do sleep 0.05; done")
wait_state "$a" RUNNING 30 || bad "A runs"
x=$(field "$a" Placement | cut -d: -f1)
sa=$(sjob "$a")
check "Slurm runs A where gsched placed it ($x)" wait_srun "$a" "$x"
t0=$SECONDS
s_fixture stop-node "$x"
check "Slurm marks $x down" wait_for 90 'case $(sinfo_state "$x") in down*) true ;; *) false ;; esac'
echo "  $x: $(sinfo_state "$x") after $((SECONDS - t0))s"
check "gsched takes $x out of service" wait_for 20 '[ "$(nstate "$x")" = down ]'
wait_state "$a" RUNNING 60 || bad "A is requeued and runs again"
y=$(field "$a" Placement | cut -d: -f1)
check "A runs again elsewhere ($y)" [ -n "$y" ] && [ "$y" != "$x" ]
check "A's second run" [ "$(field "$a" Runs)" = 2 ]
check "A's events: the node failure requeued it" contains "$(events "$a")" "requeued"
check "Slurm runs A once, on $y" wait_for 15 '[ "$(sruns "$a" | awk "{ print \$2 }")" = "$y" ]'
sb=$(sruns "$a" | awk '{ print $1 }')
check "in a new Slurm job, the old one cancelled" [ -n "$sb" ] && [ "$sb" != "$sa" ] && [ "$(sfield "$sa" JobState)" = CANCELLED ]
check "run 2 runs on $y" wait_for 10 'contains "$(g logs "$a")" "run 2 on $y"'
check "gsched places nothing on $x" [ "$(nfree "$x")" = 0 ]

s_fixture cont-node "$x"
check "Slurm returns $x to service" wait_for 90 'case $(sinfo_state "$x") in idle* | mixed* | alloc*) true ;; *) false ;; esac'
check "its GPUs return to gsched" wait_for 20 '[ "$(nfree "$x")" = 8 ]'
touch "$tmp/a-done"
wait_state "$a" DONE 60 || bad "A finishes"
all=$(gsub --tasks 4 -g 8 --name all -- sh -c 'echo "on $SLURMD_NODENAME"')
wait_state "$all" DONE 40 || bad "a gang over all four nodes runs"
check "the gang used $x too" contains "$(field "$all" Placement)" "$x:0-7"
check "A finished in its new Slurm job" [ "$(sfield "$sb" JobState)" = COMPLETED ]
check "no Slurm job left running" wait_for 20 '[ -z "$(squeue -h -t R,CG)" ]'
d_stop || bad "graceful stop"
finish
