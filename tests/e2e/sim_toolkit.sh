#!/usr/bin/env bash
# The experiment toolkit of `gsched sim` (docs/experiments.md): per-policy parameters,
# --seed / --seeds with mean and confidence-interval columns, --window, --sweep, and their
# option errors.
# usage: sim_toolkit.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
day=$src/data/philly-1day/philly_20171002_tiresias.csv
spec=$src/data/philly-1day/n32g8_2sw.csv

ok() { pass=$((pass+1)); echo "ok - $1"; }
bad() { fail=$((fail+1)); echo "not ok - $1"; }
check() { # description, then a command that must succeed
  local what=$1; shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
# expect CODE PATTERN -- command...: exit code and a stderr line matching PATTERN
expect() {
  local code=$1 pat=$2; shift 3
  local out rc
  out=$("$@" 2>&1 >/dev/null); rc=$?
  if [ "$rc" -eq "$code" ] && printf '%s\n' "$out" | grep -Eq -- "$pat"; then
    ok "exit $code: $pat"
  else
    bad "expected exit $code and /$pat/, got exit $rc: $out"
  fi
}
# col FILE ROW-MATCH COLUMN: the value of COLUMN in the first row whose first fields match
col() {
  awk -F, -v m="$2" -v c="$3" 'NR==1{for(i=1;i<=NF;i++) h[$i]=i; next}
    index($0, m)==1 {print $h[c]; exit}' "$1"
}

# --- per-policy parameters: the same policy twice in one comparison, labelled as typed
"$bin" sim --cluster "$spec" --trace "$day" --policy gandiva,gandiva:pack=off --out "$tmp/pp" \
  > "$tmp/pp.txt" 2> "$tmp/pp.err"
check "gandiva and gandiva:pack=off both run" test -f "$tmp/pp/gandiva/summary.json" -a \
  -f "$tmp/pp/gandiva:pack=off/summary.json"
p1=$(col "$tmp/pp/compare.csv" "gandiva," packs); p2=$(col "$tmp/pp/compare.csv" "gandiva:pack=off," packs)
check "pack=off applies to its item only (packs $p1 vs $p2)" test "${p1:-0}" -gt 0 -a "${p2:-x}" = 0
check "labels in the table" grep -q '^gandiva:pack=off ' "$tmp/pp.txt"
check "summary.json records the item's parameter" grep -q '"pack": "off"' \
  "$tmp/pp/gandiva:pack=off/summary.json"
# --set applies to every item; an item's own key wins
"$bin" sim --cluster "$spec" --trace "$day" --policy gandiva,gandiva:pack=on --set pack=off \
  --out "$tmp/pp2" -q
p1=$(col "$tmp/pp2/compare.csv" "gandiva," packs); p2=$(col "$tmp/pp2/compare.csv" "gandiva:pack=on," packs)
check "--set for all, the item overrides (packs $p1 vs $p2)" test "${p1:-x}" = 0 -a "${p2:-0}" -gt 0
# values with commas
"$bin" sim --cluster "$spec" --trace "$day" --policy tiresias-las:queues=3250,7200,fifo \
  --out "$tmp/pq" -q
check "a value with a comma stays in its item" test -f "$tmp/pq/tiresias-las:queues=3250,7200/summary.json" -a -f "$tmp/pq/fifo/summary.json"
prof=$src/data/profiles/gavel.csv
"$bin" sim --cluster "$spec" --trace "$day" --policy "fifo,gandiva:profiles=$prof" --out "$tmp/slash" -q
lab="gandiva:profiles=$prof"
check "a '/' in a label's folder name becomes '_'" test -f "$tmp/slash/${lab//\//_}/summary.json"
check "such a label is quoted in compare.csv" grep -q '^"tiresias-las:queues=3250,7200",' "$tmp/pq/compare.csv"
# long labels (a path in a value) are kept whole: two that differ only at the end stay apart
q="tiresias-las:queues=1000,2000,3000,4000,5000,6000,7000,8000,9000"
"$bin" sim --cluster "$spec" --trace "$day" --policy "$q,10000,$q,20000" --out "$tmp/long" \
  > "$tmp/long.txt"
check "long labels whole in compare.csv" test "$(grep -c -e "^\"$q,10000\"," -e "^\"$q,20000\"," "$tmp/long/compare.csv")" = 2
check "long labels whole in the table" grep -q "^$q,20000 " "$tmp/long.txt"
expect 2 "characters long \(at most 255" -- "$bin" sim --cluster "$spec" --trace "$day" \
  --policy "fifo,gandiva:profiles=/$(printf 'x%.0s' $(seq 300))"
