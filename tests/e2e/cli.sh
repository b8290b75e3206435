#!/usr/bin/env bash
# CLI contract and bad inputs: exit codes and messages of `gsched sim`.
# usage: cli.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
day=$src/data/philly-1day/philly_20171002_tiresias.csv
spec=$src/data/philly-1day/n32g8_2sw.csv

# expect CODE PATTERN -- command...: exit code and a stderr line matching PATTERN
expect() {
  local code=$1 pat=$2; shift 3
  local out rc
  out=$("$@" 2>&1 >/dev/null); rc=$?
  if [ "$rc" -eq "$code" ] && printf '%s\n' "$out" | grep -Eq -- "$pat"; then
    pass=$((pass+1)); echo "ok - exit $code: $pat"
  else
    fail=$((fail+1)); echo "not ok - expected exit $code and /$pat/, got exit $rc: $out"
  fi
}

expect 2 'sim needs --cluster' -- "$bin" sim
expect 2 'unknown command' -- "$bin" frobnicate
expect 2 'cannot open: No such file' -- "$bin" sim --cluster 4 --trace "$tmp/nope.csv" --policy fifo
printf 'a,b,c\n1,2,3\n' > "$tmp/hdr.csv"
expect 2 'hdr.csv:1:1: unknown trace header' -- "$bin" sim --cluster 4 --trace "$tmp/hdr.csv" --policy fifo
printf 'submit,duration,gpus\n0,10,1\n5,10,0\n' > "$tmp/zero.csv"
expect 2 'zero.csv:3:6: gpus must be between 1' -- "$bin" sim --cluster 4 --trace "$tmp/zero.csv" --policy fifo
printf 'submit,duration,gpus\n0,10,-3\n' > "$tmp/neg.csv"
expect 2 'neg.csv:2:6: gpus must be between 1' -- "$bin" sim --cluster 4 --trace "$tmp/neg.csv" --policy fifo
printf 'physicalCluster:\n  cellTypes:\n    N: {childCellType: G, childCellNumber: 2\n  physicalCells: []\n' > "$tmp/bad.yaml"
expect 2 'bad.yaml:[0-9]+:[0-9]+: invalid YAML' -- "$bin" sim --cluster "$tmp/bad.yaml" --trace "$day" --policy fifo
expect 2 "unknown policy 'fifoo'" -- "$bin" sim --cluster "$spec" --trace "$day" --policy fifoo
expect 2 "parameter 'queus' is not used" -- "$bin" sim --cluster "$spec" --trace "$day" --policy fifo --set queus=1
expect 2 "'relax': 'maybe' is not on/off" -- "$bin" sim --cluster "$spec" --trace "$day" --policy yarn-cs --set relax=maybe
expect 2 'placement: expected count or consolidate' -- "$bin" sim --cluster 4 --trace "$day" --policy fifo --placement spread
expect 2 "cluster shorthand '4x0': dimensions" -- "$bin" sim --cluster 4x0 --trace "$day" --policy fifo
expect 2 "cannot open cluster spec" -- "$bin" sim --cluster "$tmp/none.yaml" --trace "$day" --policy fifo
# several GPU types, Gavel's files (docs/cluster-format.md, trace-format.md)
expect 2 "cluster shorthand '4x8:V100:X': a second ':' after GPU type 'V100'" -- "$bin" sim --cluster 4x8:V100:X --trace "$day" --policy fifo
expect 2 "choose one with FILE.json#KEY" -- sh -c "printf '{\"a\": [\"1:0:0\"], \"b\": [\"0:1:0\"]}' > '$tmp/cs.json' && exec '$bin' sim --cluster '$tmp/cs.json' --trace '$day' --policy fifo"
gv=$src/data/gavel/traces/physical_cluster/small_test.trace
if "$bin" sim --cluster "$src/data/gavel/traces/msr/cluster_specs_heterogeneous.json#philly" --trace "$gv" \
    --policy fifo --out "$tmp/gv" -q && grep -q '"format": "gavel"' "$tmp/gv/summary.json" &&
    grep -q ',recommendation-bs8192,' "$tmp/gv/jobs.csv"; then
  pass=$((pass+1)); echo "ok - a Gavel trace on Gavel's cluster spec"
