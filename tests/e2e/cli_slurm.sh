#!/usr/bin/env bash
# Issue 11 item 16: the CLI surprised Slurm users.  `-t 30` meant 30 tasks (Slurm: 30
# minutes), `--time=30` 30 seconds, `-n 4` the job name (Slurm: 4 tasks), `-p` the priority
# (Slurm: partition), `-q` the VC (Slurm: QOS), `#SBATCH` scripts were rejected, and queue /
# cancel had no squeue / scancel selectors.  Each flag's meaning is checked here against a
# real daemon (what the job got: `gsched describe`, its output, its environment).
# usage: cli_slurm.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

# is NAME GOT WANT
is() {
  if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', wanted '$3'"; fi
}
# spec ID KEY: a field of the job's stored spec (describe --json)
spec() {
  "$bin" describe job "$1" --json --server "$SERVER" 2>/dev/null |
    python3 -c 'import json, sys; v = json.load(sys.stdin)["spec"].get(sys.argv[1]); print("" if v is None else v)' "$2"
}
# done_log ID: wait for the job to end, print its gsched log
done_log() { wait_state "$1" DONE 30 > /dev/null && g logs "$1"; }

d_start slurm --cluster 2x4 --grace 1s || { bad "daemon start"; finish; }
cd "$tmp" || exit 1

# ---- submit: sbatch's short options with sbatch's meanings -----------------------------------
id=$(gsub -t 30 -- true)
is "-t 30 is 30 minutes (not 30 tasks)" "$(field "$id" 'Time limit')" "1800s"
is "-t 30 keeps one task" "$(field "$id" Tasks | cut -d' ' -f1)" "1"
id=$(gsub --time=30 -- true)
is "--time=30 is 30 minutes (not seconds)" "$(field "$id" 'Time limit')" "1800s"
id=$(gsub --time 5:30 -- true)
is "--time MM:SS" "$(field "$id" 'Time limit')" "330s"
id=$(gsub --time 1-02:03:04 -- true)
is "--time D-HH:MM:SS" "$(field "$id" 'Time limit')" "93784s"
id=$(gsub --time 2-0 -- true)
is "--time D-HH" "$(field "$id" 'Time limit')" "172800s"
id=$(gsub --time UNLIMITED -- true)
is "--time UNLIMITED is no limit" "$(field "$id" 'Time limit')" "none"
expect 2 "--time: 'soon' is not a time limit" -- "$bin" submit --server "$SERVER" -t soon -- true

id=$(gsub -n 2 -J named -- true)
is "-n 2 is two tasks (not the name)" "$(field "$id" Tasks)" "2 x 1 GPU(s), gang (all tasks start together)"
is "-J is the job name" "$(field "$id" Name)" "named"
id=$(gsub --ntasks=2 --job-name=long -- true)
is "--ntasks / --job-name" "$(field "$id" Tasks | cut -d' ' -f1-3)/$(field "$id" Name)" "2 x 1/long"
id=$(gsub -N 2 -G 4 -- true)
is "-N 2 -G 4: two tasks of two GPUs" "$(field "$id" Tasks | cut -d' ' -f1-3)" "2 x 2"
id=$(gsub -G 4 --gpus-per-task 2 -- true)
is "-G 4 --gpus-per-task 2: two tasks" "$(field "$id" Tasks | cut -d' ' -f1-3)" "2 x 2"
id=$(gsub -n 2 --gpus=4 -- true)
is "--gpus is the job's total (split over -n)" "$(field "$id" Tasks | cut -d' ' -f1-3)" "2 x 2"
id=$(gsub -G gpu:2 -- true)
is "-G TYPE:N sets the GPU type" "$(field "$id" 'GPU type')/$(field "$id" Tasks | cut -d' ' -f1-3)" "gpu/1 x 2"
id=$(gsub -C gpu -- true)
is "-C (constraint) is the GPU type" "$(field "$id" 'GPU type')" "gpu"
id=$(gsub --gres=gpu:3 -- true)
is "--gres=gpu:N is GPUs per task (per node)" "$(field "$id" Tasks | cut -d' ' -f1-3)" "1 x 3"
expect 2 "cannot be split evenly over 2 task" -- "$bin" submit --server "$SERVER" -n 2 -G 3 -- true
expect 2 "--nodes 2 with --ntasks 4" -- "$bin" submit --server "$SERVER" -N 2 -n 4 -- true
id=$(gsub -c 3 --mem 1G -- true)
is "-c is CPUs per task" "$(spec "$id" cpus)" "3"

