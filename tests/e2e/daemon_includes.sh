#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# daemon_includes.sh - the include graph keeps its layers (no build needed).
#
# Checks, over every project header and source in src/ and include/:
#   1. no include cycle (tsort over the "#include \"...\"" edges);
#   2. the HTTP side of the daemon (http.c, metrics.c) and the shared header
#      gsd.h never reach gsd_sched.h (the scheduler thread's state), directly
#      or not; the executor interface and its backends (exec.h, exec*.c)
#      never reach the daemon's core (gsd.h, gsd_sched.h, store.h): an
#      executor reports through its callback only;
#   3. the CLI (src/cli) includes nothing from src/daemon but daemon.h, the
#      daemon's public API.
# Usage: daemon_includes.sh GSCHED_BIN PROJECT_SOURCE_DIR (the binary is unused).
set -u
root=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 1
fail=0

# Resolve '#include "X"' seen in file F: F's directory, include/, then src/*/.
resolve() {
    local dir=$1 x=$2 c
    for c in "$dir/$x" "include/$x" src/*/"$x"; do
        if [ -f "$c" ]; then
            printf '%s\n' "${c#./}"
            return
        fi
    done
}

edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
while IFS= read -r f; do
    dir=$(dirname "$f")
    while IFS= read -r x; do
        t=$(resolve "$dir" "$x")
        [ -n "$t" ] && printf '%s %s\n' "$f" "$t" >> "$edges"
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find src include -name '*.[ch]' | sort)

# 1. cycles
if ! tsort "$edges" > /dev/null 2> "$edges.err"; then
    echo "FAIL: include cycle:" >&2
    cat "$edges.err" >&2
    fail=1
fi
rm -f "$edges.err"

# Everything file $1 reaches through includes (not itself).
reach() {
    local todo=("$1") seen=" $1 " n t
    while [ ${#todo[@]} -gt 0 ]; do
        n=${todo[0]}
        todo=("${todo[@]:1}")
        while read -r t; do
            case "$seen" in *" $t "*) continue ;; esac
            seen="$seen$t "
            todo+=("$t")
            printf '%s\n' "$t"
        done < <(awk -v n="$n" '$1 == n { print $2 }' "$edges")
    done
}

# 2. the HTTP side does not see the scheduler's internals; executors do not see the core
for f in src/daemon/http.c src/daemon/metrics.c src/daemon/gsd.h; do
    bad=$(reach "$f" | grep -E '^src/daemon/gsd_sched\.h$')
    if [ -n "$bad" ]; then
        echo "FAIL: $f reaches $(echo $bad) (scheduler thread only)" >&2
        fail=1
    fi
done
for f in src/daemon/exec.h src/daemon/exec*.c; do
    bad=$(reach "$f" | grep -E '^src/daemon/(gsd|gsd_sched|store)\.h$')
    if [ -n "$bad" ]; then
        echo "FAIL: $f reaches $(echo $bad) (an executor knows nothing of the daemon's core)" >&2
        fail=1
    fi
done

# 3. the CLI uses the daemon through daemon.h only
bad=$(awk '$1 ~ /^src\/cli\// && $2 ~ /^src\/daemon\// && $2 != "src/daemon/daemon.h"' "$edges")
if [ -n "$bad" ]; then
    echo "FAIL: the CLI includes daemon internals (use daemon.h):" >&2
    echo "$bad" >&2
    fail=1
fi

# the check itself must have seen the graph it guards
grep -q '^src/daemon/http.c src/daemon/gsd.h$' "$edges" || {
    echo "FAIL: no edge http.c -> gsd.h: the scan is broken" >&2
    fail=1
}
[ $fail -eq 0 ] && echo "include graph: $(wc -l < "$edges") edges, no cycle, layers kept"
exit $fail
