#!/usr/bin/env bash
# Users keep sbatch: a plain `sbatch` into gsched's partition (as root and as a user gst-*) is
# held at submission (contrib/slurm/job_submit.lua), adopted by gsched (a gsched job with the
# Slurm job's GPUs and user, event "adopted from slurm:ID"), scheduled by gsched's policy and
# runs where gsched placed it; squeue keeps working for the user; the user cannot release the
# held job themselves (while gsched keeps it waiting, the cluster being full); a user's scancel
# of an adopted job cancels the gsched job; a job without GPUs is refused and cancelled in
# Slurm.
# usage: slurm_sbatch.sh GSCHED_BIN SOURCE_DIR
bin=$1 src=$2
SLURM_K=4
. "$src/tests/slurm/lib.sh"
s_up
s_start sbatch --grace 2s || { bad "gsched serve --executor slurm did not start"; finish; }
out=$S_DIR/log # 1777: any user's job writes here
u=gst-slurm-bob
s_user $u

ge() { [ -n "$1" ] && [ -n "$2" ] && [[ ! "$1" < "$2" ]]; }
# gjob SLURMID: the gsched job adopted from that Slurm job (its "adopted from slurm:ID" event)
gjob() {
  local id
  for id in $(seq 1 30); do
    "$bin" describe job "$id" --server "$SERVER" 2> /dev/null | grep -Eq "slurm:$1([^0-9]|$)" && {
      echo "$id"
      return 0
    }
  done
  return 1
}

echo "# root's sbatch"
r=$(sbatch --parsable -p gpu --gres=gpu:2 -o "$out/root.out" \
  --wrap 'echo "node=$SLURMD_NODENAME cvd=$CUDA_VISIBLE_DEVICES"; sleep 1')
check "root's sbatch accepted" [ -n "$r" ]
rj=""
wait_for 20 'rj=$(gjob "$r")' || true
check "gsched adopted root's Slurm job $r" [ -n "$rj" ]
if [ -n "$rj" ]; then
  check "adopted: 1 x 2 GPU(s)" contains "$(field "$rj" Tasks)" "1 x 2 GPU(s)"
  check "adopted: event says where from" contains "$(g describe job "$rj")" "adopted from slurm:$r"
  wait_state "$rj" DONE 40 || bad "root's adopted job done"
  place=$(field "$rj" Placement)
  check "ran where gsched placed it, on Slurm's GPUs" wait_for 10 'grep -qsx "node=${place%%:*} cvd=0,1" "$out/root.out"'
  echo "  placement $place, output: $(cat "$out/root.out" 2> /dev/null)"
  check "Slurm: the job completed" wait_for 20 'case $(sfield "$r" JobState) in COMPLETED | CANCELLED) true ;; *) false ;; esac'
fi

echo "# a user's sbatch while the cluster is full"
fill=$(gsub --tasks 4 -g 8 --name fill -- sh -c "while [ ! -f '$tmp/fill-done' ]; do sleep 0.05; done")
wait_state "$fill" RUNNING 30 || bad "a gang fills the cluster"
b=$(cd /tmp && runuser -u $u -- sbatch --parsable -p gpu --gres=gpu:1 -o "$out/user.out" \
  --wrap 'echo "user=$(id -un) node=$SLURMD_NODENAME cvd=$CUDA_VISIBLE_DEVICES"')
check "user's sbatch accepted" [ -n "$b" ]
bj=""
wait_for 20 'bj=$(gjob "$b")' || true
check "gsched adopted the user's Slurm job $b" [ -n "$bj" ]
check "adopted as the user" [ "$(field "$bj" User)" = $u ]
check "waits in gsched (cluster full)" [ "$(state "$bj")" = PENDING ]
check "squeue works for the user: held" [ "$(runuser -u $u -- squeue -h -j "$b" -o '%T %u')" = "PENDING $u" ]
expect 1 "reserved to|rror" -- runuser -u $u -- scontrol release "$b"
expect 1 "reserved to|rror" -- runuser -u $u -- scontrol update JobId="$b" NodeList=n1 Priority=100
sleep 1
check "still held after the user's attempts" [ "$(sstate "$b") $(sfield "$b" Priority)" = "PENDING 0" ]
check "still waiting in gsched" [ "$(state "$bj")" = PENDING ]
touch "$tmp/fill-done"
wait_state "$bj" DONE 40 || bad "the user's adopted job runs once GPUs free up and finishes"
check "it ran as the user where gsched placed it" wait_for 10 'grep -qsx "user=$u node=$(field "$bj" Placement | cut -d: -f1) cvd=0" "$out/user.out"'
check "it started after the gang ended" ge "$(field "$bj" Started | awk '{print $1}')" "$(field "$fill" Ended | awk '{print $1}')"

echo "# a user's scancel of an adopted job"
fill=$(gsub --tasks 4 -g 8 --name fill2 -- sh -c "while [ ! -f '$tmp/fill2-done' ]; do sleep 0.05; done")
wait_state "$fill" RUNNING 30 || bad "a gang fills the cluster again"
c=$(cd /tmp && runuser -u $u -- sbatch --parsable -p gpu --gres=gpu:1 -o /dev/null --wrap true)
cj=""
wait_for 20 'cj=$(gjob "$c")' || true
check "adopted" [ -n "$cj" ]
runuser -u $u -- scancel "$c"
wait_state "$cj" CANCELLED 20 || bad "the user's scancel cancels the gsched job"
touch "$tmp/fill2-done"
wait_state "$fill" DONE 30 || bad "fill2 done"

echo "# a job without GPUs in gsched's partition"
n=$(sbatch --parsable -p gpu -o /dev/null --wrap true)
check "refused by gsched and cancelled in Slurm" wait_for 20 '[ "$(sfield "$n" JobState)" = CANCELLED ]'
check "no Slurm job left running" wait_for 20 '[ -z "$(squeue -h -t R,CG)" ]'
d_stop || bad "graceful stop"
finish