id=$(gsub -p research -- true)
is "-p is the partition (VC), not the priority" "$(field "$id" VC)" "research"
id=$(gsub --partition=other -- true)
is "--partition" "$(field "$id" VC)" "other"
id=$(gsub -q prod -- true)
is "-q is the QOS (priority class), not the VC" "$(field "$id" Priority)/$(field "$id" VC)" "100 (prod)/default"
id=$(gsub --qos=normal -- true)
is "--qos=normal is priority 0" "$(field "$id" Priority)" "0"
id=$(gsub --qos 7 -- true)
is "--qos N is priority N" "$(field "$id" Priority)" "7"
expect 2 "--qos: 'urgent' is not a QOS: .*prod \\(100\\), test \\(10\\), normal \\(0\\), oppo \\(-1\\)" -- "$bin" submit --server "$SERVER" -q urgent -- true
# gsched's own long options keep their meaning
id=$(gsub --priority test --vc mine --tasks 2x2 --name own -- true)
is "--priority / --vc / --tasks NxG / --name" \
  "$(field "$id" Priority)/$(field "$id" VC)/$(field "$id" Tasks | cut -d' ' -f1-3)/$(field "$id" Name)" \
  "10 (test)/mine/2 x 2/own"

mkdir -p "$tmp/wd"
id=$(gsub -D wd -- true)
is "-D is the working directory" "$(field "$id" Workdir)" "$tmp/wd"

# -o / -e: where the job's output goes (relative to its workdir; %j is its id)
id=$(gsub -o 'out-%j.txt' -- sh -c 'echo to-out; echo to-err >&2')
done_log "$id" > /dev/null
is "-o FILE gets stdout and stderr" "$(cat "$tmp/out-$id.txt" 2>&1 | tr '\n' ' ')" "to-out to-err "
check "-o: gsched logs keeps only gsched's lines" eval "! g logs $id | grep -q to-out"
id=$(gsub -o 'o-%j-%x.txt' -e 'e-%j.txt' -J nm -- sh -c 'echo to-out; echo to-err >&2')
done_log "$id" > /dev/null
is "-o with -e: stdout only" "$(cat "$tmp/o-$id-nm.txt" 2>&1)" "to-out"
is "-e FILE gets stderr" "$(cat "$tmp/e-$id.txt" 2>&1)" "to-err"
id=$(gsub -e 'only-err.txt' -- sh -c 'echo to-out; echo to-err >&2')
check "-e alone: stdout stays in gsched logs" eval "done_log $id | grep -q to-out"
is "-e alone: stderr in the file" "$(cat "$tmp/only-err.txt" 2>&1)" "to-err"
expect 2 "--output: .*unsupported '%Z'" -- "$bin" submit --server "$SERVER" -o 'x-%Z' -- true

# --export: the job environment starts empty (gsched's default); ALL / NONE / VAR[=VALUE]
export SUBMITTER_VAR=fromhere
id=$(gsub -- env)
check "default: the submitter's environment is not exported" eval "! done_log $id | grep -q SUBMITTER_VAR"
id=$(gsub --export=ALL -- env)
out=$(done_log "$id")
check "--export=ALL exports it" contains "$out" "SUBMITTER_VAR=fromhere"
check "--export=ALL never exports GSCHED_* names of the submitter" eval "! printf '%s' \"\$out\" | grep -q '^GSCHED_TOKEN='"
id=$(gsub --export=NONE -- env)
check "--export=NONE exports nothing" eval "! done_log $id | grep -q SUBMITTER_VAR"
id=$(gsub --export=SUBMITTER_VAR,X1=v1 -- env)
out=$(done_log "$id")
check "--export=VAR,VAR=VALUE" eval "contains \"\$out\" SUBMITTER_VAR=fromhere && contains \"\$out\" X1=v1"
unset SUBMITTER_VAR

# options are checked (never ignored)
expect 2 "array '0-15%x': after '%' give how many" -- "$bin" submit --server "$SERVER" --array 0-15%x -- true
# --dependency and --hold are real (tests/e2e/cli_deps.sh tests them): Slurm's syntax is checked
expect 2 "dependency 'afterok:x': position 9: expected a job id" -- "$bin" submit --server "$SERVER" --dependency afterok:x -- true
expect 2 "'dependency': no job 99999" -- "$bin" submit --server "$SERVER" -d afterany:99999 -- true
id=$(gsub -H -- true)
check "-H submits held" eval "[ \"\$(field $id Reason)\" = JobHeldUser ]"
g cancel "$id" > /dev/null