expect 2 "item 'gandiva:pakc=off': parameter 'pakc' is not used" -- \
  "$bin" sim --cluster "$spec" --trace "$day" --policy fifo,gandiva:pakc=off
expect 2 "item 'fifo:pack=off': parameter 'pack' is not used" -- \
  "$bin" sim --cluster "$spec" --trace "$day" --policy gandiva,fifo:pack=off
expect 2 "expected KEY=VALUE" -- "$bin" sim --cluster "$spec" --trace "$day" --policy gandiva:pack
expect 2 "'gandiva:pack=off' listed twice" -- \
  "$bin" sim --cluster "$spec" --trace "$day" --policy gandiva:pack=off,gandiva:pack=off
expect 2 "policy gandiva:pack=maybe: .*pack" -- \
  "$bin" sim --cluster "$spec" --trace "$day" --policy fifo,gandiva:pack=maybe

# --- seeds
for s in -1 x 1.5 "" " 3"; do
  expect 2 "--seed: '$s' is not a non-negative integer" -- \
    "$bin" sim --cluster "$spec" --trace "$day" --policy fifo --seed "$s"
done
for s in 0 -2 x 10001; do
  expect 2 "--seeds: '$s' is not a number of seeds" -- \
    "$bin" sim --cluster "$spec" --trace "$day" --policy fifo --seeds "$s"
done
expect 2 "would pass 2\^64" -- "$bin" sim --cluster "$spec" --trace "$day" --policy fifo \
  --seed 18446744073709551615 --seeds 2
"$bin" sim --cluster "$spec" --trace "$day" --policy fifo,tiresias-las --seed 7 --seeds 3 \
  --out "$tmp/s" > "$tmp/s.txt"
check "per-seed runs in subfolders" test -f "$tmp/s/fifo/seed-7/summary.json" -a \
  -f "$tmp/s/fifo/seed-9/jobs.csv" -a -f "$tmp/s/tiresias-las/seed-8/timeline.csv" -a \
  ! -e "$tmp/s/fifo/seed-10"
check "each run records its seed" grep -q '"seed": 8' "$tmp/s/tiresias-las/seed-8/summary.json"
check "compare.csv: seeds, mean and _ci95 columns" grep -q \
  '^policy,placement,seeds,jobs,jobs_ci95,jobs_done,jobs_done_ci95,jobs_rejected,jobs_rejected_ci95,avg_jct_s,avg_jct_s_ci95,' \
  "$tmp/s/compare.csv"
check "compare.csv: one row per policy over 3 seeds" test "$(grep -c ',consolidate,3,' "$tmp/s/compare.csv")" = 2
check "runs.csv: one row per run" test "$(wc -l < "$tmp/s/runs.csv")" = 7
check "runs.csv names the seeds" grep -q '^tiresias-las,consolidate,9,' "$tmp/s/runs.csv"
check "the table shows mean ± ci" grep -q '^fifo .* 3 .*±' "$tmp/s.txt"
check "report.html beside them" test -s "$tmp/s/report.html"
check "the report's error-bar figures" grep -q '<h2>Across seeds</h2>' "$tmp/s/report.html"
nsvg=$(grep -o '<svg xmlns=' "$tmp/s/report.html" | wc -l)
nfile=$(ls "$tmp/s"/report-[0-9][0-9]-*.svg | wc -l)
check "every figure is an SVG file beside the report ($nsvg figures, $nfile files)" test "$nsvg" -gt 5 -a "$nsvg" = "$nfile"
check "the figures are linked" grep -q '<a class="svg" href="report-01-' "$tmp/s/report.html"
# one policy, several seeds
"$bin" sim --cluster "$spec" --trace "$day" --policy fifo --seeds 2 --out "$tmp/s1" -q
check "one policy: OUT/seed-N" test -f "$tmp/s1/seed-1/summary.json" -a -f "$tmp/s1/seed-2/summary.json" -a -f "$tmp/s1/compare.csv"
# the same seed gives the same outputs; the mean of equal runs has no spread
jct=$(col "$tmp/s/compare.csv" "fifo," avg_jct_s); ci=$(col "$tmp/s/compare.csv" "fifo," avg_jct_s_ci95)
check "fifo's mean JCT ($jct ± $ci)" test "$jct" = 14119.804 -a "$ci" = 0.000

