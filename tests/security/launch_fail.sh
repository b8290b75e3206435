#!/usr/bin/env bash
# Issue 11, What to build 4: "a job whose launch failed is FAILED with the reason after a bounded
# number of attempts, never requeued forever".  A launch fails when the executor itself cannot
# start the command (workdir gone between submit and start, a command that cannot be executed):
# it is retried up to `serve --launch-attempts N` launches, then FAILED with the reason in
# `gsched describe job` and the API.  A command's own exit code 126/127 is no launch failure:
# that job fails at once, like any other exit code.  The queue is not blocked meanwhile.
# usage: launch_fail.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

count() { local n=0 e; for e in $1; do [ "$e" = "$2" ] && n=$((n+1)); done; echo "$n"; }
api() { dcurl -s "$URL/v1/jobs/$1"; }

d_start lf --cluster 1x2 --launch-attempts 3 --grace 2s || exit 1

# 1. workdir removed between submit (checked: it existed) and launch
mkdir -p "$tmp/wd"
blk=$(gsub -g 2 --name blocker -- sleep 300)
wd=$(gsub -g 1 --name wd-gone -D "$tmp/wd" -- true)
check "the job waits behind the blocker" wait_state "$wd" PENDING 10
rm -rf "$tmp/wd"
g cancel "$blk" > /dev/null
check "workdir gone at launch: FAILED after the attempts" wait_state "$wd" FAILED 30
ev=$(events "$wd")
check "three launch attempts, each one logged (got: $ev)" [ "$(count "$ev" launch-failed)" -eq 3 ]
check "requeued twice between them" [ "$(count "$ev" requeued)" -eq 2 ]
r=$(field "$wd" Reason)
check "describe job gives the reason ($r)" contains "$r" "launch failed 3 times"
check "... naming the workdir" contains "$r" "workdir"
check "the API gives the reason" contains "$(api "$wd")" "launch failed 3 times"
check "no more launches after the last attempt" [ "$(count "$(events "$wd")" launch-failed)" -eq 3 ]

# 2. a command that cannot be executed (argv form: the shim's exec fails)
nx=$(gsub -g 1 --name noexec -- /no/such/program --flag)
check "command not executable: FAILED after the attempts" wait_state "$nx" FAILED 30
r=$(field "$nx" Reason)
check "the reason names the command ($r)" contains "$r" "cannot run '/no/such/program'"
check "... and the attempts" contains "$r" "launch failed 3 times"
check "exit code 127" [ "$(api "$nx" | grep -o '"exit_code": *[0-9]*' | head -1 | grep -o '[0-9]*$')" = 127 ]

# 3. the job's own exit 127 / 126 is its own failure: FAILED at once, one run, no retry
own=$(gsub -g 1 --name own127 -- sh -c 'exit 127')
check "the command's own 127 fails the job" wait_state "$own" FAILED 20
ev=$(events "$own")
check "no launch failure for the command's own 127 (got: $ev)" [ "$(count "$ev" launch-failed)" -eq 0 ]
check "... and no requeue" [ "$(count "$ev" requeued)" -eq 0 ]
own6=$(gsub -g 1 --name own126 -- sh -c 'exit 126')
check "the command's own 126 fails the job" wait_state "$own6" FAILED 20
check "no launch failure for the command's own 126" [ "$(count "$(events "$own6")" launch-failed)" -eq 0 ]

# 4. the queue went on: a job submitted after all this runs
ok=$(gsub -g 2 --name after -- true)
check "a later job runs (the queue is not blocked)" wait_state "$ok" DONE 20
check "SIGTERM stops cleanly" d_stop

# 5. --launch-attempts 1: the first failure is final; the option is validated
d_start one --cluster 1x1 --launch-attempts 1 || exit 1
nx=$(gsub --name noexec1 -- /no/such/program)
check "--launch-attempts 1: FAILED at the first failure" wait_state "$nx" FAILED 20
check "one launch only" [ "$(count "$(events "$nx")" launch-failed)" -eq 1 ]
check "SIGTERM stops cleanly" d_stop
"$bin" serve --launch-attempts 0 --cluster 1x1 --db "$tmp/z.db" > /dev/null 2>&1
check "--launch-attempts 0 is refused (exit 2)" [ $? -eq 2 ]
finish