# --array: one job per index, each told its index; --parsable prints the array's id
aid=$(gsub --array 0-1,5 -J arr -o 'arr-%a.txt' -- sh -c 'echo "$GSCHED_ARRAY_TASK_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT"')
set -- $aid
is "--array 0-1,5: one array id" "$#" "1"
for i in 0 1 5; do wait_state "${aid}_$i" DONE 30 > /dev/null; done
expect 4 "no job ${aid}_2" -- "$bin" describe job "${aid}_2" --server "$SERVER"
is "--array: element 0" "$(cat "$tmp/arr-0.txt" 2>&1)" "0 0 3"
is "--array: element 5" "$(cat "$tmp/arr-5.txt" 2>&1)" "5 5 3"
expect 2 "array 'x' is not an index list" -- "$bin" submit --server "$SERVER" --array x -- true

# ---- #SBATCH batch scripts ---------------------------------------------------------------------
cat > "$tmp/train.sh" <<'EOF'
#!/bin/bash
# a comment before the directives
#SBATCH --job-name=from-script   # trailing comment
#SBATCH -t 1-02:00 -N 2
#SBATCH --gpus-per-task=1
#SBATCH -p research
#SBATCH --output=train-%j.out
echo "args=$* name=$0"
#SBATCH -J ignored-after-the-first-command
EOF
id=$(gsub "$tmp/train.sh" one two)
is "#SBATCH --job-name" "$(field "$id" Name)" "from-script"
is "#SBATCH -t D-HH:MM" "$(field "$id" 'Time limit')" "93600s"
is "#SBATCH -N 2 --gpus-per-task=1" "$(field "$id" Tasks | cut -d' ' -f1-3)" "2 x 1"
is "#SBATCH -p" "$(field "$id" VC)" "research"
wait_state "$id" DONE 30 > /dev/null
is "#SBATCH --output; the script gets its arguments" "$(head -1 "$tmp/train-$id.out" 2>&1)" "args=one two name=$tmp/train.sh"
id=$(gsub -J override -p other "$tmp/train.sh")
is "command-line flags override #SBATCH lines" "$(field "$id" Name)/$(field "$id" VC)" "override/other"
printf '#!/bin/sh\n#SBATCH -n 2\necho plain\n' > "$tmp/plain.sh"
id=$(gsub "$tmp/plain.sh")
is "a script's default name is its file name" "$(field "$id" Name)/$(field "$id" Tasks | cut -d' ' -f1)" "plain.sh/2"
printf '#!/bin/sh\n#SBATCH -J argy\necho "n=$# 1=$1 2=$2"\n' > "$tmp/argy.sh"
id=$(gsub "$tmp/argy.sh" plain -- --dashed)
printf '#!/bin/sh\necho edited\n' > "$tmp/argy.sh"
is "script arguments, those starting with - after --; the text read at submission" \
  "$(done_log "$id" | grep '^n=')" "n=2 1=plain 2=--dashed"
id=$(gsub --wrap 'echo "wrapped $GSCHED_JOB_ID"')
check "--wrap runs a shell command" eval "done_log $id | grep -qx 'wrapped $id'"
printf '#!/bin/sh\n#SBATCH -n 1\n#SBATCH --licenses=lab\ntrue\n' > "$tmp/lic.sh"
expect 2 "lic.sh:3: #SBATCH: unknown or unsupported option '--licenses=lab'" -- "$bin" submit --server "$SERVER" "$tmp/lic.sh"
printf '#!/bin/sh\n#SBATCH --dependency=afterok:3x\ntrue\n' > "$tmp/dep.sh"
expect 2 "dependency 'afterok:3x': position 10" -- "$bin" submit --server "$SERVER" "$tmp/dep.sh"

# ---- queue: squeue's -o/--format, -t/--states, -u, -p, -q, -n, -j, -h, -i; CG -----------------
wait_idle 60 || bad "idle before the queue checks"
hold="while [ ! -f '$tmp/go' ]; do sleep 0.05; done"