# --- a generated workload: a new one per seed, the same as `gsched gen` writes
"$bin" sim --cluster 4x8 --trace gen:jobs=200,load=0.9 --policy fifo,tiresias-las --seeds 4 \
  --out "$tmp/g" -q
s1=$(grep -o '"sha256": "[0-9a-f]*"' "$tmp/g/fifo/seed-1/summary.json" | head -1)
s2=$(grep -o '"sha256": "[0-9a-f]*"' "$tmp/g/fifo/seed-2/summary.json" | head -1)
check "gen: one workload per seed" test -n "$s1" -a "$s1" != "$s2"
check "gen: every policy of a seed gets the same workload" grep -q "$s2" "$tmp/g/tiresias-las/seed-2/summary.json"
ci=$(col "$tmp/g/compare.csv" "fifo," avg_jct_s_ci95)
check "gen: the seeds spread, the interval is not 0 ($ci)" test -n "$ci" -a "$ci" != 0.000
"$bin" gen jobs=200,load=0.9 --cluster 4x8 --seed 3 -o "$tmp/g3.csv" -q
"$bin" sim --cluster 4x8 --trace "$tmp/g3.csv" --policy fifo --out "$tmp/g3" -q
a=$(awk -F, '$1=="fifo" && $3==3 {print $7}' "$tmp/g/runs.csv")
b=$(grep -o '"avg_jct_s": [0-9.]*' "$tmp/g3/summary.json" | head -1 | awk '{print $2}')
check "gen: seed 3's run is the run of gsched gen --seed 3 ($a vs $b)" awk -v a="$a" -v b="$b" 'BEGIN{exit !(a!="" && a+0==b+0)}'
"$bin" sim --cluster 4x8 --trace gen:jobs=200 --policy fifo --sweep gen.load=0.5,0.9 --out "$tmp/gs" -q
a=$(col "$tmp/gs/sweep.csv" "gen.load,0.5," avg_queue_s); b=$(col "$tmp/gs/sweep.csv" "gen.load,0.9," avg_queue_s)
check "gen: --sweep gen.load regenerates the workload (queue $a vs $b)" awk -v a="$a" -v b="$b" 'BEGIN{exit !(a+0 < b+0)}'
check "gen: the swept spec is recorded" grep -q '"path": "gen:jobs=200,load=0.9"' "$tmp/gs/gen.load=0.9/fifo/summary.json"
# the report names the workload it draws (seed 1's), not the last one generated
h1=$(grep -o '"sha256": "[0-9a-f]*"' "$tmp/g/fifo/seed-1/summary.json" | head -1 | cut -d'"' -f4)
check "gen: the report's trace SHA-256 is seed 1's workload" grep -q "class=\"hash\">$h1</code> (the workload of seed 1" "$tmp/g/report.html"
h1=$(grep -o '"sha256": "[0-9a-f]*"' "$tmp/gs/gen.load=0.5/fifo/summary.json" | head -1 | cut -d'"' -f4)
check "gen sweep: the report's trace SHA-256 is the first value's" grep -q "class=\"hash\">$h1</code>" "$tmp/gs/report.html"
# a workload that does not fit in memory: a message and exit 1, not a bare "error" (skipped
# under AddressSanitizer, whose shadow memory a ulimit -v refuses)
out=$( (ulimit -v 400000; "$bin" sim --cluster 8 --trace gen:jobs=100000000 --policy fifo \
  --out "$tmp/oom" -q) 2>&1); rc=$?
if printf '%s' "$out" | grep -q AddressSanitizer; then
  echo "ok - gen: out of memory # SKIP under AddressSanitizer"
else
  check "gen: out of memory says so, exit 1 ($rc: $out)" test "$rc" = 1 -a \
    "$out" = "gsched: gen: cannot generate the workload of seed 1: out of memory"
fi
expect 2 "gen:1:1: unknown key 'jbs'" -- "$bin" sim --cluster 4x8 --trace gen:jbs=2 --policy fifo
expect 2 "gen:.*unknown key 'lod'" -- "$bin" sim --cluster 4x8 --trace gen:jobs=2 --policy fifo --sweep gen.lod=1,2

