#!/usr/bin/env bash
# Output identity check for refactors: runs a fixed matrix of simulations (every policy on the
# bundled 1-day Philly window with the defaults and the Tiresias-compatible settings, the
# fidelity cases, Gandiva's burst, HiveD VCs, the golden cases, every scenario) and writes their
# outputs under OUTDIR, minus wall-clock figures.  Run it before and after a change and compare:
#
#   tools/outputs_check.sh build/gsched /tmp/before     # at the old commit
#   tools/outputs_check.sh build/gsched /tmp/after      # at the new one
#   diff -r /tmp/before /tmp/after && echo identical
#
# usage: tools/outputs_check.sh [BIN] [OUTDIR]    (BIN default build/gsched, OUTDIR out/identity)
set -euo pipefail
BIN=${1:-build/gsched}
OUT=${2:-out/identity}
SRC=$(cd "$(dirname "$0")/.." && pwd)
S=$SRC/data/philly-1day
DAY=$S/philly_20171002_tiresias.csv
rm -rf "$OUT"; mkdir -p "$OUT"
ALL=$("$BIN" policies | awk '{print $1}' | grep -v -e '^hived$' -e '^quota$' -e '^private$' | paste -sd, -)
run() { # name, then gsched sim arguments
  local name=$1; shift
  "$BIN" sim "$@" --out "$OUT/$name" --progress never > "$OUT/$name.table" 2> "$OUT/$name.err" ||
    echo "exit $?" >> "$OUT/$name.err"
}
run day-default --cluster "$S/n32g8_2sw.csv" --trace "$DAY" --policy "$ALL"
run day-count --cluster "$S/n32g8_2sw.csv" --trace "$DAY" --policy "$ALL" --placement count \
  --set slowdown=off
run day-compat --cluster "$S/n32g8_2sw.csv" --trace "$DAY" \
  --policy las,tiresias-las,tiresias-gittins,srtf,srsf --placement count --set slowdown=off \
  --set preempt_cost=0 --set queues=3250,7200
run day-emul --cluster "$S/n32g8_2sw.csv" --trace "$DAY" --policy gandiva-emul --placement count \
  --set costs=off
run sixty --cluster "$S/n2g8.csv" --trace "$SRC/data/tiresias/60_job.csv" --policy "$ALL"
run hpsearch --cluster 2x8:V100 --trace "$SRC/data/examples/hpsearch.csv" \
  --policy fifo,tiresias-las,gandiva
run hpsearch-oversub --cluster 2x8:V100 --trace "$SRC/data/examples/hpsearch.csv" \
  --policy gandiva --set oversub=8
run hived-mini --cluster "$SRC/data/examples/hived-basic.yaml" --trace "$SRC/data/examples/mini.csv" \
  --policy fifo,hived,private,quota
run yarn-quotas --cluster 8x32x8 --trace "$SRC/data/philly/philly.csv" --policy yarn-cs \
  --set relax=on --set quotas=6214e9:512,11cb48:256
run philly-contended --cluster 4x16x8 --trace "$SRC/data/philly/philly.csv" \
  --policy fifo-backfill,tiresias-las,srtf
for d in "$SRC"/tests/golden/*/; do
  n=$(basename "$d")
  # shellcheck disable=SC2046
  run "golden-$n" $(cat "$d/args") --trace "$d/trace.csv"
done
"$BIN" scenario "$SRC"/tests/scenarios/*.yaml > "$OUT/scenarios.txt" 2>&1 || echo "exit $?" >> "$OUT/scenarios.txt"
# wall-clock figures are not outputs
find "$OUT" -name '*.table' -exec sed -i -E 's/[0-9]+\.[0-9]+ *$/WALL/' {} +
find "$OUT" -name 'summary.json' -exec sed -i -E '/"wall_s"|"wall_seconds"|"peak_rss|"events_per_s/d' {} +
find "$OUT" -name 'report.html' -exec sed -i -E 's/[0-9]+\.[0-9]+ s wall//g' {} +
echo "outputs in $OUT ($(find "$OUT" -type f | wc -l) files)"
