#!/usr/bin/env bash
# Issue 11 item 15: docs/examples/bert.yaml and pytorch-ddp.yaml named workdirs that do not
# exist; the daemon accepted them, the jobs waited, then failed 126 at launch.  Now the daemon
# checks a spec's workdir at submit (400 naming the field: missing, or not a directory; a dry
# run too), and every job spec in docs/examples is submittable as its comments say (from the
# repository root): each one's dry run is answered "would start now" or "would wait".
# usage: examples.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"


# a cluster every example fits: V100s (bert.yaml), nodes of 4 GPUs (2 tasks x 4)
d_start ex --cluster 2x4:V100 || exit 1
n=0
for f in "$src"/docs/examples/*.yaml "$src"/docs/examples/*.json; do
  [ -f "$f" ] || continue
  n=$((n+1))
  # as documented: from the repository root
  expect 0 "would (start now|start by|wait)" -- sh -c 'cd "$1" && shift && exec "$@"' sh "$src" \
    "$bin" submit "$f" --dry-run --server "$SERVER"
done
check "found the examples" [ "$n" -ge 3 ]

# workdir checked at submit: missing, a file, and the dry run too; no job is created
printf 'name: wd\ncommand: "true"\nworkdir: %s\n' "$tmp/no-such-dir" > "$tmp/wd-missing.yaml"
printf 'name: wd\ncommand: "true"\nworkdir: %s\n' "$tmp/ex/daemon.log" > "$tmp/wd-file.yaml"
printf 'name: wd\ncommand: "true"\nworkdir: %s\n' "$tmp" > "$tmp/wd-ok.yaml"
expect 2 "workdir.*No such file or directory" -- g submit "$tmp/wd-missing.yaml"
expect 2 "workdir.*not a directory" -- g submit "$tmp/wd-file.yaml"
expect 2 "workdir.*No such file or directory" -- g submit "$tmp/wd-missing.yaml" --dry-run
code() {
  dcurl -s -o "$tmp/body" -w '%{http_code}' -X POST -H 'Content-Type: application/yaml' \
    -H 'X-Gsched-Client: 1' --data-binary "@$1" "$URL/v1/jobs"
}
check "API: 400 for a missing workdir" [ "$(code "$tmp/wd-missing.yaml")" = 400 ]
check "API: the problem names the field" grep -q '"field": *"workdir"' "$tmp/body"
check "API: 400 for a workdir that is a file" [ "$(code "$tmp/wd-file.yaml")" = 400 ]
none() { [ "$(g queue --all --no-headers 2>/dev/null | wc -l)" -eq 0 ]; }
check "no job was created by the refused submits" none
expect 0 "Submitted job 1" -- g submit "$tmp/wd-ok.yaml"
check "a job with an existing workdir runs" wait_state 1 DONE 20
check "SIGTERM stops cleanly" d_stop
finish