else
  fail=$((fail+1)); echo "not ok - a Gavel trace on Gavel's cluster spec"
fi
printf 'A3C\tcmd\trl\t--s\t0\t1000\t1\t1\t-1\t0\nA3C\tcmd\trl\t--s\t0\t10\tfour\t1\t-1\t0\n' > "$tmp/g.trace"
expect 2 "g.trace:2:21: scale_factor: 'four' is not an integer" -- "$bin" sim --cluster 8 --trace "$tmp/g.trace" --policy fifo
expect 2 "listed twice" -- "$bin" sim --cluster 4 --trace "$day" --policy fifo,fifo

# a job larger than the cluster is rejected with a reason and counted, not a hang
printf 'submit,duration,gpus\n0,10,2\n1,10,64\n' > "$tmp/big.csv"
if "$bin" sim --cluster 2x8 --trace "$tmp/big.csv" --policy fifo --out "$tmp/big" -q \
   && grep -q '"jobs_rejected": 1' "$tmp/big/summary.json" \
   && grep -q 'REJECTED,,default,needs 64 GPUs but the cluster has 16' "$tmp/big/jobs.csv"; then
  pass=$((pass+1)); echo "ok - oversized job rejected and counted"
else
  fail=$((fail+1)); echo "not ok - oversized job"
fi

# several policies: per-policy folders, compare.csv and a table on stdout
if "$bin" sim --cluster "$spec" --trace "$day" --policy fifo,yarn-cs --out "$tmp/multi" > "$tmp/table.txt" \
   && [ -f "$tmp/multi/fifo/summary.json" ] && [ -f "$tmp/multi/yarn-cs/jobs.csv" ] \
   && [ -f "$tmp/multi/yarn-cs/timeline.csv" ] && [ "$(wc -l < "$tmp/multi/compare.csv")" -eq 3 ] \
   && grep -q '^yarn-cs ' "$tmp/table.txt"; then
  pass=$((pass+1)); echo "ok - multi-policy outputs"
else
  fail=$((fail+1)); echo "not ok - multi-policy outputs"
fi

# summary.json carries the contract's keys
for k in policy placement jobs jobs_done jobs_rejected avg_jct_s median_jct_s p95_jct_s p99_jct_s \
         avg_queue_s makespan_s gpu_util preemptions events wall_s; do
  if ! grep -q "\"$k\":" "$tmp/multi/fifo/summary.json"; then
    fail=$((fail+1)); echo "not ok - summary.json lacks $k"; continue 2
  fi
done
pass=$((pass+1)); echo "ok - summary.json keys"

# progress never goes to stdout, and not to stderr when it is not a terminal
"$bin" sim --cluster "$spec" --trace "$day" --policy fifo --out "$tmp/p" -q 2> "$tmp/err.txt" > "$tmp/out.txt"
if [ ! -s "$tmp/err.txt" ] && [ ! -s "$tmp/out.txt" ]; then
  pass=$((pass+1)); echo "ok - quiet and no progress off a terminal"
else
  fail=$((fail+1)); echo "not ok - unexpected output"
fi

# determinism through the CLI: two runs, identical files except wall_s
"$bin" sim --cluster "$spec" --trace "$day" --policy fifo-backfill,yarn-cs --out "$tmp/d1" -q
"$bin" sim --cluster "$spec" --trace "$day" --policy fifo-backfill,yarn-cs --out "$tmp/d2" -q
if diff -r -I '"wall_s"' "$tmp/d1" "$tmp/d2" > /dev/null; then
  pass=$((pass+1)); echo "ok - byte-identical outputs"
