#!/usr/bin/env bash
# The live-scheduler CLI against a real daemon: documented exit codes (0 ok, 1 runtime,
# 2 usage/input, 3 unreachable, 4 not found), file:line:col errors before anything is
# sent, --parsable, --json, squeue-like columns, describe, logs, nodes, vcs, token hash.
# usage: daemon_cli.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"


# nothing listens on this port: unreachable is exit 3, for every client command
port=$(( (RANDOM % 20000) + 30000 ))
expect 3 "cannot reach the gsched daemon" -- "$bin" queue --server "http://127.0.0.1:$port"
expect 3 "cannot reach" -- "$bin" submit --server "127.0.0.1:$port" -- true
expect 3 "cannot reach" -- env GSCHED_SERVER="http://127.0.0.1:$port" "$bin" nodes

# input errors are caught locally (exit 2, file:line:col), no daemon needed
printf 'name: x\ncommand: true\ntasks: 0\n' > "$tmp/bad.yaml"
expect 2 'bad.yaml:3:8: .tasks. must be between 1' -- "$bin" submit "$tmp/bad.yaml" --server "http://127.0.0.1:$port"
printf 'command: true\ngpu: 2\n' > "$tmp/typo.yaml"
expect 2 "typo.yaml:2:1: unknown field 'gpu' in job spec \(did you mean 'gpus'\?\)" -- "$bin" submit "$tmp/typo.yaml"
expect 2 'cannot open' -- "$bin" submit "$tmp/none.yaml"
expect 2 'submit needs a job spec' -- "$bin" submit
expect 2 'put a command after --' -- "$bin" submit sleep 1
expect 2 "--priority: 'urgent'" -- "$bin" submit --priority urgent -- true
expect 2 "not a time limit" -- "$bin" submit --time forever -- true
expect 2 "set by the executor" -- "$bin" submit --env CUDA_VISIBLE_DEVICES=0 -- true
expect 2 "'abc' is not a job id" -- "$bin" cancel abc
expect 2 "expected 'job' or 'node'" -- "$bin" describe queue 1
expect 2 "expected --user|needs --user" -- "$bin" token hash
expect 0 "usage: gsched serve" -- "$bin" serve --help
# the documented example specs are valid (parsed locally, then the daemon is unreachable: 3)
for f in "$src"/docs/examples/*.yaml; do
  expect 3 "cannot reach" -- "$bin" submit "$f" --server "http://127.0.0.1:$port"
done

# --gpu-type takes its value (it was read as the FILE: "V100: cannot open")
expect 3 "cannot reach" -- "$bin" submit --gpu-type V100 --server "http://127.0.0.1:$port" -- true

d_start cli --cluster 2x2 --grace 1s || { bad "daemon start"; finish; }

# submit forms
# jobs 1 and 2 hold every GPU until the listings below are checked
hold="while [ ! -f '$tmp/go' ]; do sleep 0.05; done"
id1=$(gsub --name first -g 2 -- sh -c "echo \"out on \$GSCHED_NODE gpus=\$CUDA_VISIBLE_DEVICES\"; echo err >&2; $hold")
check "--parsable prints only the id" [ "$id1" = 1 ]
printf 'name: second\ntasks: 2x1\ncommand: ["sh", "-c", "%s"]\nenv: {A: "1"}\n' "$hold" > "$tmp/job.yaml"
out=$("$bin" submit "$tmp/job.yaml" --server "$SERVER")
check "submit FILE says which job" [ "$out" = "Submitted job 2" ]
printf '{"name": "third", "gpus": 1, "command": "sleep 3", "vc": "research"}' > "$tmp/job.json"
id3=$("$bin" submit --parsable "$tmp/job.json" --server "$SERVER")
id4=$(gsub --vc research --name fourth -g 2 -- sleep 1)
expect 0 '"id": 5' -- "$bin" submit --json --server "$SERVER" -- true

# queue: squeue-like columns, two-letter states, position of pending jobs
q=$(g queue)
echo "$q" | sed 's/^/  /'
check "queue header" sh -c "echo '$q' | head -1 | grep -Eq '^ *ID +VC +NAME +USER +ST +GPUS +AGE +REASON +POS$'"
check "running job shows where it runs" sh -c "echo '$q' | grep -Eq '^ *1 +default +first .* R +2 .*n0:0-1'"
check "pending job shows reason and position" sh -c "echo '$q' | grep -Eq '^ *$id4 +research +fourth .* PD +2 .* Resources +2\$'"
expect 0 '"jobs": \[' -- "$bin" queue --json --server "$SERVER"
expect 0 '^$' -- sh -c "'$bin' queue --no-headers --state CD --server '$SERVER'"
expect 2 "--states: unknown state 'SLEEPY'" -- "$bin" queue --state SLEEPY --server "$SERVER"

# describe, nodes, vcs
expect 0 "Why it waits:" -- "$bin" describe job "$id4" --server "$SERVER"
expect 4 "no job 999" -- "$bin" describe job 999 --server "$SERVER"
expect 4 "no node 'n9'" -- "$bin" describe node n9 --server "$SERVER"
expect 0 "LOCAL +INDEX +TYPE +STATE +JOB" -- "$bin" describe node n0 --server "$SERVER"
expect 0 "^NODE +STATE +GPUS +ALLOC +FREE +DOWN +TYPE +JOBS" -- "$bin" nodes --server "$SERVER"
expect 0 "research +- +0 +0 +2 +3" -- "$bin" vcs --server "$SERVER"
touch "$tmp/go"

# logs: stdout and stderr of a task, a missing task is an input error
wait_state 1 DONE 20 || true
expect 0 "out on n0 gpus=0,1" -- "$bin" logs 1 --server "$SERVER"
expect 0 "^err$" -- "$bin" logs 1 --server "$SERVER"
expect 2 "task" -- "$bin" logs 1 --task 3 --server "$SERVER"
expect 4 "no job 999" -- "$bin" logs 999 --server "$SERVER"
expect 0 "=== gsched: task exited with code 0 ===" -- "$bin" logs 2 --task 1 --follow --server "$SERVER"

# cancel: not found is 4, already finished is 1
expect 4 "no job 999" -- "$bin" cancel 999 --server "$SERVER"
expect 1 "already DONE" -- "$bin" cancel 1 --server "$SERVER"
wait_state "$id3" RUNNING 20 || true
expect 0 "Cancelling job $id3: 1 running part" -- "$bin" cancel "$id3" --server "$SERVER"
wait_state "$id3" CANCELLED 20 && ok "cancelled running job ends" || bad "cancelled running job ends"

# dry run: exit 0 when it could run, 2 when it never can
expect 0 "would (start now|wait)" -- "$bin" submit --dry-run --gpus 1 --server "$SERVER" -- true
# the README's example spec is valid and fits the README's kind of cluster
expect 0 "would (start now|wait)" -- "$bin" submit "$src"/docs/examples/hello.yaml --dry-run --server "$SERVER"
expect 0 "^[0-9]+ job\(s\) ahead of it in the queue \(by submission\); policy fifo$" -- "$bin" submit --dry-run --gpus 1 --server "$SERVER" -- true
expect 2 "can never run here: needs 9 GPUs" -- "$bin" submit --dry-run --gpus 9 --server "$SERVER" -- true
expect 2 "rejected: needs 8 GPUs but the cluster has 4" -- "$bin" submit --tasks 2 -g 4 --server "$SERVER" -- true

# node bad|good (the socket's user, root, is an admin): shown by nodes and describe node
expect 0 "^Node n0 marked bad$" -- "$bin" node bad n0 --reason "ECC errors" --server "$SERVER"
expect 0 "^Node n0 already bad$" -- "$bin" node bad n0 --server "$SERVER"
expect 0 "^n0 +bad .*ECC errors \(by " -- "$bin" nodes --server "$SERVER"
expect 0 "^Bad: +since .*: ECC errors" -- "$bin" describe node n0 --server "$SERVER"
expect 4 "no node 'n7'" -- "$bin" node bad n7 --server "$SERVER"
expect 2 "usage: gsched node drain\|resume\|down\|bad\|good NAME" -- "$bin" node sideways n0 --server "$SERVER"
expect 0 "^Node n0 marked good$" -- "$bin" node good n0 --server "$SERVER"
expect 0 "^n0 +(idle|mixed|allocated) " -- "$bin" nodes --server "$SERVER"
check "node marks logged" grep -q "node n0 marked bad by .*: ECC errors" "$DDIR/daemon.log"

# token hash: a valid tokens-file line; the token is printed on stderr
line=$("$bin" token hash --user carol --iterations 1000 2> "$tmp/tok.err")
check "token line format" sh -c "echo '$line' | grep -Eq '^carol:user:pbkdf2-sha256:1000:[0-9a-f]{32}:[0-9a-f]{64}$'"
check "generated token on stderr" grep -Eq '^token: carol\.[A-Za-z0-9_-]{43}$' "$tmp/tok.err"
expect 2 "must look like 'carol.SECRET'" -- "$bin" token hash --user carol --token nope

wait_idle 30 || bad "jobs still active"
d_stop && ok "graceful stop" || bad "graceful stop"
check "shutdown logged" grep -q "shutting down" "$DDIR/daemon.log"
finish