# CG: a cancelled job whose task is still stopping (it takes 3 s to handle SIGTERM)
cg=$(gsub -J stopper --grace 20s -- sh -c "trap 'sleep 3; exit 0' TERM; touch '$tmp/cg-ready'; while :; do sleep 0.1; done")
for _ in $(seq 300); do [ -f "$tmp/cg-ready" ] && break; sleep 0.1; done
g cancel "$cg" > /dev/null
is "a job stopping after cancel is CG (COMPLETING)" "$(g queue -j "$cg" -h -o '%t %T')" "CG COMPLETING"
is "-t CG selects it" "$(g queue -t CG -h -o %i)" "$cg"
check "-t R leaves it out" eval "! g queue -t R -h -o %i | grep -qx $cg"
check "the default table shows CG" eval "g queue | grep -Eq '^ *$cg .* CG '"
wait_state "$cg" CANCELLED 30 > /dev/null
is "once stopped it is CA" "$(g queue -j "$cg" -h -o %t)" "CA"
is "-t CA,COMPLETED shows finished jobs" "$(g queue -t CA -j "$cg" -h -o %i)" "$cg"

# -N is the task count: gsched packs tasks on the fewest nodes (%D counts the nodes used)
pk=$(gsub -N 2 -G 4 -- sh -c "touch '$tmp/pk-ready'; $hold")
for _ in $(seq 300); do [ -f "$tmp/pk-ready" ] && break; sleep 0.1; done
is "-N 2 -G 4: two tasks packed on one 4-GPU node (%D %b)" "$(g queue -j "$pk" -h -o '%D %b')" "1 gpu:2"
g cancel "$pk" > /dev/null
wait_state "$pk" CANCELLED 30 > /dev/null

r1=$(gsub -J runner -t 90 -N 2 -G 8 -q prod -p qa -- sh -c "$hold")
wait_state "$r1" RUNNING 30 > /dev/null
p1=$(gsub -J waiter -G 4 -p qa -- sh -c "$hold")
p2=$(gsub -J other -G 4 -q test -- true)
me=$(g queue -j "$r1" -h -o %u)
check "queue -j ID -h -o %u: one line, no header (user '$me')" eval '[ -n "$me" ] && [ "$(g queue -j "$r1" -h -o %u | wc -l)" = 1 ]'
is "-o %i|%j|%u|%t|%T|%l|%D|%b|%P|%q|%Q" "$(g queue -j "$r1" -h -o '%i|%j|%u|%t|%T|%l|%D|%b|%P|%q|%Q')" \
  "$r1|runner|$me|R|RUNNING|1:30:00|2|gpu:4|qa|prod|100"
is "-o widths: %5i pads, %.5i right-aligns, %3j cuts" "$(g queue -j "$r1" -h -o '[%5i][%.5i][%3j]')" \
  "[$(printf '%-5s' "$r1")][$(printf '%5s' "$r1")][run]"
is "-o header names" "$(g queue -j "$r1" -o '%i %j %t %T %M %l %P %q' | head -1)" "JOBID NAME ST STATE TIME TIME_LIMIT PARTITION QOS"
check "-o %M is the time used (M:SS)" eval "g queue -j $r1 -h -o %M | grep -Eq '^[0-9]+:[0-5][0-9]\$'"
is "-o %R of a pending job is its reason" "$(g queue -j "$p1" -h -o '%t %R %l')" "PD (Resources) UNLIMITED"
is "-t PD" "$(g queue -t PD -h -o %i | tr '\n' ' ')" "$p1 $p2 "
is "-t RUNNING (long name)" "$(g queue -t RUNNING -h -o %i)" "$r1"
is "-t pd,r (any case)" "$(g queue -t pd,r -h -o %i | tr '\n' ' ')" "$r1 $p1 $p2 "
expect 2 "--states: unknown state 'SLEEPY'" -- "$bin" queue --server "$SERVER" -t SLEEPY
is "-p is the partition (VC)" "$(g queue -p qa -h -o %i | tr '\n' ' ')" "$r1 $p1 "
is "-q is the QOS (priority class)" "$(g queue -q test -h -o %i)" "$p2"
is "-n is the job name" "$(g queue -n waiter,other -h -o %j | tr '\n' ' ')" "waiter other "
is "-u is the user" "$(g queue -u "$me" -h -o %i | wc -l | tr -d ' ')" "3"
is "-u another user: nothing" "$(g queue -u nobody-else -h -o %i 2>/dev/null)" ""
is "--me" "$(g queue --me -h -o %i | wc -l | tr -d ' ')" "3"
it=$(timeout 20 "$bin" queue --server "$SERVER" -i 1 --iterations 2 -j "$r1" -o %i)
is "-i 1 --iterations 2: two listings" "$(printf '%s\n' "$it" | grep -c "^$r1\$")" "2"
check "-i prints the time before each listing" eval "printf '%s\n' \"\$it\" | head -1 | grep -Eq '[0-9]{2}:[0-9]{2}:[0-9]{2}'"
expect 2 "--format: .*unknown field '%Z'" -- "$bin" queue --server "$SERVER" -o '%i %Z'

