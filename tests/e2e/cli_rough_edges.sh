#!/usr/bin/env bash
# cli_rough_edges.sh - gsched sim's answers to runs that went wrong (issue 15, docs/cli.md):
#   - a run in which every job is rejected exits 2 naming the policy, how many and why (its
#     outputs are still written);
#   - --seed takes a non-negative integer only;
#   - events-file errors are FILE:LINE:COL: message (an unknown node too, before any run);
#   - numbers as people write them (1e2) are numbers, 1e30 is out of range, not "no number";
#   - hived listed with other policies on a cluster that is no HiveD config: the others run
#     and write their outputs, hived is skipped with a warning saying why, the exit status is 2.
# usage: cli_rough_edges.sh GSCHED SRC
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

SIXTY=$src/data/tiresias/60_job.csv
sim() { "$bin" sim --progress never -q "$@"; }

# 1) every job rejected
printf 'id,submit,duration,gpus\n1,0,10,4\n2,5,10,8\n3,6,10,4\n' > "$tmp/big.csv"
expect 2 "policy fifo rejected every job \(3 of 3\): 2 jobs: needs 4 GPUs but the cluster has 2; 1 job: needs 8 GPUs" -- \
  sim --cluster 1x2 --trace "$tmp/big.csv" --policy fifo --out "$tmp/rej"
check "its outputs are written" test -s "$tmp/rej/jobs.csv"
expect 2 "policy sjf rejected every job \(3 of 3\)" -- \
  sim --cluster 1x2 --trace "$tmp/big.csv" --policy fifo,sjf --out "$tmp/rej2"
expect 0 "" -- sim --cluster 1x8 --trace "$tmp/big.csv" --policy fifo --out "$tmp/fits"

# 2) --seed
for s in -1 1.5 abc ""; do
  expect 2 "--seed: '$s' is not a non-negative integer" -- \
    sim --cluster 2x8 --trace "$SIXTY" --policy fifo --seed "$s" --out "$tmp/seed"
done

# 3) events files: every error at its place
printf 'time,node,state\n10,n0,down\n20,n9,up\n' > "$tmp/ev-node.csv"
expect 2 "ev-node.csv:3:4: unknown node 'n9' \(this cluster's 2 nodes: n0 ... n1\)" -- \
  sim --cluster 2x8 --trace "$SIXTY" --policy fifo,tiresias-las --events "$tmp/ev-node.csv" \
  --out "$tmp/ev"
check "an unknown node fails before any run" test ! -e "$tmp/ev/fifo/summary.json"
printf '10,n0,down\n20,n0,sideways\n' > "$tmp/ev-state.csv"
expect 2 "ev-state.csv:2:7: expected 'down', 'up', 'bad', 'good', 'drain', 'resume' or 'release', got 'sideways'" -- \
  sim --cluster 2x8 --trace "$SIXTY" --policy fifo --events "$tmp/ev-state.csv" --out "$tmp/ev"
printf '10,n0,down\nsoon,n0,up\n' > "$tmp/ev-time.csv"
expect 2 "ev-time.csv:2:1: time: 'soon' is not a number of seconds" -- \
  sim --cluster 2x8 --trace "$SIXTY" --policy fifo --events "$tmp/ev-time.csv" --out "$tmp/ev"
printf '10,n0\n' > "$tmp/ev-fields.csv"
expect 2 "ev-fields.csv:1:1: expected 'time,node,down\|up\|bad\|good\|drain\|resume', found 2 fields" -- \
  sim --cluster 2x8 --trace "$SIXTY" --policy fifo --events "$tmp/ev-fields.csv" --out "$tmp/ev"

# 4) numbers
expect 2 "parameter 'pack_budget': 1e30 is out of range \[0, 1048576\]" -- \
  sim --cluster 2x8 --trace "$SIXTY" --policy gandiva --set pack_budget=1e30 --out "$tmp/num"
expect 0 "" -- sim --cluster 2x8 --trace "$SIXTY" --policy gandiva --set pack_budget=1e2 \
  --out "$tmp/num"
expect 2 "parameter 'oversub': 1e\+30 is outside \[1, 64\]" -- \
  sim --cluster 2x8 --trace "$SIXTY" --policy gandiva --set oversub=1e30 --out "$tmp/num"
expect 2 "parameter 'rescale_gap': '1e30' is not a duration: too large a duration" -- \
  sim --cluster 2x8 --trace "$SIXTY" --policy gandiva --set rescale_gap=1e30 --out "$tmp/num"

# 5) hived beside other policies on a plain cluster
expect 2 "warning: policy hived skipped, the others run: policy 'hived' needs a HiveD cluster config" -- \
  sim --cluster 2x8 --trace "$SIXTY" --policy fifo,hived,tiresias-las --out "$tmp/mix"
check "the others wrote their outputs" test -s "$tmp/mix/fifo/summary.json" -a \
  -s "$tmp/mix/tiresias-las/jobs.csv" -a -s "$tmp/mix/report.html"
check "hived wrote nothing" test ! -e "$tmp/mix/hived"
rows=$(cut -d, -f1 "$tmp/mix/compare.csv" | tail -n +2 | paste -sd, -)
check "compare.csv has the others ($rows)" [ "$rows" = "fifo,tiresias-las" ]
expect 2 "1 policy item skipped" -- \
  sim --cluster 2x8 --trace "$SIXTY" --policy fifo,hived --out "$tmp/mix2"
expect 2 "no policy of 'hived,private' can run on this cluster" -- \
  sim --cluster 2x8 --trace "$SIXTY" --policy hived,private --out "$tmp/mix3"
expect 2 "^gsched: policy 'hived' needs a HiveD cluster config" -- \
  sim --cluster 2x8 --trace "$SIXTY" --policy hived --out "$tmp/mix4"
# on a HiveD config every policy runs: exit 0
expect 0 "" -- sim --cluster "$src/data/examples/hived-basic.yaml" \
  --trace "$src/data/examples/mini.csv" --policy fifo,hived --out "$tmp/hd"
finish