# --- measurement window
"$bin" sim --cluster "$spec" --trace "$day" --policy fifo,tiresias-las --window 2h:10h \
  --out "$tmp/w" -q
check "summary.json records the window" grep -q '"start_s": 7200' "$tmp/w/fifo/summary.json"
n=$(awk -F, 'NR>1 && $2>=7200 && $2<36000' "$tmp/w/fifo/jobs.csv" | wc -l)
check "jobs counted: those submitted in the window ($n)" test "$(col "$tmp/w/compare.csv" "fifo," jobs)" = "$n"
check "jobs.csv keeps every job" test "$(wc -l < "$tmp/w/fifo/jobs.csv")" = 1354
expect 2 "--window: expected START:END" -- "$bin" sim --cluster "$spec" --trace "$day" --policy fifo --window 2h
expect 2 "END must be after START" -- "$bin" sim --cluster "$spec" --trace "$day" --policy fifo --window 5h:1h
# a window no job arrives in measures nothing: refused, saying where the arrivals are
expect 2 "--window '100h:': no job arrives in it; the trace's 1353 jobs arrive from 0 s to" -- \
  "$bin" sim --cluster "$spec" --trace "$day" --policy fifo,las --window 100h:
expect 2 "--window '100h:200h': no job arrives in it; the trace's 10 jobs \(seed 1's workload\)" -- \
  "$bin" sim --cluster 4x8 --trace gen:jobs=10,load=9 --policy fifo --seeds 3 --window 100h:200h

# --- sweep
"$bin" sim --cluster "$spec" --trace "$day" --policy tiresias-las,gandiva \
  --sweep preempt_cost=0,120 --seeds 2 --out "$tmp/sw" > "$tmp/sw.txt"
check "sweep.csv: key,value first" grep -q '^key,value,policy,placement,seeds,jobs,' "$tmp/sw/sweep.csv"
check "sweep.csv: one row per value and policy" test "$(wc -l < "$tmp/sw/sweep.csv")" = 5
check "sweep runs in OUT/KEY=VALUE/POLICY/seed-N" test -f "$tmp/sw/preempt_cost=120/gandiva/seed-2/summary.json"
check "the swept value reaches the run" grep -q '"preempt_cost": "120"' \
  "$tmp/sw/preempt_cost=120/tiresias-las/seed-1/summary.json"
a=$(awk -F, 'NR>1 && $2==0 && $3=="tiresias-las"' "$tmp/sw/sweep.csv" | cut -d, -f12)
b=$(awk -F, 'NR>1 && $2==120 && $3=="tiresias-las"' "$tmp/sw/sweep.csv" | cut -d, -f12)
check "the values give different runs ($a vs $b)" test -n "$a" -a "$a" != "$b"
check "runs.csv: values x policies x seeds" test "$(wc -l < "$tmp/sw/runs.csv")" = 9
check "one report" test -s "$tmp/sw/report.html"
check "the report plots the metrics against the value" grep -q 'aria-label="Average JCT (s) against preempt_cost per policy"' "$tmp/sw/report.html"
expect 2 "--sweep: parameter 'queues' is not used" -- \
  "$bin" sim --cluster "$spec" --trace "$day" --policy fifo --sweep queues=1,2
expect 2 "--sweep preempt_cost: also given with --set" -- "$bin" sim --cluster "$spec" \
  --trace "$day" --policy fifo --sweep preempt_cost=0,1 --set preempt_cost=3
expect 2 "a generator key needs --trace gen:SPEC" -- "$bin" sim --cluster "$spec" \
  --trace "$day" --policy fifo --sweep gen.load=0.5,0.9
expect 2 "value '1' listed twice" -- "$bin" sim --cluster "$spec" --trace "$day" --policy fifo \
  --sweep preempt_cost=1,1

# --- --help lists the options
"$bin" sim --help > "$tmp/help.txt"
for o in --seeds --window --sweep 'NAME\[:KEY=VALUE' 'suspend_mech=copy|sigstop|cuda|restart' \
  ckpt_fixed ckpt_d2h_bw ckpt_h2d_bw; do
  check "--help: $o" grep -q -- "$o" "$tmp/help.txt"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