# ---- cancel: scancel's -u, --state, --name, -p; a selector is required --------------------------
expect 2 "cancel needs at least one job id or a selector" -- "$bin" cancel --server "$SERVER"
expect 2 "--state and --qos only narrow a selection" -- "$bin" cancel --server "$SERVER" --state PD
expect 2 "only pending or running jobs" -- "$bin" cancel --server "$SERVER" -u "$me" --state CD
expect 0 "no pending or running job matched" -- "$bin" cancel --server "$SERVER" --name no-such-job
w2=$(gsub -J waiter2 -G 4 -p qa -- sh -c "$hold")
out=$(g cancel --name waiter 2>&1)
check "cancel --name cancels that name only ($out)" [ "$out" = "Cancelled job $p1" ]
is "  the job is CANCELLED" "$(state "$p1")" "CANCELLED"
is "  the others keep running / waiting" "$(state "$r1")/$(state "$w2")" "RUNNING/PENDING"
out=$(g cancel -u "$me" --state PD 2>&1)
is "cancel -u USER --state PD cancels only pending jobs" "$out" "$(printf 'Cancelled job %s\nCancelled job %s' "$p2" "$w2")"
is "  the running job stays" "$(state "$r1")" "RUNNING"
out=$(g cancel -p qa 2>&1)
check "cancel -p VC ($out)" contains "$out" "Cancelling job $r1:"
wait_state "$r1" CANCELLED 30 > /dev/null && ok "  the running job of that VC is cancelled" || bad "  the running job of that VC is cancelled"
touch "$tmp/go"
wait_idle 60 || bad "idle at the end"

# ---- options real scripts carry: accepted with one warning line each, never silently ----------
for o in "-A proj" "--account=proj" "--mail-type=END" "--mail-user=me@example.org" \
         "--exclusive" "--ntasks-per-node=1"; do
  # shellcheck disable=SC2086
  out=$("$bin" submit --server "$SERVER" --parsable $o -- true 2> "$tmp/warn"); rc=$?
  check "submit $o is accepted (exit $rc, job $out)" [ "$rc" = 0 ] && [ -n "$out" ]
  check "  with one warning line on stderr: $(cat "$tmp/warn")" \
    eval '[ "$(wc -l < "$tmp/warn")" = 1 ] && grep -q "^gsched: warning: " "$tmp/warn"'
done
expect 0 "warning: --account 'proj' ignored: gsched has no accounts" -- "$bin" submit --server "$SERVER" -A proj -- true
expect 0 "warning: --mail-type 'END' ignored: gsched sends no mail" -- "$bin" submit --server "$SERVER" --mail-type END -- true
expect 0 "warning: --exclusive: gsched never shares a GPU between jobs, but reserves no whole node" -- "$bin" submit --server "$SERVER" --exclusive -- true
expect 2 "--ntasks-per-node 2: a gsched task is one process .* -n" -- "$bin" submit --server "$SERVER" --ntasks-per-node 2 -- true
cat > "$tmp/acct.sh" << 'EOF2'
#!/bin/sh
#SBATCH -A proj
#SBATCH --mail-type=ALL --mail-user=me
#SBATCH -J acct
echo ran
EOF2
out=$("$bin" submit --server "$SERVER" --parsable "$tmp/acct.sh" 2> "$tmp/warn"); rc=$?
check "#SBATCH -A proj no longer rejects the script (exit $rc)" [ "$rc" = 0 ]
check "  the warning names script:line ($(head -1 "$tmp/warn"))" grep -q "acct.sh:2: warning: --account 'proj' ignored" "$tmp/warn"
is "  three warnings (-A, --mail-type, --mail-user)" "$(grep -c warning: "$tmp/warn")" 3
is "  the other lines still apply" "$(field "$out" Name)" "acct"

