#!/usr/bin/env bash
# Local identity (issue 11, defect 1 and What to build 2): without tokens X-Gsched-User was
# trusted as given and every client was an admin, so any local user could submit as root
# and cancel anyone's job.  Now the API is a Unix socket where the kernel names the caller
# (SO_PEERCRED): a job submitted by another Unix user is that user's whatever header it
# sends, it cannot cancel root's job, and TCP without tokens is refused at start unless
# --insecure-tcp.  Parts that need a second Unix user run only as root (else exit 77).
# usage: peercred.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

# 1. TCP without tokens is refused at start (exit 2, saying why), unless --insecure-tcp
out=$(timeout 20 "$bin" serve --cluster 1x1 --db "$tmp/t.db" --listen 127.0.0.1:0 2>&1); rc=$?
check "TCP without tokens refused (exit 2, got $rc)" test "$rc" = 2
check "... naming --tokens and --insecure-tcp" eval '[[ $out == *"--tokens"* && $out == *"--insecure-tcp"* ]]'
d_start insecure --cluster 1x1 --listen 127.0.0.1:0 --insecure-tcp || { bad "start --insecure-tcp"; finish; }
check "--insecure-tcp serves, with a loud warning" grep -q "WARNING: --insecure-tcp" "$DDIR/daemon.log"
check "... and the claimed user is marked as claimed" \
  bash -c "curl -s -H 'X-Gsched-User: mallory' '$SERVER/v1/health' | grep -q '\"identity\": \"claimed\"'"
d_stop

if [ "$(id -u)" != 0 ]; then
  echo "SKIP: not root: the SO_PEERCRED checks need a second Unix user (useradd)"
  [ "$fail" = 0 ] || finish
  exit 77
fi
if ! command -v useradd > /dev/null || ! command -v runuser > /dev/null ||
  ! command -v setpriv > /dev/null; then
  echo "SKIP: useradd, runuser or setpriv missing"
  exit 77
fi

# a Unix user for the test, removed at exit if we created it
U=gst-peer$$
U=${U:0:30}
created=""
cleanup_user() { [ -n "$created" ] && userdel -r "$U" > /dev/null 2>&1; }
trap 'cleanup_user; d_cleanup' EXIT
if ! id "$U" > /dev/null 2>&1; then
  useradd -M -d /nonexistent -s /usr/sbin/nologin "$U" || { bad "useradd $U"; finish; }
  created=1
fi
# the user must reach the socket and run the CLI: a world-readable copy of the binary
chmod 711 "$tmp"
cp "$bin" "$tmp/gsched" && chmod 755 "$tmp/gsched"
ub=$tmp/gsched
as_u() { runuser -u "$U" -- "$@"; }

# a root daemon that runs jobs as their owners (not --single-user): every local user may
# connect; root's own jobs need --allow-root-jobs (tests/security/privsep.sh)
D_MULTIUSER=1 d_start peer --cluster 1x2 --grace 1s --allow-root-jobs || { bad "daemon start"; finish; }
check "a root daemon's socket is 0666 (every local user may connect)" \
  test "$(stat -c %a "$SOCK")" = 666

# root's job
rid=$(gsub -- sleep 60)
check "root submits over the socket ($rid)" test -n "$rid"
check "root's job is root's" test "$(field "$rid" User)" = root

