#!/usr/bin/env bash
# Issue 11 item 12 (part): a tokens file readable by others was accepted, the database (every
# spec's env) and the state directory (every job's logs) were created 0644 / 0755, and a
# 1-character token secret was accepted.  Now: a tokens file with any group/other permission
# bit makes `gsched serve` exit 2 naming the file and its mode; a state directory and database
# the daemon creates are 0700 and 0600 (and the -wal / -shm / -lock files 0600) even under
# umask 000; `gsched token hash --token` refuses a secret under 16 characters.
# usage: perms.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

mode() { stat -c %a "$1" 2>/dev/null; }
A=alice.alice-secret-0123456789
tok=$tmp/tokens
"$bin" token hash --user alice --token "$A" --iterations 1000 > "$tok" 2>/dev/null

# refused: readable by others (0644) or by the group (0640), exit 2, file and mode named
for m in 644 640 604; do
  chmod "$m" "$tok"
  mkdir -p "$tmp/r$m"
  out=$(cd "$tmp/r$m" && timeout 10 "$bin" serve --db "$tmp/r$m/gsched.db" --listen 127.0.0.1:0 \
          --cluster 1x1 --tokens "$tok" 2>&1); rc=$?
  if [ "$rc" = 2 ] && [[ $out == *"$tok"* ]] && [[ $out == *"mode 0$m"* ]]; then
    ok "tokens file mode 0$m refused (exit 2, file and mode named)"
  else
    bad "tokens file mode 0$m: expected exit 2 naming $tok and mode 0$m, got exit $rc: $out"
  fi
done

# accepted at 0600; what the daemon creates is private even under umask 000
chmod 600 "$tok"
umask 000
d_start priv --cluster 1x1 --tokens "$tok" --listen 127.0.0.1:0 || exit 1
umask 022
"$bin" submit --server "$SERVER" --token "$A" -- true > /dev/null 2>&1
for _ in $(seq 100); do [ -e "$DDIR/gsched.db-wal" ] && [ -e "$DDIR/gsched.db-shm" ] && break; sleep 0.05; done
check "state directory 0700" test "$(mode "$DDIR/gsched.d")" = 700
check "runs/ 0700" test "$(mode "$DDIR/gsched.d/runs")" = 700
check "logs/ 0700" test "$(mode "$DDIR/logs")" = 700
for f in gsched.db gsched.db-wal gsched.db-shm gsched.db-lock; do
  check "$f 0600 (is $(mode "$DDIR/$f"))" test "$(mode "$DDIR/$f")" = 600
done
check "graceful stop" d_stop

# short secrets are refused where a raw secret is accepted
out=$("$bin" token hash --user alice --token alice.x 2>&1); rc=$?
check "token hash refuses a 1-character secret (exit $rc: $out)" test "$rc" = 2
out=$("$bin" token hash --user alice --token alice.0123456789abcde 2>&1); rc=$?
check "token hash refuses a 15-character secret" test "$rc" = 2
out=$("$bin" token hash --user alice --token alice.0123456789abcdef --iterations 1000 2>&1); rc=$?
check "token hash takes a 16-character secret" test "$rc" = 0
finish
