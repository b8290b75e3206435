#!/usr/bin/env bash
# ElasticFlow traces end to end: the bundled elasticVpollux_e.csv with its throughput tables
# under elasticflow, edf and afs (deadline metrics in summary.json, compare.csv, the table and
# report.html; byte-identical reruns), and the errors around the tables.
# usage: elasticflow.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass+1)); echo "ok - $1"; }
bad() { fail=$((fail+1)); echo "not ok - $1"; }
ef=$src/data/elasticflow/elasticVpollux_e.csv

expect() { # CODE PATTERN -- command...: exit code and a stderr line matching PATTERN
  local code=$1 pat=$2; shift 3
  local out rc
  out=$("$@" 2>&1 >/dev/null); rc=$?
  if [ "$rc" -eq "$code" ] && printf '%s\n' "$out" | grep -Eq -- "$pat"; then
    ok "exit $code: $pat"
  else
    bad "expected exit $code and /$pat/, got exit $rc: $out"
  fi
}

run() { # OUTDIR: the three policies on the bundled trace (tables found next to it)
  "$bin" sim --cluster 16x4 --trace "$ef" --policy elasticflow,edf,afs --out "$1" \
    --set rescale_cost=elasticflow --progress never > "$1.table" 2> "$1.err"
}
if run "$tmp/a"; then ok "bundled ElasticFlow trace runs"; else bad "run failed: $(cat "$tmp/a.err")"; fi
head -1 "$tmp/a/compare.csv" | grep -q ',deadline_met_ratio,rescales_per_job,rescale_gpu_s,avg_goodput$' &&
  ok "compare.csv has the deadline columns" || bad "compare.csv header: $(head -1 "$tmp/a/compare.csv")"
for p in elasticflow edf afs; do
  grep -q '"deadline_met_ratio": 0\.[0-9]' "$tmp/a/$p/summary.json" && grep -q '"deadline_jobs": 195' "$tmp/a/$p/summary.json" &&
    ok "$p: summary.json has deadline_met_ratio over 195 jobs" || bad "$p: summary.json lacks the deadline metrics"
  head -1 "$tmp/a/$p/timeline.csv" | grep -q ',goodput$' && ok "$p: timeline has goodput" || bad "$p: timeline header"
done
grep -q '"format": "elasticflow"' "$tmp/a/elasticflow/summary.json" && ok "format named" || bad "format not named"
grep -q 'elasticflow: rejected' "$tmp/a/elasticflow/jobs.csv" && ok "rejections carry the reason" ||
  bad "no rejection reason in jobs.csv"
grep -q '^ELASTIC .*DEADLINES' "$tmp/a.table" && ok "table has the ELASTIC block" || bad "no ELASTIC block"
grep -q 'Deadlines and rescaling' "$tmp/a/report.html" && grep -q '<h3>Goodput</h3>' "$tmp/a/report.html" &&
  ok "report.html has the deadline table and the goodput plot" || bad "report.html lacks the deadline sections"
# ElasticFlow admits fewer jobs but meets more deadlines than rigid EDF (ElasticFlow, Fig. 8a)
r_ef=$(sed -n 's/.*"deadline_met_ratio": \([0-9.]*\).*/\1/p' "$tmp/a/elasticflow/summary.json")
r_edf=$(sed -n 's/.*"deadline_met_ratio": \([0-9.]*\).*/\1/p' "$tmp/a/edf/summary.json")
awk -v a="$r_ef" -v b="$r_edf" 'BEGIN { exit !(a > b) }' && ok "elasticflow $r_ef > edf $r_edf" ||
  bad "elasticflow $r_ef <= edf $r_edf"
run "$tmp/b"
for f in compare.csv report.html elasticflow/jobs.csv elasticflow/timeline.csv afs/jobs.csv edf/jobs.csv; do
  cmp -s <(sed -E 's/[0-9]+\.[0-9]+ s wall//g' "$tmp/a/$f") <(sed -E 's/[0-9]+\.[0-9]+ s wall//g' "$tmp/b/$f") &&
    ok "rerun: $f identical" || bad "rerun: $f differs"
done

# tables: missing, bad, and given for another format
cp "$ef" "$tmp/alone.csv"
expect 2 'needs its throughput tables: --set throughputs=DIR' -- "$bin" sim --cluster 16x4 --trace "$tmp/alone.csv" --policy edf --out "$tmp/x"
mkdir "$tmp/tp" && cp "$src"/data/elasticflow/throughputs/*.csv "$tmp/tp/"
printf 'global_batch_size,1,2\n64,0.4,oops\n' > "$tmp/tp/yolov3.csv"
expect 2 'tp/yolov3.csv:2:8: .oops. is not a throughput' -- "$bin" sim --cluster 16x4 --trace "$ef" --policy edf --set throughputs="$tmp/tp" --out "$tmp/x"
printf 'global_batch_size,1,2\n32,0.4,0.7\n' > "$tmp/tp/yolov3.csv"
expect 2 'job 2: .*tp/yolov3.csv has no row for global batch size 64' -- "$bin" sim --cluster 16x4 --trace "$ef" --policy edf --set throughputs="$tmp/tp" --out "$tmp/x"
rm "$tmp/tp/yolov3.csv"
expect 2 'tp/yolov3.csv: cannot open' -- "$bin" sim --cluster 16x4 --trace "$ef" --policy edf --set throughputs="$tmp/tp" --out "$tmp/x"
expect 2 'only ElasticFlow traces use throughput tables' -- "$bin" sim --cluster 4 --trace "$src/data/tiresias/60_job.csv" --policy edf --set throughputs="$tmp/tp" --out "$tmp/x"
expect 2 "afs_mode: expected l or p" -- "$bin" sim --cluster 16x4 --trace "$ef" --policy afs --set afs_mode=q --out "$tmp/x"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
