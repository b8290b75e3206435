#!/usr/bin/env bash
# plugin.sh - policy plugins end to end (ctest plugin_example; docs/writing-a-policy.md):
#   - the example plugin (examples/policy-plugin/sjf_backfill.c) builds by hand against the
#     public headers alone (strict C11, warnings as errors) and is listed by 'gsched policies';
#   - 'gsched sim --policy-plugin' runs it beside a compiled-in policy on the bundled 1-day
#     Philly window: every job done, smallest first (no job starts while a smaller one that
#     had arrived waits; fifo-backfill breaks that rule, so the check can fail), the same
#     outputs as the CMake-built copy, starve_after bounds the longest wait;
#   - a plugin without the symbol, of another ABI, with a taken name or without schedule(),
#     a missing file and a plugin given twice are refused (exit 2) saying why;
#   - 'gsched serve --policy-plugin' serves it: a submitted job runs and is done.
# usage: plugin.sh GSCHED SRC CC BUILD_INCLUDE CMAKE_BUILT_PLUGIN BAD1 BAD2 BAD3 BAD4
bin=$1 src=$2 cc=$3 binc=$4 built=$5
bad1=$6 bad2=$7 bad3=$8 bad4=$9
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

DAY=$src/data/philly-1day/philly_20171002_tiresias.csv
SPEC=$src/data/philly-1day/n32g8_2sw.csv

# 1) the example builds against the public headers only
check "example builds alone from include/" \
  "$cc" -std=c11 -pedantic -Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes \
  -O2 -shared -fPIC -I "$src/include" -I "$binc" "$src/examples/policy-plugin/sjf_backfill.c" \
  -o "$tmp/sjf.so"
expect 0 '^sjf-backfill +smallest job .*\[plugin: .*sjf.so\]$' -- \
  "$bin" policies --policy-plugin "$tmp/sjf.so"

# 2) a comparison with a compiled-in policy
run() { # out-dir, extra args
  local out=$1; shift
  "$bin" sim --cluster "$SPEC" --trace "$DAY" --placement count --progress never -q \
    --out "$out" "$@"
}
check "sim runs the plugin beside fifo-backfill" \
  run "$tmp/cmp" --policy-plugin "$tmp/sjf.so" --policy fifo-backfill,sjf-backfill
njobs=$(($(wc -l < "$DAY") - 1))
done_jobs=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "state") s = i; next }
                     $s == "DONE" { n++ } END { print n + 0 }' "$tmp/cmp/sjf-backfill/jobs.csv")
check "every job done ($done_jobs of $njobs)" [ "$done_jobs" = "$njobs" ]
grep -q '^sjf-backfill,' "$tmp/cmp/compare.csv" && ok "compare.csv has sjf-backfill" ||
  bad "compare.csv lacks sjf-backfill"

# violations of smallest-first: a job started at t while a smaller one had arrived by t and
# started later (count placement: a smaller job fits whenever a larger one does)
violations() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
           { sub_[NR] = $col["submit_s"]; st[NR] = $col["start_s"]; g[NR] = $col["gpus"]; n = NR }
           END {
             v = 0
             for (a = 2; a <= n; a++) for (b = 2; b <= n; b++)
               if (g[b] < g[a] && sub_[b] <= st[a] && st[b] > st[a]) v++
             print v
           }' "$1"
}
v_sjf=$(violations "$tmp/cmp/sjf-backfill/jobs.csv")
v_fifo=$(violations "$tmp/cmp/fifo-backfill/jobs.csv")
check "smallest first: no job started before a smaller waiting one ($v_sjf)" [ "$v_sjf" = 0 ]
check "the check sees fifo-backfill's order ($v_fifo violations)" [ "$v_fifo" -gt 0 ]

# the CMake-built copy gives the same outputs
check "CMake-built plugin runs" run "$tmp/built" --policy-plugin "$built" --policy sjf-backfill
check "same outputs as the hand-built copy" \
  cmp -s "$tmp/built/jobs.csv" "$tmp/cmp/sjf-backfill/jobs.csv"

# starve_after: the longest wait is bounded by it plus a running job's length, and shorter
maxq() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "queue_s") q = i; next }
           $q > m { m = $q } END { print m + 0 }' "$1"
}
check "starve_after=2h runs" run "$tmp/aged" --policy-plugin "$tmp/sjf.so" --policy sjf-backfill \
  --set starve_after=2h
q_plain=$(maxq "$tmp/cmp/sjf-backfill/jobs.csv")
q_aged=$(maxq "$tmp/aged/jobs.csv")
check "starve_after shortens the longest wait ($q_aged < $q_plain s)" \
  awk -v a="$q_aged" -v p="$q_plain" 'BEGIN { exit !(a < p) }'
expect 2 "starve_after" -- run "$tmp/neg" --policy-plugin "$tmp/sjf.so" --policy sjf-backfill \
  --set starve_after=-5
expect 2 "parameter 'nope' is not used" -- run "$tmp/unused" --policy-plugin "$tmp/sjf.so" \
  --policy sjf-backfill --set nope=1

# 3) refusals, each saying why
expect 2 "does not define 'gsched_policy_plugin'" -- \
  run "$tmp/x" --policy-plugin "$bad1" --policy fifo
expect 2 "built for policy ABI [0-9]+ .*rebuild it" -- \
  run "$tmp/x" --policy-plugin "$bad2" --policy fifo
expect 2 "policy 'fifo' is already defined \(a compiled-in policy\)" -- \
  run "$tmp/x" --policy-plugin "$bad3" --policy fifo
expect 2 "not usable: it has no schedule\(\)" -- \
  run "$tmp/x" --policy-plugin "$bad4" --policy fifo
expect 2 "cannot load it: .*no-such.so" -- \
  run "$tmp/x" --policy-plugin "$tmp/no-such.so" --policy fifo
expect 2 "policy 'sjf-backfill' is already defined \(by .*sjf.so\)" -- \
  run "$tmp/x" --policy-plugin "$tmp/sjf.so" --policy-plugin "$built" --policy sjf-backfill
expect 2 "unknown policy 'sjf-backfill'" -- run "$tmp/x" --policy sjf-backfill
expect 2 "did you mean 'sjf-backfill'" -- \
  run "$tmp/x" --policy-plugin "$tmp/sjf.so" --policy sjf-backfil

# 4) the live scheduler serves it
d_start plug --cluster 1x2 --policy-plugin "$tmp/sjf.so" --policy sjf-backfill
if dcurl -s "$URL/v1/health" | grep -q '"policy": *"sjf-backfill"'; then
  ok "serve runs sjf-backfill"
else
  bad "serve: $(dcurl -s "$URL/v1/health")"
fi
id=$(gsub --gpus 1 -- true)
check "a job submitted to it is done" wait_state "$id" DONE 30
d_stop
finish
