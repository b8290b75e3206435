#!/usr/bin/env bash
# Scenario-format tests (docs/scenarios.md): tests/scenario-format/*.yaml must
# pass; each tests/scenario-format/fail/*.yaml must fail with the exit status
# of its '# exit: N' comment and print every '# line: TEXT' line verbatim
# (run from its directory, so file names in messages are bare); plus
# malformed uses of the new keys, reported as file:line:col (exit 2).
# usage: scenario_format.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
abs=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
"$abs" scenario "$src"/tests/scenario-format/*.yaml > "$tmp/pass.txt" 2>&1 || {
  echo "not ok - scenario-format scenarios"; cat "$tmp/pass.txt"; exit 1; }
echo "ok - tests/scenario-format/*.yaml pass ($(tail -1 "$tmp/pass.txt"))"
for f in "$src"/tests/scenario-format/fail/*.yaml; do
  b=$(basename "$f")
  want=$(sed -n 's/^# exit: //p' "$f")
  out=$(cd "$(dirname "$f")" && "$abs" scenario "$b" 2>&1); rc=$?
  ok=1
  [ "$rc" = "$want" ] || { echo "  $b: exit $rc, expected $want"; ok=0; }
  while IFS= read -r line; do
    printf '%s\n' "$out" | grep -qxF -- "$line" || { echo "  $b: missing line: $line"; ok=0; }
  done < <(sed -n 's/^# line: //p' "$f")
  n=$(grep -c '^# line: ' "$f")
  [ "$n" -gt 0 ] || { echo "  $b: no '# line:' expectations"; ok=0; }
  if [ $ok = 1 ]; then echo "ok - fail/$b fails as expected ($n lines)"; else
    echo "not ok - fail/$b"; printf '%s\n' "$out" | sed 's/^/    /'; fails=1; fi
done
# malformed uses of the new keys: exit 2 with the position
bad() { # NAME EXPECTED-SUBSTRING YAML
  printf '%s' "$3" > "$tmp/$1.yaml"
  out=$("$abs" scenario "$tmp/$1.yaml" 2>&1); rc=$?
  if [ $rc -ne 2 ] || ! printf '%s' "$out" | grep -qF -- "$2"; then
    echo "not ok - malformed $1: exit $rc: $out"; fails=1
  else echo "ok - malformed $1 reported: $2"; fi
}
head='name: x
cluster: 2x4
policy: fifo
jobs:
  - {id: 1, duration: 10, gpus: 1}
'
bad cancel-unknown "cancel-unknown.yaml:7:23: cancel: no job with id 9" "${head}events:
  - {time: 5, cancel: 9}
expect: []
"
bad event-two-kinds "event-two-kinds.yaml:7:6: an event is one of" "${head}events:
  - {time: 5, cancel: 1, node: n0, state: down}
expect: []
"
bad event-state "event-state.yaml:7:6: an event needs a known 'node' and state down|up|bad|good|drain|resume" "${head}events:
  - {time: 5, node: n0, state: sick}
expect: []
"
bad at-alone "at-alone.yaml:7:18: 'at' needs a placement key" "${head}expect:
  - {job: 1, at: 5, state: DONE}
"
bad time-job-state "time-job-state.yaml:7:23: unknown field 'state' in a placement-at-a-time expectation" "${head}expect:
  - {time: 5, job: 1, state: DONE}
"
bad chain-unknown "chain-unknown.yaml:7:21: 'chain': unknown cell type 'K80'" "${head}expect:
  - {job: 1, chain: K80}
"
bad task-node "task-node.yaml:7:29: unknown node 'n9'" "${head}expect:
  - {job: 1, tasks: [{node: n9, gpus: [0]}]}
"
bad not-with "not-with.yaml:7:25: no job with id 4" "${head}expect:
  - {job: 1, not_with: [4]}
"
bad inspect-list "inspect-list.yaml:7:25: 'inspect' must be a mapping" "${head}expect:
  - {time: 5, inspect: [a]}
"
bad expect-both "expect-both.yaml:7:6: a scenario with 'expect_error' has no other expectations" "${head}expect:
  - {job: 1, state: DONE}
expect_error: x
"
# a reconfiguration the policy refuses: its reason, at the event's value
bad reconf-refused "reconf-refused.yaml:6:28: reconfigure: the new cluster is refused: policy 'hived' needs a HiveD cluster config" "name: x
cluster: $src/tests/scenarios/clusters/hived-config-3.yaml
policy: hived
jobs: []
events:
  - {time: 5, reconfigure: 2x8}
expect: []
"
exit $fails
