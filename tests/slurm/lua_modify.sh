#!/usr/bin/env bash
# contrib/slurm/job_submit.lua against a user moving a job into gsched's partition: a job
# submitted to an unmanaged partition (Slurm schedules it, not held) must not be moved into a
# managed one by its user (scontrol update Partition=gpu), or Slurm's own scheduler would run
# it on gsched's nodes, past gsched's queue, quotas and fairness.  Root (gsched) still may.
# usage: lua_modify.sh GSCHED_BIN SOURCE_DIR
bin=$1 src=$2
SLURM_K=9 S_FIXTURE_ONLY=1
. "$src/tests/slurm/lib.sh"
s_up 'SLURM_FIXTURE_PARTITIONS=gpu:n[1-2],cpu:n[3-4]'

u=gst-slurm-lua
s_user $u
# pending for an hour (begin time): Slurm would start it as soon as it may
j=$(cd /tmp && runuser -u $u -- sbatch --parsable -p cpu --begin=now+3600 --gres=gpu:1 -o /dev/null --wrap 'sleep 30')
check "user's job in the unmanaged partition accepted" [ -n "$j" ]
check "not held there" [ "$(sfield "$j" Priority)" != 0 ]
expect 1 "reserved to|rror" -- runuser -u $u -- scontrol update JobId="$j" Partition=gpu
expect 1 "reserved to|rror" -- runuser -u $u -- scontrol update JobId="$j" Partition=cpu,gpu
check "still in its own partition" [ "$(sfield "$j" Partition)" = cpu ]
expect 0 "" -- runuser -u $u -- scontrol update JobId="$j" Comment=mine
check "other changes still work" [ "$(sfield "$j" Comment)" = mine ]
expect 0 "" -- scontrol update JobId="$j" Partition=gpu
check "root may move it" [ "$(sfield "$j" Partition)" = gpu ]
expect 0 "" -- runuser -u $u -- scancel "$j"
finish
