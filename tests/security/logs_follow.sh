#!/usr/bin/env bash
# Issue 11 item 10: `gsched logs ID --follow` waited forever for a log that can never come (a
# missing job, another user's job, a rejected job, a job cancelled while pending).  It must
# exit 4 ("not found") at once with the error; and a follow ends when the job ends.  Every CLI
# call runs under `timeout`, so a hang fails the test instead of the suite.
# usage: logs_follow.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

A=alice.alice-secret-0123456789
B=bob.bob-secret-0123456789abc
tok=$tmp/tokens
{ "$bin" token hash --user alice --token "$A" --iterations 1000
  "$bin" token hash --user bob --token "$B" --iterations 1000; } > "$tok" 2>/dev/null
chmod 600 "$tok"
d_start follow --cluster 1x1 --tokens "$tok" --listen 127.0.0.1:0 || exit 1
# as TOKEN CMD ARGS...: the CLI as that user (connection options first: ARGS may hold "--")
as() { local t=$1 c=$2; shift 2; "$bin" "$c" --server "$SERVER" --token "$t" "$@"; }

# follow CODE PATTERN TOKEN ID: `logs ID --follow` exits CODE within 15 s, output matching PATTERN
follow() {
  local code=$1 pat=$2 t=$3 id=$4 out rc
  out=$(timeout 15 "$bin" logs "$id" --follow --server "$SERVER" --token "$t" 2>&1); rc=$?
  if [ "$rc" -eq "$code" ] && printf '%s\n' "$out" | grep -Eq -- "$pat"; then
    ok "logs $id --follow: exit $code /$pat/"
  else
    bad "logs $id --follow: expected exit $code and /$pat/, got exit $rc$([ $rc = 124 ] && echo ' (hung)'): $out"
  fi
}

follow 4 "not found|no job" "$A" 999

# another user's job: as hidden as a missing one
run=$(as "$A" submit --parsable --gpus 1 -- sleep 30)
follow 4 "not found|no job" "$B" "$run"

# rejected: needs more GPUs than the cluster has
as "$A" submit --gpus 9 -- true > /dev/null 2>&1
rej=$(as "$A" queue --all --no-headers | awk '$5 == "RJ" { print $1; exit }')
check "a rejected job exists" test -n "$rej"
follow 4 "REJECTED" "$A" "${rej:-0}"

# cancelled while pending (the only GPU is busy)
pend=$(as "$A" submit --parsable --gpus 1 -- true)
as "$A" cancel "$pend" > /dev/null 2>&1
for _ in $(seq 100); do
  as "$A" queue --all --no-headers | awk -v i="$pend" '$1 == i && $5 == "CA" { f = 1 } END { exit !f }' && break
  sleep 0.1
done
follow 4 "CANCELLED" "$A" "$pend"
as "$A" cancel "$run" > /dev/null 2>&1

# a job that ends while followed: the follow prints its output and ends (exit 0)
end=$(as "$A" submit --parsable --gpus 1 -- sh -c 'echo first; sleep 2; echo last')
follow 0 "last" "$A" "$end"
check "graceful stop" d_stop
finish
