#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# pollux_parity.sh - reproduce the Pollux paper's Figure 8 (OSDI'21) with gsched's parity mode
# and compare with the authors' own results (results-*/summary.json of their artifact):
#   - 96 runs: workloads 1-8 x loads 0.5/1.0/1.5/2.0 x pollux, tiresias, optimus on 16x4 GPUs;
#   - the scheduling-interval sweep (pollux, 1.0x: 30s, 1m, 2m, 4m, 8m);
#   - the interference sweep (pollux, 1.0x: avoidance on; off with 0, 25, 50 % slowdown).
# For each cell it prints the mean over the workloads of the average JCT, the authors' value and
# the difference; for the sweeps whether each step goes the same way as theirs; and the time the
# runs took.  Exit 0, or 1 with --check when a cell is outside the tolerance (or a sweep step goes
# the other way), 2 on usage errors.  docs/elastic.md ("Pollux parity") shows its table.
#
#   tools/pollux_parity.sh [--gsched BIN] [--data DIR] [-j N] [--loads "1.0 2.0"]
#       [--workloads "1 2"] [--policies pollux,tiresias,optimus] [--no-sweeps]
#       [--per-workload] [--check] [--tolerance PCT] [--out DIR] [--markdown]
#
# DIR holds workloads*/ and results-*/ (default: data/pollux when it has them, else
# ../shared/traces/pollux next to the repository).  Runs go N at a time (default 2).
# --markdown prints the tables as Markdown (docs/elastic.md).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
GSCHED=$here/build/gsched
DATA=
JOBS=2
LOADS="0.5 1.0 1.5 2.0"
WORKLOADS="1 2 3 4 5 6 7 8"
POLICIES=pollux,tiresias,optimus
SWEEPS=1
PERW=0
CHECK=0
TOL=10
OUT=
MD=0

usage() { sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case $1 in
    --gsched) GSCHED=$2; shift 2 ;;
    --data) DATA=$2; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    --loads) LOADS=$2; shift 2 ;;
    --workloads) WORKLOADS=$2; shift 2 ;;
    --policies) POLICIES=$2; shift 2 ;;
    --no-sweeps) SWEEPS=0; shift ;;
    --per-workload) PERW=1; shift ;;
    --markdown) MD=1; shift ;;
    --check) CHECK=1; shift ;;
    --tolerance) TOL=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "pollux_parity.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
if [ -z "$DATA" ]; then
    if [ -d "$here/data/pollux/results-jobload" ]; then
        DATA=$here/data/pollux
    else
        DATA=$here/../shared/traces/pollux
    fi
fi
[ -d "$DATA/workloads" ] && [ -d "$DATA/results-jobload" ] || {
    echo "pollux_parity.sh: no Pollux data in '$DATA' (give --data DIR)" >&2
    exit 2
}
[ -x "$GSCHED" ] || { echo "pollux_parity.sh: no gsched at '$GSCHED' (build first)" >&2; exit 2; }
DATA=$(cd "$DATA" && pwd)
if [ -z "$OUT" ]; then
    OUT=$(mktemp -d /tmp/pollux-parity.XXXXXX)
    trap 'rm -rf "$OUT"' EXIT
fi
mkdir -p "$OUT"

wdir() { if [ "$1" = 1.0 ]; then echo "$DATA/workloads"; else echo "$DATA/workloads-$1"; fi; }

# One run per line: id;trace;policies;--set arguments (space separated KEY=VALUE)
: >"$OUT/runs"
for l in $LOADS; do
    for w in $WORKLOADS; do
        echo "load$l-w$w;$(wdir "$l")/workload-$w.csv;$POLICIES;" >>"$OUT/runs"
    done
