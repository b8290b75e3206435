#!/usr/bin/env bash
# gsched vcgen: a HiveD config for a trace's VCs, and --trace-out's node-affinity tasks;
# the config and trace run under private, quota and hived.
# usage: vcgen.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "not ok - $*"; exit 1; }
cat > "$tmp/p.csv" <<'CSV'
timestamp,duration,num_gpus,gpu_time,cluster
2017-10-01 00:00:00,100,16,1600,aa
2017-10-01 00:00:10,100,12,1200,bb
2017-10-01 00:00:20,50,1,50,aa
2017-10-01 00:00:30,50,8,400,bb
CSV
"$bin" vcgen --trace "$tmp/p.csv" --nodes 6 --nodes-per-rack 4 --trace-out "$tmp/t.csv" > "$tmp/h.yaml" ||
  fail "vcgen exit $?"
grep -q "cellType: GPU-RACK.GPU-NODE, cellNumber: 3}" "$tmp/h.yaml" || { cat "$tmp/h.yaml"; fail "VC sizes"; }
[ "$(grep -c 'cellNumber' "$tmp/h.yaml")" = 2 ] || fail "two VCs"
echo "ok - vcgen shares the nodes by demand"
head -1 "$tmp/t.csv" | grep -q "^id,submit,duration,tasks,gpus_per_task,vc" || fail "trace header"
grep -q "^0,0,100,2,8,aa," "$tmp/t.csv" || { cat "$tmp/t.csv"; fail "16 GPUs -> 2 x 8"; }
grep -q "^1,10,100,2,6,bb," "$tmp/t.csv" || { cat "$tmp/t.csv"; fail "12 GPUs -> 2 x 6"; }
grep -q "^2,20,50,1,1,aa," "$tmp/t.csv" || fail "1 GPU"
grep -q "^3,30,50,1,8,bb," "$tmp/t.csv" || fail "8 GPUs -> 1 x 8"
echo "ok - --trace-out writes node-affinity tasks"
"$bin" sim -q --cluster "$tmp/h.yaml" --trace "$tmp/t.csv" --policy private,quota,hived --out "$tmp/o" ||
  fail "sim exit $?"
for p in private quota hived; do
  grep -q '"jobs_done": 4' "$tmp/o/$p/summary.json" || fail "$p: not every job done"
done
grep -q "^hived,aa,2,2,0," "$tmp/o/compare-vcs.csv" || { cat "$tmp/o/compare-vcs.csv"; fail "per-VC stats"; }
echo "ok - the VCs run under private, quota and hived"
"$bin" vcgen --trace "$tmp/p.csv" --nodes 2 > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "cannot hold every VC's largest job" "$tmp/err" || fail "too few nodes: exit $rc"
echo "ok - too few nodes is an input error"