# the other user's job, through the socket, whatever it claims
uid_=$(as_u "$ub" submit --parsable --server "unix:$SOCK" -- sleep 60 2>&1)
check "$U submits over the socket ($uid_)" test -n "$uid_" -a "${uid_//[0-9]/}" = ""
check "that job is owned by $U" test "$(field "$uid_" User)" = "$U"
hid=$(as_u curl -s --unix-socket "$SOCK" -H 'X-Gsched-User: root' -H 'X-Gsched-Client: 1' \
        -H 'Content-Type: application/json' -d '{"command": ["sleep", "60"]}' \
        http://localhost/v1/jobs | sed -n 's/.*"id": *\([0-9]*\).*/\1/p' | head -1)
check "a job sent with 'X-Gsched-User: root' exists ($hid)" test -n "$hid"
check "... and is owned by $U, not root" test "$(field "$hid" User)" = "$U"
out=$(as_u curl -s --unix-socket "$SOCK" -H 'X-Gsched-User: root' http://localhost/v1/health)
check "the header does not make $U root or admin" \
  eval '[[ $out == *"\"user\": \"$U\""* && $out == *"\"admin\": false"* && $out == *"\"identity\": \"peer\""* ]]'
code=$(as_u curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" -H 'X-Gsched-Client: 1' \
         -H 'Content-Type: application/json' -d '{"command": "true", "user": "root"}' \
         http://localhost/v1/jobs)
check "$U may not submit with \"user\": \"root\" (403, got $code)" test "$code" = 403

# the other user cannot cancel (or see) root's job; root can cancel theirs
as_u "$ub" cancel "$rid" --server "unix:$SOCK" > "$tmp/c.out" 2>&1; rc=$?
check "$U cannot cancel root's job (exit 4 'no job', got $rc)" test "$rc" = 4
check "root's job is still active" eval '[ "$(state "$rid")" = RUNNING ] || [ "$(state "$rid")" = PENDING ]'
out=$(as_u "$ub" queue --all --server "unix:$SOCK" 2>&1)
check "$U's queue lists only its own jobs" eval '! printf "%s\n" "$out" | grep -qw root'
check "root (admin) cancels $U's job" g cancel "$uid_"
check "... which ends CANCELLED" wait_state "$uid_" CANCELLED 30

# cross-site checks stay in force on the socket (no Host port there: curl sends localhost)
code=$(as_u curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" -H 'X-Gsched-Client: 1' \
         -H 'Content-Type: application/json' -H 'Origin: http://evil.example' \
         -d '{"command": "true"}' http://localhost/v1/jobs)
check "a foreign Origin is refused on the socket too (403, got $code)" test "$code" = 403
code=$(as_u curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" \
         -H 'Content-Type: application/json' -d '{"command": "true"}' http://localhost/v1/jobs)
check "X-Gsched-Client is required on the socket too (403, got $code)" test "$code" = 403
g cancel "$rid" > /dev/null 2>&1
g cancel "$hid" > /dev/null 2>&1
check "daemon stops cleanly" d_stop
check "the socket is removed at stop" test ! -e "$SOCK"

# a root daemon in --single-user mode runs every job as root: only root may connect
d_start single --cluster 1x1 || { bad "daemon start"; finish; }
check "a --single-user root daemon's socket is 0600" test "$(stat -c %a "$SOCK")" = 600
code=$(as_u curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" http://localhost/v1/health)
check "... which $U cannot connect to (got '$code')" test "$code" = 000
check "daemon stops cleanly" d_stop

# a daemon of a normal user is single-user: its socket is 0600
ud=$tmp/udaemon
mkdir -p "$ud" && chown "$U" "$ud"
# setpriv execs the daemon, so $! is its pid (runuser would stay in between and a TERM to it
# would leave the daemon running, and the user undeletable)
( exec setpriv --reuid="$U" --regid="$(id -g "$U")" --init-groups "$ub" serve --cluster 1x1 \
    --db "$ud/g.db" --socket "$ud/g.sock" --log-dir "$ud/logs" > "$ud/log" 2>&1 ) &
upid=$!
DPIDS="$DPIDS $upid"
for _ in $(seq 200); do [ -S "$ud/g.sock" ] && break; kill -0 "$upid" 2>/dev/null || break; sleep 0.05; done
[ -S "$ud/g.sock" ] || sed 's/^/# daemon: /' "$ud/log"
check "a non-root daemon's socket is 0600 (got $(stat -c %a "$ud/g.sock" 2>/dev/null))" \
  test "$(stat -c %a "$ud/g.sock" 2>/dev/null)" = 600
out=$(as_u curl -s --unix-socket "$ud/g.sock" http://localhost/v1/health)
check "its own user is its admin" eval '[[ $out == *"\"admin\": true"* ]]'
kill -TERM "$upid"
for _ in $(seq 100); do kill -0 "$upid" 2>/dev/null || break; sleep 0.05; done
finish