done
nmain=$(wc -l <"$OUT/runs")
if [ "$SWEEPS" = 1 ]; then
    for w in $WORKLOADS; do
        for iv in 30s 2m 4m 8m; do
            echo "iv$iv-w$w;$DATA/workloads/workload-$w.csv;pollux;interval=$iv" >>"$OUT/runs.sweep"
        done
        echo "noavoid-w$w;$DATA/workloads/workload-$w.csv;pollux;interference_avoid=off" \
            >>"$OUT/runs.sweep"
        for i in 25 50; do
            echo "inter$i-w$w;$DATA/workloads/workload-$w.csv;pollux;interference_avoid=off interference=0.$i" \
                >>"$OUT/runs.sweep"
        done
    done
fi

run_one() {
    local id trace pols sets args=()
    IFS=';' read -r id trace pols sets <<<"$1"
    for s in $sets; do args+=(--set "$s"); done
    "$GSCHED" sim --cluster 16x4 --trace "$trace" --policy "$pols" "${args[@]}" \
        --out "$OUT/$id" --progress never -q >"$OUT/$id.log" 2>&1 ||
        { echo "pollux_parity.sh: run $id failed:" >&2; cat "$OUT/$id.log" >&2; return 1; }
}
export -f run_one
export GSCHED OUT

now() { date +%s.%N; }
# CPU seconds (user + system) of the children this shell waited for so far (bash's times)
cpu() { # VAR: `times` must run in this shell, not in a $(...) subshell
    times >"$OUT/times"
    printf -v "$1" '%s' "$(sed -n 2p "$OUT/times" | awk '{ s = 0; for (i = 1; i <= 2; i++) {
        split($i, a, "m"); sub("s", "", a[2]); s += a[1] * 60 + a[2] } printf "%.2f", s }')"
}
t0=$(now)
cpu c0
xargs -P "$JOBS" -I{} bash -c 'run_one "$1"' _ {} <"$OUT/runs"
t1=$(now)
cpu c1
nsweep=0
if [ -f "$OUT/runs.sweep" ]; then
    nsweep=$(wc -l <"$OUT/runs.sweep")
    xargs -P "$JOBS" -I{} bash -c 'run_one "$1"' _ {} <"$OUT/runs.sweep"
fi
t2=$(now)
cpu c2

# Our average JCT of one run: DIR/POLICY/summary.json (several policies) or DIR/summary.json.
ours() {
    local f=$OUT/$1/$2/summary.json
    [ -f "$f" ] || f=$OUT/$1/summary.json
    sed -n 's/^  "avg_jct_s": \([0-9.eE+-]*\),*$/\1/p' "$f" | head -1
}
# The authors' average JCT of workload W in results-DIR.
theirs() {
    sed -n "s/^ *\"workload-$2\": \([0-9.eE+-]*\),*\$/\1/p" "$DATA/results-$1/summary.json" | head -1
}

# Rows "section<TAB>label<TAB>workload<TAB>ours<TAB>theirs", in print order.
IFS=',' read -r -a pols <<<"$POLICIES"
rows=$OUT/rows
: >"$rows"
for p in "${pols[@]}"; do
    for l in $LOADS; do
        for w in $WORKLOADS; do
            printf 'fig8\t%s %sx\t%s\t%s\t%s\n' "$p" "$l" "$w" "$(ours "load$l-w$w" "$p")" \
                "$(theirs "jobload/$p-$l" "$w")" >>"$rows"
        done
    done