else
  fail=$((fail+1)); echo "not ok - outputs differ between runs"
fi

# --events: a bad node takes no new job while its jobs run on (a failure requeues); down/up on
# a bad node leave it bad, good returns it
printf 'submit,duration,gpus\n0,100,2\n20,10,2\n30,10,2\n' > "$tmp/bad.csv"
printf 'time,node,state\n10,n0,bad\n25,n1,bad\n35,n1,down\n50,n1,up\n60,n1,good\n' > "$tmp/bad-ev.csv"
"$bin" sim --cluster 2x2 --trace "$tmp/bad.csv" --policy fifo --events "$tmp/bad-ev.csv" \
  --out "$tmp/bad-out" -q
got=$(cut -d, -f1-4,8 "$tmp/bad-out/jobs.csv" | tail -n +2 | paste -sd' ')
if [ "$got" = "0,0,0,100,0 1,20,20,30,0 2,30,60,70,0" ]; then
  pass=$((pass+1)); echo "ok - events bad/good"
else
  fail=$((fail+1)); echo "not ok - events bad/good: $got"
fi
# --events drain/resume: a drained node's job runs to its end (not requeued), nothing new starts
# there - job 3 waits past 100, when n0 is empty, until the resume at 120 - then it takes jobs
printf 'submit,duration,gpus\n0,100,2\n20,10,2\n25,100,2\n40,10,2\n' > "$tmp/dr.csv"
printf 'time,node,state\n10,n0,drain\n120,n0,resume\n' > "$tmp/dr-ev.csv"
"$bin" sim --cluster 2x2 --trace "$tmp/dr.csv" --policy fifo --events "$tmp/dr-ev.csv" \
  --out "$tmp/dr-out" -q
got=$(cut -d, -f1-4,8 "$tmp/dr-out/jobs.csv" | tail -n +2 | paste -sd' ')
if [ "$got" = "0,0,0,100,0 1,20,20,30,0 2,25,30,130,0 3,40,120,130,0" ]; then
  pass=$((pass+1)); echo "ok - events drain/resume"
else
  fail=$((fail+1)); echo "not ok - events drain/resume: $got"
fi
got=$(cut -d, -f1,10 "$tmp/dr-out/jobs.csv" | tail -n +2 | paste -sd' ')
if [ "$got" = "0,n0:0 n0:1 1,n1:0 n1:1 2,n1:0 n1:1 3,n0:0 n0:1" ]; then
  pass=$((pass+1)); echo "ok - events drain/resume placements"
else
  fail=$((fail+1)); echo "not ok - events drain/resume placements: $got"
fi
printf '10,n0,broken\n' > "$tmp/bad-ev2.csv"
expect 2 "expected 'down', 'up', 'bad', 'good', 'drain', 'resume' or 'release', got 'broken'" -- "$bin" sim --cluster 2x2 \
  --trace "$tmp/bad.csv" --policy fifo --events "$tmp/bad-ev2.csv" --out "$tmp/bad-out2" -q

# the README's HiveD example: HiveD's design config as it is, the bundled trace with the design
# request's 16+8+8+8+4 gang; every job ends, each inside one chain; fifo refuses the grouped ones
design=$src/tests/hived-configs/config/design/hivedscheduler.yaml
"$bin" sim --cluster "$design" --trace "$src/data/examples/hived-design.csv" --policy hived,fifo \
  --out "$tmp/design" -q
got=$(awk -F, 'NR>1 && $9=="DONE"' "$tmp/design/hived/jobs.csv" | wc -l)
rj=$(grep -c 'need a policy that places them: hived' "$tmp/design/fifo/jobs.csv")
if [ "$got" -eq 7 ] && [ "$rj" -eq 2 ]; then
  pass=$((pass+1)); echo "ok - HiveD design config and trace: 7 done under hived, 2 refused by fifo"
else
  fail=$((fail+1)); echo "not ok - HiveD design config and trace: $got done, $rj refused"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
