#!/usr/bin/env bash
# Issue 11 items 6 and 11: every job inherited the daemon's whole environment, so a secret the
# operator had in it (OPERATOR_SECRET here) was printed by any job running `env`.  A job's
# environment now holds only gsched's variables, the spec's env, a fixed PATH (and the user's
# HOME... when the user is a local one) and the names the operator allow-lists with
# `serve --pass-env NAME[,NAME...]`; a name not set in the daemon is not passed.
# usage: env_leak.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

export OPERATOR_SECRET=s3cret FOO=bar
unset NOT_SET_ANYWHERE

# envof NAME ARGS...: the `env` output of one job (spec env JOBVAR=spec) on the current daemon
envof() {
  local id
  id=$(gsub --gpus 1 --env JOBVAR=spec "$@" -- env) || { echo "submit failed"; return 1; }
  wait_state "$id" DONE 30 || return 1
  g logs "$id" > "$tmp/env.$id" 2>&1
  cat "$tmp/env.$id"
}
# line OUT REGEX: OUT has a line matching the anchored REGEX
line() { printf '%s\n' "$1" | grep -Eq -- "^($2)\$"; }
noline() { ! line "$@"; }

# 1. no allow-list: nothing of the daemon's environment
d_start plain --cluster 1x1 || exit 1
out=$(envof)
check "plain: the job ran env" line "$out" "GSCHED_JOB_ID=[0-9]+"
check "plain: OPERATOR_SECRET is not passed" noline "$out" "OPERATOR_SECRET=.*"
check "plain: s3cret appears nowhere" eval '! printf "%s" "$out" | grep -q s3cret'
check "plain: FOO is not passed without --pass-env" noline "$out" "FOO=.*"
check "plain: fixed PATH" line "$out" "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
check "plain: CUDA_VISIBLE_DEVICES" line "$out" "CUDA_VISIBLE_DEVICES=.*"
check "plain: the spec's env" line "$out" "JOBVAR=spec"
d_stop

# 2. --pass-env FOO (and names not set, lists, repeats)
d_start allow --cluster 1x1 --pass-env FOO,NOT_SET_ANYWHERE --pass-env PATH || exit 1
out=$(envof)
check "allow: FOO=bar passed" line "$out" "FOO=bar"
check "allow: OPERATOR_SECRET still not passed" noline "$out" "OPERATOR_SECRET=.*"
check "allow: a name not set is not passed" noline "$out" "NOT_SET_ANYWHERE=.*"
check "allow: the daemon's PATH when allow-listed" line "$out" "PATH=$(printf '%s' "$PATH" | sed 's/[][\.*^$+?(){}|/]/\\&/g')"
check "allow: GSCHED_JOB_ID" line "$out" "GSCHED_JOB_ID=[0-9]+"
check "allow: CUDA_VISIBLE_DEVICES" line "$out" "CUDA_VISIBLE_DEVICES=.*"
check "allow: the spec's env" line "$out" "JOBVAR=spec"
out=$(envof --env FOO=fromspec)
check "allow: the spec overrides an allow-listed name" line "$out" "FOO=fromspec"
check "allow: ... once" test "$(printf '%s\n' "$out" | grep -c '^FOO=')" = 1
d_stop

# 3. a bad allow-list is a configuration error (exit 2) before anything listens
for arg in GSCHED_JOB_ID CUDA_VISIBLE_DEVICES "FOO,,BAR" "1X" "A=B" ""; do
  "$bin" serve --cluster 1x1 --db "$tmp/bad.db" --socket "$tmp/bad.sock" --pass-env "$arg" \
    > "$tmp/bad.out" 2>&1 &
  p=$!
  rc=""
  for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$p" 2>/dev/null; then kill -KILL "$p"; wait "$p" 2>/dev/null; rc=running; else wait "$p"; rc=$?; fi
  check "--pass-env '$arg' refused (exit 2, got $rc)" test "$rc" = 2
done

finish