done
if [ "$SWEEPS" = 1 ] && [[ ",$POLICIES," == *,pollux,* ]] && [[ " $LOADS " == *" 1.0 "* ]]; then
    for spec in "30s:iv30s:period/pollux-30s" "1m:load1.0:period/pollux-1m" \
        "2m:iv2m:period/pollux-2m" "4m:iv4m:period/pollux-4m" "8m:iv8m:period/pollux-8m" \
        "~avoidance on:load1.0:inter/avoid" "~off, 0 %:noavoid:inter/noavoid" \
        "~off, 25 %:inter25:inter/inter25" "~off, 50 %:inter50:inter/inter50"; do
        IFS=: read -r lab id res <<<"$spec"
        sec=interval
        [ "${lab#\~}" != "$lab" ] && sec=interference && lab=${lab#\~}
        for w in $WORKLOADS; do
            printf '%s\t%s\t%s\t%s\t%s\n' "$sec" "$lab" "$w" "$(ours "$id-w$w" pollux)" \
                "$(theirs "$res" "$w")" >>"$rows"
        done
    done
fi

verdict=$(awk -F'\t' -v tol="$TOL" -v perw="$PERW" -v wl="$WORKLOADS" -v md="$MD" '
function row(lab, o, t, dir,   d, m) {
    d = (o - t) / t * 100
    m = (d > tol || d < -tol) ? "  outside +-" tol " %" : ""
    if (md) printf "| %s | %.0f | %.0f | %+.1f %%%s |%s\n", lab, o, t, d, m, dir == "" ? "" : " " dir " |"
    else printf "%-28s %10.1f %10.1f %+8.1f %%%s\n", lab, o, t, d, m
    return m != ""
}
function head(title, sweep) {
    if (md) printf "\n%s\n\n| | gsched | authors | diff |%s\n|---|---:|---:|---:|%s\n", title,
        sweep ? " direction vs the step before |" : "", sweep ? "---|" : ""
    else printf "\n%s\n%-28s %10s %10s %9s\n", title, "", "gsched", "authors", "diff"
}
{
    if ($4 == "" || $5 == "") { printf "missing result: %s %s workload-%s\n", $1, $2, $3; bad = 1; next }
    key = $1 SUBSEP $2
    if (!(key in n)) { order[++nk] = key; sec[nk] = $1; lab[nk] = $2 }
    n[key]++; so[key] += $4; st[key] += $5
    if (perw) wrow[key] = wrow[key] sprintf("%s\t%s\t%s\n", $3, $4, $5)
}
END {
    title["fig8"] = "Figure 8: mean over workloads " wl " of the average JCT (s), 16x4 GPUs"
    title["interval"] = "Scheduling interval (pollux, 1.0x)"
    title["interference"] = "Interference (pollux, 1.0x)"
    for (i = 1; i <= nk; i++) {
        k = order[i]
        if (sec[i] != last) { head(title[sec[i]], sec[i] != "fig8"); last = sec[i]; po = pt = "" }
        o = so[k] / n[k]; t = st[k] / n[k]
        if (perw && wrow[k] != "") {
            m = split(wrow[k], ws, "\n")
            for (x = 1; x < m; x++) { split(ws[x], f, "\t"); bad += row("  " lab[i] " workload-" f[1], f[2], f[3], md && sec[i] != "fig8" ? "-" : "") }
        }
        dir = ""
        if (sec[i] != "fig8" && po != "") {
            dou = o > po ? "up" : o < po ? "down" : "flat"
            dth = t > pt ? "up" : t < pt ? "down" : "flat"
            if (dou == dth) dir = sprintf("direction %s, as the authors", dou)
            else { dir = sprintf("direction %s, the authors %s: DIFFERENT", dou, dth); bad++ }
        } else if (md && sec[i] != "fig8") dir = "-"
        bad += row(lab[i], o, t, dir)
        if (!md && dir != "") printf "%-28s %s\n", "", dir
        po = o; pt = t
    }
    print (bad ? "BAD" : "OK") > "/dev/stderr"
}' "$rows" 2>"$OUT/verdict")
echo "$verdict"
echo
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$nmain" -v m="$nsweep" -v j="$JOBS" -v np="${#pols[@]}" \
    -v ca="$c0" -v cb="$c1" -v cc="$c2" \
    'BEGIN{printf "%d runs (%d gsched processes) in %.2f s (%.2f CPU s), %d sweep runs in %.2f s (%.2f CPU s), %d at a time\n", n*np, n, b-a, cb-ca, m, c-b, cc-cb, j}'
if [ "$CHECK" = 1 ] && [ "$(cat "$OUT/verdict")" != OK ]; then
    echo "pollux_parity.sh: outside the tolerance (+-$TOL %) or a sweep going the other way" >&2
    exit 1
fi
exit 0
