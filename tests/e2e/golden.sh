#!/usr/bin/env bash
# Golden tests: run each tests/golden/NNNN-*/ case and compare jobs.csv byte for byte.
# usage: golden.sh GSCHED_BIN SOURCE_DIR [--update]
set -u
bin=$1 src=$2 update=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for d in "$src"/tests/golden/*/; do
  name=$(basename "$d")
  # shellcheck disable=SC2046
  if ! "$bin" sim $(cat "$d/args") --trace "$d/trace.csv" --out "$tmp/$name" -q --progress never; then
    echo "not ok - $name: gsched sim failed"; fail=$((fail+1)); continue
  fi
  if [ "$update" = "--update" ]; then cp "$tmp/$name/jobs.csv" "$d/expected-jobs.csv"; fi
  if diff -u "$d/expected-jobs.csv" "$tmp/$name/jobs.csv"; then
    echo "ok - $name"; pass=$((pass+1))
  else
    echo "not ok - $name: jobs.csv differs"; fail=$((fail+1))
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
