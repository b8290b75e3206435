#!/usr/bin/env bash
# Scenario tests: the OpenPAI lab experiments and HiveD's feature demos
# (tests/scenarios/*.yaml), run by `gsched scenario`; plus malformed scenarios.
# usage: scenarios.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
"$bin" scenario "$src"/tests/scenarios/*.yaml || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'name: x\ncluster: 4\npolicy: fifo\njobs:\n  - {id: 1, duration: 10, gpus: 1, colour: red}\nexpect: []\n' > "$tmp/bad.yaml"
out=$("$bin" scenario "$tmp/bad.yaml" 2>&1); rc=$?
if [ $rc -ne 2 ] || ! printf '%s' "$out" | grep -q "bad.yaml:5:.*unknown field 'colour' in a job"; then
  echo "not ok - malformed scenario: exit $rc: $out"; exit 1
fi
echo "ok - malformed scenario reported with its position"
printf 'name: x\ncluster: 4\npolicy: fifo\njobs:\n  - {id: 1, duration: 10, gpus: 1}\nexpect:\n  - {job: 1, start: 5}\n' > "$tmp/fail.yaml"
"$bin" scenario "$tmp/fail.yaml" > "$tmp/out.txt"; rc=$?
if [ $rc -ne 1 ] || ! grep -q "not ok - x (line 7): job 1 starts at 5 (got 0)" "$tmp/out.txt"; then
  echo "not ok - failing expectation not reported"; cat "$tmp/out.txt"; exit 1
fi
echo "ok - a failing expectation fails the run"
# the worked example of docs/scenarios.md
"$bin" scenario "$src"/docs/examples/scenarios/hived-example.yaml > "$tmp/doc.txt" || { echo "not ok - docs example"; cat "$tmp/doc.txt"; exit 1; }
grep -q "^20 passed, 0 failed" "$tmp/doc.txt" || { echo "not ok - docs example count"; cat "$tmp/doc.txt"; exit 1; }
echo "ok - the worked example of docs/scenarios.md passes"
# a relative cluster file is found next to the scenario, whatever its name and the cwd
mkdir -p "$tmp/s/clusters"
cp "$src"/data/examples/hived-basic.yaml "$tmp/s/clusters/max-x.yaml"
printf 'name: rel\ncluster: clusters/max-x.yaml\npolicy: hived\njobs:\n  - {id: 1, duration: 10, vc: VC1, gpus: 1}\nexpect:\n  - {job: 1, start: 0}\n' > "$tmp/s/rel.yaml"
abs=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
(cd / && "$abs" scenario "$tmp/s/rel.yaml") > "$tmp/rel.txt" 2>&1 || { echo "not ok - relative cluster file"; cat "$tmp/rel.txt"; exit 1; }
echo "ok - relative cluster file resolved next to the scenario"