# ---- one QOS list everywhere ----------------------------------------------------------------------
qlist="gsched's are prod \(100\), test \(10\), normal \(0\), oppo \(-1\), or an integer priority"
expect 2 "--qos: 'high' is not a QOS: $qlist" -- "$bin" submit --server "$SERVER" -q high -- true
expect 2 "--priority: 'high' is not a QOS: $qlist" -- "$bin" submit --server "$SERVER" --priority high -- true
expect 2 "--qos: 'high' is not a QOS: $qlist" -- "$bin" queue --server "$SERVER" -q high
expect 2 "--qos: 'high' is not a QOS: $qlist" -- "$bin" cancel --server "$SERVER" -u "$me" -q high

# ---- --wrap without -J: the name is "wrap" (sbatch's) ---------------------------------------------
id=$(gsub --wrap "echo wrapped")
is "--wrap without -J is named wrap" "$(field "$id" Name)" "wrap"
id=$(gsub -J mine --wrap "echo wrapped")
is "--wrap with -J keeps it" "$(field "$id" Name)" "mine"
wait_state "$id" DONE 30 > /dev/null || bad "job $id did not end"

# ---- squeue -l / --long; --start refused ---------------------------------------------------------
out=$(g queue -l -a -j "$id")
is "queue -l: the time, then squeue's long header" "$(printf '%s\n' "$out" | sed -n 2p | tr -s ' ')" \
  " JOBID PARTITION NAME USER STATE TIME TIME_LIMI NODES NODELIST(REASON)"
check "  then the job ($(printf '%s\n' "$out" | sed -n 3p))" eval "printf '%s\n' \"\$out\" | sed -n 3p | grep -Eq '^ +$id +default +mine +$me +COMPLETE +0:0[0-9] +UNLIMITED +1 \(all tasks exited with code 0\)\$'"
check "  the first line is the time" eval "printf '%s\n' \"\$out\" | head -1 | grep -Eq '[0-9]{2}:[0-9]{2}:[0-9]{2}'"
is "queue --long is the same" "$(g queue --long -a -j "$id" | tail -n +2)" "$(printf '%s\n' "$out" | tail -n +2)"
expect 2 "--start: gsched does not predict start times" -- "$bin" queue --server "$SERVER" --start

# ---- logs of a job of several tasks: every task, prefixed ---------------------------------------
id=$(gsub -n 2 -- sh -c 'echo "hello from $GSCHED_TASK_INDEX"')
out=$(done_log "$id")
check "logs of a 2-task job shows task 0 ($out)" contains "$out" "[task 0] hello from 0"
check "  and task 1" contains "$out" "[task 1] hello from 1"
out=$(g logs "$id" --task 1)
check "logs --task 1: that task alone, unprefixed" eval '[[ $out == *"hello from 1"* && $out != *"[task"* && $out != *"hello from 0"* ]]'

# ---- describe: events in time order (an event recorded late, written here into the database) -----
if python3 -c 'import sqlite3' 2> /dev/null; then
  python3 - "$DDIR/gsched.db" "$id" << 'EOF2'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=30)
t = db.execute("SELECT min(t_us) FROM events WHERE job_id = ?", (int(sys.argv[2]),)).fetchone()[0]
db.execute("INSERT INTO events(job_id, t_us, type, reason) VALUES (?, ?, 'recorded-late', 'x')",
           (int(sys.argv[2]), t - 2000000))
db.commit()
EOF2
  types=$(g describe job "$id" | sed -n '/^Events:/,/^$/p' | awk 'NR > 2 && NF { print $2 }' | tr '\n' ' ')
  is "describe lists events in time order" "$types" "recorded-late submitted started task-exited task-exited finished "
else
  echo "# skipped the event order check: no python3 sqlite3 module"
fi

# ---- cancel -u another user without an admin token: the message names cancel (was "queue") ------
d_stop || bad "daemon stop"
B=bob.bob-secret-0123456789abcdef
"$bin" token hash --user bob --token "$B" --iterations 1000 > "$tmp/tokens" 2> /dev/null
chmod 600 "$tmp/tokens"
d_start tok --cluster 1x1 --listen 127.0.0.1:0 --tokens "$tmp/tokens" || { bad "daemon start"; finish; }
expect 1 "^gsched: cancel: -u alice: you may select only your own jobs" -- "$bin" cancel --server "$SERVER" --token "$B" -u alice
expect 1 "^gsched: queue: -u alice: you may select only your own jobs" -- "$bin" queue --server "$SERVER" --token "$B" -u alice
expect 0 "no pending or running job matched" -- "$bin" cancel --server "$SERVER" --token "$B" -u bob

finish
