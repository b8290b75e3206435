#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Gandiva experiment of docs/gandiva.md: every table there comes from this script.
# usage: tools/gandiva_experiments.sh [BIN] [OUTDIR]   (BIN default build/gsched)
set -euo pipefail
BIN=${1:-build/gsched}
OUT=${2:-gandiva-exp}
mkdir -p "$OUT"
S=data/philly-1day
table() { # compare.csv -> markdown rows
  awk -F, 'NR>1 { printf "| %s | %.1f | %.1f | %.1f | %.1f | %.1f%% | %.1f%% | %d | %d | %d | %d | %.1f |\n",
    $1, $6, $7, $8, $15, 100*$12, 100*$16, $13, $17, $18, $19, $21/3600 }' "$1"
}
hdr() {
  echo "| policy | avg JCT s | median s | p95 s | avg time to 1st start s | GPU util | job util | preemptions | suspends | packs | migrations | mechanism cost GPU-h |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
}
run() { # name cluster trace policies [--set ...]
  local name=$1 cluster=$2 trace=$3 pols=$4; shift 4
  "$BIN" sim --cluster "$cluster" --trace "$trace" --policy "$pols" --out "$OUT/$name" "$@" > /dev/null
}
echo "### 1-day Philly window (1,353 jobs) on n32g8_2sw (256 GPUs), realistic defaults"
run day $S/n32g8_2sw.csv $S/philly_20171002_tiresias.csv fifo,yarn-cs,tiresias-las,gandiva
run day-nopack $S/n32g8_2sw.csv $S/philly_20171002_tiresias.csv gandiva,fifo --set pack=off
hdr; table "$OUT/day/compare.csv"; table "$OUT/day-nopack/compare.csv" | grep '^| gandiva ' | sed 's/^| gandiva /| gandiva pack=off /'
echo
for c in 4x16x8 8x32x8; do
  echo "### Full Philly trace (82,247 jobs) on $c"
  run "philly-$c" "$c" data/philly/philly.csv fifo,yarn-cs,tiresias-las,gandiva
  run "philly-$c-nopack" "$c" data/philly/philly.csv gandiva,fifo --set pack=off
  hdr; table "$OUT/philly-$c/compare.csv"; table "$OUT/philly-$c-nopack/compare.csv" | grep '^| gandiva ' | sed 's/^| gandiva /| gandiva pack=off /'
  echo
done
echo "### Hyper-parameter search burst (128 x 1 GPU, ResNet-18, data/examples/hpsearch.csv) on 2x8:V100"
run hp 2x8:V100 data/examples/hpsearch.csv fifo,yarn-cs,tiresias-las,gandiva
run hp-nopack 2x8:V100 data/examples/hpsearch.csv gandiva,fifo --set pack=off
run hp-os8 2x8:V100 data/examples/hpsearch.csv gandiva,fifo --set oversub=8
hdr; table "$OUT/hp/compare.csv"
table "$OUT/hp-nopack/compare.csv" | grep '^| gandiva ' | sed 's/^| gandiva /| gandiva pack=off /'
table "$OUT/hp-os8/compare.csv" | grep '^| gandiva ' | sed 's/^| gandiva /| gandiva oversub=8 /'
echo
echo "### Compat: gandiva-emul vs the Tiresias simulator (--placement count --set costs=off)"
run emul-day $S/n32g8_2sw.csv $S/philly_20171002_tiresias.csv gandiva-emul,fifo --placement count --set costs=off
run emul-60 $S/n2g8.csv data/tiresias/60_job.csv gandiva-emul,fifo --placement count --set costs=off
echo "| trace | Tiresias avg / median / p95 JCT s | gsched gandiva-emul |"
echo "|---|---|---|"
awk -F, '$1=="gandiva-emul" { printf "| 1-day window, n32g8_2sw | 13,823.5 / 7,081 / 20,189 | %.1f / %.1f / %.1f |\n", $6, $7, $8 }' "$OUT/emul-day/compare.csv"
awk -F, '$1=="gandiva-emul" { printf "| 60_job.csv, n2g8 | 475.3 / 235.5 / 1,636 | %.1f / %.1f / %.1f |\n", $6, $7, $8 }' "$OUT/emul-60/compare.csv"
echo
echo "### Suspend mechanisms (suspend_mech): hpsearch on 2x8:V100 (pack=off), 1-day window (defaults)"
mechs() { # name cluster trace policy-prefix
  local p=$4
  run "$1" "$2" "$3" "$p:suspend_mech=copy,$p:suspend_mech=sigstop,$p:suspend_mech=cuda,$p:suspend_mech=restart"
  echo "| policy | avg JCT s | makespan s | GPU util | suspends | GPU-h suspending / resuming |"
  echo "|---|---|---|---|---|---|"
  for m in copy sigstop cuda restart; do
    local s
    s=$(sed -n 's/^ *"suspend": \([0-9.]*\),*$/\1/p' "$OUT/$1/$p:suspend_mech=$m/summary.json")
    awk -F, -v p="$p:suspend_mech=$m" -v s="$s" '$1==p { printf "| %s | %.1f | %.1f | %.1f%% | %d | %.2f |\n",
      $1, $6, $11, 100*$12, $17, s/3600 }' "$OUT/$1/compare.csv"
  done
}
mechs mech-hp 2x8:V100 data/examples/hpsearch.csv gandiva:pack=off
mechs mech-day $S/n32g8_2sw.csv $S/philly_20171002_tiresias.csv gandiva
