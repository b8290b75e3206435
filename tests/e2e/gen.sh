#!/usr/bin/env bash
# gsched gen: a generated workload piped into gsched sim, the same bytes for the same seed,
# the offered load it reports, --help, and its input errors (exit 2).
# usage: gen.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "not ok - $*"; exit 1; }

"$bin" gen jobs=300,load=0.9,mix=gavel --cluster 4x8 --seed 5 2> "$tmp/err" |
  "$bin" sim -q --cluster 4x8 --trace /dev/stdin --policy fifo,tiresias-las --out "$tmp/o" ||
  fail "gen | sim exit $?"
for p in fifo tiresias-las; do
  grep -q '"jobs_done": 300' "$tmp/o/$p/summary.json" || fail "$p: not every job done"
done
grep -q 'offered load 0\.[0-9]* of 32 GPUs' "$tmp/err" || { cat "$tmp/err"; fail "summary line"; }
echo "ok - gsched gen | gsched sim runs every generated job"

"$bin" gen jobs=300,load=0.9,mix=gavel --cluster 4x8 --seed 5 -o "$tmp/a.csv" -q || fail "gen -o"
"$bin" gen jobs=300,load=0.9,mix=gavel --cluster 4x8 --seed 5 -q > "$tmp/b.csv" || fail "gen stdout"
"$bin" gen jobs=300,load=0.9,mix=gavel --cluster 4x8 --seed 6 -q > "$tmp/c.csv" || fail "gen seed 6"
cmp -s "$tmp/a.csv" "$tmp/b.csv" || fail "same seed, different bytes"
cmp -s "$tmp/a.csv" "$tmp/c.csv" && fail "seeds 5 and 6 gave the same trace"
head -2 "$tmp/a.csv" | grep -q '^# gsched gen jobs=300,load=0.9,mix=gavel --seed 5 (32 GPUs)$' ||
  fail "provenance line"
head -2 "$tmp/a.csv" | grep -q '^id,submit,duration,gpus,model$' || fail "header"
[ "$(grep -c '^[0-9]' "$tmp/a.csv")" = 300 ] || fail "300 jobs"
# the summary's digest is the file's
sha=$(sha256sum "$tmp/a.csv" | cut -d' ' -f1)
"$bin" gen jobs=300,load=0.9,mix=gavel --cluster 4x8 --seed 5 -o /dev/null 2>&1 | grep -q "sha256 $sha" ||
  fail "sha256 in the summary"
"$bin" sim -q --cluster 4x8 --trace "$tmp/a.csv" --policy fifo --out "$tmp/o2" || fail "sim file"
cmp -s "$tmp/o/fifo/jobs.csv" "$tmp/o2/jobs.csv" || fail "piped and file runs differ"
echo "ok - the same spec, cluster and seed write the same bytes"

"$bin" gen jobs=50,rate=20,users=3,vcs=2,mix=trace:"$src/data/examples/mini.csv" -q > "$tmp/t.csv" ||
  fail "trace mix"
head -2 "$tmp/t.csv" | grep -q '^id,submit,duration,gpus,gpus_per_task,model,user,vc$' ||
  fail "trace mix header"
"$bin" sim -q --cluster 2x8 --trace "$tmp/t.csv" --policy fifo --out "$tmp/o3" || fail "sim trace mix"
echo "ok - mix=trace:FILE with users and VCs"

"$bin" gen --help | grep -q 'arrivals=poisson|trace:FILE' || fail "--help"
"$bin" help | grep -q '^  gen ' || fail "gen in gsched help"
"$bin" gen jobs=10,lod=0.5 --cluster 8 > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "spec:1:9: unknown key 'lod' (did you mean 'load'?)" "$tmp/err" ||
  { cat "$tmp/err"; fail "unknown key: exit $rc"; }
"$bin" gen jobs=10,load=0.5 > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "give --cluster" "$tmp/err" || { cat "$tmp/err"; fail "load without cluster: exit $rc"; }
"$bin" gen jobs=10 --cluster 8 --seed -1 > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "not a non-negative integer" "$tmp/err" || fail "--seed -1: exit $rc"
"$bin" gen > /dev/null 2>&1; [ $? = 2 ] || fail "no spec"
echo "ok - input errors exit 2 with the position"

# every command of docs/workload-generator.md's sh blocks runs as written (from a root whose
# build/gsched and data/ are this build's and the repository's)
mkdir -p "$tmp/root/build" && ln -s "$bin" "$tmp/root/build/gsched" && ln -s "$src/data" "$tmp/root/data"
n=0
while IFS= read -r line; do
  n=$((n + 1))
  (cd "$tmp/root" && bash -c "set -o pipefail; $line" > "$tmp/doc.out" 2>&1) ||
    { cat "$tmp/doc.out"; fail "docs/workload-generator.md: $line"; }
done < <(awk '/^```sh/{on=1; next} /^```/{on=0} on && /^build\/gsched/' "$src/docs/workload-generator.md")
[ $n -ge 6 ] || fail "found only $n commands in docs/workload-generator.md"
[ "$(grep -c '^[0-9]' "$tmp/root/scale.csv")" = 1000000 ] || fail "the scale workload"
echo "ok - the $n commands of docs/workload-generator.md run as written"
