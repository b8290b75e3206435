#!/usr/bin/env bash
# A stale per-user socket hid the root daemon (issue 11 review, LOW): when a user's own
# daemon was killed -9, its /tmp/gsched-UID/gsched.sock stayed, and that user's
# `gsched queue` exited 3 although a root daemon served /run/gsched/gsched.sock.  Now, with
# no --server / GSCHED_SERVER, the CLI falls back to the system socket when the per-user one
# refuses connections, and an error names the socket(s) it tried.
# Root only (a second Unix user, and the system socket /run/gsched/gsched.sock); else exit 77.
# usage: sock_stale.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
. "$src/tests/e2e/lib/root.sh"
need_root "a second Unix user and a root daemon on /run/gsched/gsched.sock" sock_stale useradd userdel runuser setpriv
if [ -e /run/gsched/gsched.sock ]; then
  echo "SKIP: /run/gsched/gsched.sock exists (a daemon of this machine's; not ours to replace)"
  exit 77
fi
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

U=gst-stl$$
U=${U:0:30}
made="" rundir=""
[ -d /run/gsched ] || rundir=1
udir=""
cleanup() {
  d_cleanup
  [ -n "$udir" ] && rm -rf "$udir"
  [ -n "$rundir" ] && rmdir /run/gsched 2> /dev/null
  [ -n "$made" ] && userdel "$U" > /dev/null 2>&1
  return 0
}
trap cleanup EXIT
if ! id "$U" > /dev/null 2>&1; then
  useradd -M -d /nonexistent -s /bin/sh "$U" || { echo "SKIP: useradd $U failed"; exit 77; }
  made=1
fi
uuid=$(id -u "$U")
udir=/tmp/gsched-$uuid
if [ -e "$udir" ]; then
  echo "SKIP: $udir already exists (not ours)"
  udir=""
  exit 77
fi
chmod 711 "$tmp"
cp "$bin" "$tmp/gsched" && chmod 755 "$tmp/gsched"
ub=$tmp/gsched
as_u() { env -u XDG_RUNTIME_DIR -u GSCHED_SERVER runuser -u "$U" -- "$@"; }
bg_as() { local u=$1; shift; exec setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups "$@"; }

# the user's own daemon, killed -9: its socket stays behind
ud=$tmp/own
mkdir -p "$ud" && chown "$U" "$ud"
bg_as "$U" env -u XDG_RUNTIME_DIR "$ub" serve --cluster 1x1 --db "$ud/g.db" --log-dir "$ud/logs" \
  > "$ud/log" 2>&1 &
upid=$!
DPIDS="$DPIDS $upid"
for _ in $(seq 200); do [ -S "$udir/gsched.sock" ] && break; kill -0 "$upid" 2>/dev/null || break; sleep 0.05; done
check "the user's daemon serves on $udir/gsched.sock" as_u "$ub" queue
kill -KILL "$upid"
wait "$upid" 2> /dev/null
check "its socket stays after kill -9" test -S "$udir/gsched.sock"

# a root daemon on the system socket (the default of root, multi-user)
rd=$tmp/root
mkdir -p "$rd"
env -u XDG_RUNTIME_DIR "$bin" serve --cluster 1x1 --db "$rd/g.db" --log-dir "$rd/logs" \
  > "$rd/log" 2>&1 &
rpid=$!
DPIDS="$DPIDS $rpid"
for _ in $(seq 200); do [ -S /run/gsched/gsched.sock ] && break; kill -0 "$rpid" 2>/dev/null || break; sleep 0.05; done
check "a root daemon serves on /run/gsched/gsched.sock" test -S /run/gsched/gsched.sock

out=$(as_u "$ub" queue 2>&1); rc=$?
echo "# queue with a stale own socket (exit $rc): $out"
check "the user's queue reaches the root daemon past its stale socket (exit 0, got $rc)" test "$rc" = 0
id=$(as_u "$ub" submit --parsable -- true 2>&1)
check "... and a submit lands there, as the user ($id)" \
  eval '[ -n "$id" ] && [ "${id//[0-9]/}" = "" ] && "$bin" describe job "$id" --server unix:/run/gsched/gsched.sock | grep -q "User: *$U"'
out=$(as_u "$ub" queue --server "unix:$udir/gsched.sock" 2>&1); rc=$?
check "an explicit --server is not replaced (exit 3, got $rc)" test "$rc" = 3

# both gone: the error names the system socket and the stale one
kill -TERM "$rpid"
for _ in $(seq 200); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.05; done
out=$(as_u "$ub" queue 2>&1); rc=$?
echo "# queue with no daemon (exit $rc): $out"
check "no daemon at all: exit 3 (got $rc)" test "$rc" = 3
check "... naming both sockets" \
  eval '[[ $out == *"/run/gsched/gsched.sock"* && $out == *"$udir/gsched.sock"* ]]'
finish
