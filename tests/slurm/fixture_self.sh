#!/usr/bin/env bash
# The Slurm fixture alone (tests/slurm/fixture.sh), through Slurm's own commands: the control
# path gsched's slurm executor relies on.  4 nodes x 8 fake GPUs come up idle; a job submitted
# to the managed partition enters held through contrib/slurm/job_submit.lua (priority 0,
# JobHeldUser); placed on a chosen node and released it runs there with CUDA_VISIBLE_DEVICES
# set; a requeue into hold stops it and leaves it held (priority 0) and it can be re-placed on
# another node; a non-root user's job is held too and that user cannot release it (only
# scancel it).
# usage: fixture_self.sh GSCHED_BIN SOURCE_DIR
bin=$1 src=$2
SLURM_K=0 S_FIXTURE_ONLY=1
. "$src/tests/slurm/lib.sh"
s_up

out=$S_DIR/log # 1777: jobs of any user write here
check "4 nodes, all idle with gpu:8" [ "$(sinfo -h -N -o '%N %T %G' | sort -u | tr '\n' ' ')" = "n1 idle gpu:8 n2 idle gpu:8 n3 idle gpu:8 n4 idle gpu:8 " ]

echo "# held submit, place and release"
j=$(sbatch --parsable -p gpu --gres=gpu:2 -o "$out/place.out" \
  --wrap 'echo "node=$SLURMD_NODENAME cvd=$CUDA_VISIBLE_DEVICES"; sleep 0.2')
check "sbatch accepted" [ -n "$j" ]
check "held at submission: PENDING" [ "$(sstate "$j")" = PENDING ]
check "held at submission: reason JobHeldUser" [ "$(squeue -h -j "$j" -o %r)" = JobHeldUser ]
check "held at submission: priority 0" [ "$(sfield "$j" Priority)" = 0 ]
sleep 1
check "still held after a scheduler pass" [ "$(sstate "$j")" = PENDING ]
scontrol update JobId="$j" NodeList=n3 && scontrol release "$j"
check "placed and released: completes" wait_for 20 '[ "$(sfield "$j" JobState)" = COMPLETED ]'
check "ran on the chosen node with 2 GPUs" wait_for 5 'grep -qsx "node=n3 cvd=0,1" "$out/place.out"'
[ -f "$out/place.out" ] && echo "  $(cat "$out/place.out")"

echo "# requeue into hold, re-place elsewhere"
j=$(sbatch --parsable -p gpu --gres=gpu:1 -o "$out/rq.out" --open-mode=append \
  --wrap 'echo "run node=$SLURMD_NODENAME restarts=${SLURM_RESTART_COUNT:-0}"; sleep 30')
scontrol update JobId="$j" NodeList=n1 && scontrol release "$j"
check "runs on n1" wait_sstate "$j" RUNNING 20
check "squeue shows it on n1" [ "$(squeue -h -j "$j" -o %N)" = n1 ]
scontrol requeuehold "$j"
check "requeued into hold: PENDING" wait_sstate "$j" PENDING 20
check "requeued into hold: priority 0" [ "$(sfield "$j" Priority)" = 0 ]
check "requeued into hold: restart count 1" [ "$(sfield "$j" Restarts)" = 1 ]
sleep 1
check "requeued into hold: stays pending" [ "$(sstate "$j")" = PENDING ]
scontrol update JobId="$j" NodeList=n2 StartTime=now && scontrol release "$j"
check "re-placed: runs on n2" wait_sstate "$j" RUNNING 20
check "squeue shows it on n2" [ "$(squeue -h -j "$j" -o %N)" = n2 ]
check "both runs wrote their node" wait_for 5 'grep -qs "run node=n2 restarts=1" "$out/rq.out"'
grep -q "run node=n1 restarts=0" "$out/rq.out" && ok "first run was on n1" || bad "first run was on n1: $(cat "$out/rq.out")"
scancel "$j"
check "cancelled" wait_for 20 '[ "$(sfield "$j" JobState)" = CANCELLED ]'

echo "# a user cannot release their own held job"
u=gst-slurm-ann
s_user $u
uj=$(cd /tmp && runuser -u $u -- sbatch --parsable -p gpu --gres=gpu:1 -o "$out/user.out" --wrap 'id -un')
check "user's sbatch accepted" [ -n "$uj" ]
check "user's job held" [ "$(squeue -h -j "$uj" -o '%T %r')" = "PENDING JobHeldUser" ]
check "user's job belongs to the user" [ "$(squeue -h -j "$uj" -o %u)" = $u ]
expect 1 "reserved to|rror" -- runuser -u $u -- scontrol release "$uj"
expect 1 "reserved to|rror" -- runuser -u $u -- scontrol update JobId="$uj" Nice=-10 NodeList=n1
sleep 1
check "still held after the user's attempts" [ "$(sfield "$uj" Priority)" = 0 ]
check "still pending" [ "$(sstate "$uj")" = PENDING ]
expect 0 "" -- runuser -u $u -- scancel "$uj"
check "the user can scancel it" wait_for 10 '[ "$(sfield "$uj" JobState)" = CANCELLED ]'
finish
