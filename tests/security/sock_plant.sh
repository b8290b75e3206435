#!/usr/bin/env bash
# Planted per-user socket (issue 11 review, HIGH): a non-root user's CLI without
# $XDG_RUNTIME_DIR uses /tmp/gsched-UID/gsched.sock.  Another local user could create that
# directory first (0755) with a world-connectable socket of its own; the victim's
# `GSCHED_TOKEN=... gsched submit --export=ALL ...` then sent that user its token and its
# whole environment, and printed the impostor's "Submitted job N".  Now the CLI uses a socket
# only when the socket and its directory belong to the caller (or root) and the directory is
# writable by nobody else, refusing with a message otherwise and never connecting; and it
# sends no Authorization header over a Unix socket at all.
# Root only (two Unix users, made with useradd and removed at exit); else exit 77.
# usage: sock_plant.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: not root: planting a socket for another user needs two Unix users (useradd)"
  exit 77
fi
for t in useradd userdel runuser setpriv; do
  command -v "$t" > /dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

V=gst-vic$$ E=gst-evl$$
V=${V:0:30} E=${E:0:30}
made=""
pdir=""
cleanup() {
  [ -n "$pdir" ] && rm -rf "$pdir"
  for u in $made; do userdel "$u" > /dev/null 2>&1; done
  d_cleanup
}
trap cleanup EXIT
for u in "$V" "$E"; do
  if ! id "$u" > /dev/null 2>&1; then
    useradd -M -d /nonexistent -s /bin/sh "$u" || { echo "SKIP: useradd $u failed"; exit 77; }
    made="$made $u"
  fi
done
vuid=$(id -u "$V")
chmod 711 "$tmp"
cp "$bin" "$tmp/gsched" && chmod 755 "$tmp/gsched"
ub=$tmp/gsched
# the victim's CLI as in the report: no XDG_RUNTIME_DIR, no --server, a token in the env
as_v() { env -u XDG_RUNTIME_DIR -u GSCHED_SERVER runuser -u "$V" -- "$@"; }
as_e() { runuser -u "$E" -- "$@"; }
# a daemon in the background as user $1: setpriv execs it (its pid is $!, so it can be stopped)
bg_as() { local u=$1; shift; exec setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups "$@"; }

# the other user plants /tmp/gsched-VUID/ (0755) with a connectable socket of its own daemon
pdir=/tmp/gsched-$vuid
if [ -e "$pdir" ]; then
  echo "SKIP: $pdir already exists (left by someone else; not ours to remove)"
  pdir=""
  exit 77
fi
as_e mkdir -m 755 "$pdir" || { bad "mkdir $pdir as $E"; finish; }
ed=$tmp/evil
mkdir -p "$ed" && chown "$E" "$ed"
bg_as "$E" "$ub" serve --cluster 1x1 --db "$ed/g.db" --socket "$pdir/gsched.sock" --log-dir "$ed/logs" \
  > "$ed/log" 2>&1 &
epid=$!
DPIDS="$DPIDS $epid"
for _ in $(seq 200); do [ -S "$pdir/gsched.sock" ] && break; kill -0 "$epid" 2>/dev/null || break; sleep 0.05; done
check "the impostor's socket is up at $pdir/gsched.sock" test -S "$pdir/gsched.sock"
as_e chmod 777 "$pdir/gsched.sock"

out=$(as_v env GSCHED_TOKEN=victim.secret-token-0123456789 SECRET_OF_VICTIM=hunter2 \
        "$ub" submit --export=ALL -- true 2>&1); rc=$?
echo "# victim's submit (exit $rc): $out"
check "the victim's CLI refuses the planted socket (exit 3, got $rc)" test "$rc" = 3
check "... saying why" eval '[[ $out == *"refusing to use the socket $pdir/gsched.sock"* && $out == *"owned by another user"* ]]'
check "... and does not print the impostor's answer" eval '[[ $out != *"Submitted job"* ]]'
q=$(as_e "$ub" queue --all --server "unix:$pdir/gsched.sock" 2>&1)
check "the impostor received no job" eval '! printf "%s\n" "$q" | grep -qw "$V"'
out=$(as_v "$ub" queue 2>&1); rc=$?
check "queue refuses it too (exit 3, got $rc)" test "$rc" = 3
kill -TERM "$epid" 2> /dev/null
for _ in $(seq 100); do kill -0 "$epid" 2>/dev/null || break; sleep 0.05; done
rm -rf "$pdir"

# the victim's own daemon, but its directory made writable by others: refused as well (anyone
# could have swapped the socket)
vd=$tmp/vic
mkdir -p "$vd" && chown "$V" "$vd"
bg_as "$V" env -u XDG_RUNTIME_DIR "$ub" serve --cluster 1x1 --db "$vd/g.db" --log-dir "$vd/logs" > "$vd/log" 2>&1 &
vpid=$!
DPIDS="$DPIDS $vpid"
for _ in $(seq 200); do [ -S "$pdir/gsched.sock" ] && break; kill -0 "$vpid" 2>/dev/null || break; sleep 0.05; done
check "the victim's own daemon serves on $pdir/gsched.sock" test -S "$pdir/gsched.sock"
check "... and its CLI uses it" as_v "$ub" queue
chmod 777 "$pdir"
out=$(as_v "$ub" queue 2>&1); rc=$?
check "a per-user directory writable by others is refused (exit 3, got $rc)" \
  eval '[ "$rc" = 3 ] && [[ $out == *"writable by group or others"* ]]'
chmod 700 "$pdir"
kill -TERM "$vpid" 2> /dev/null
for _ in $(seq 100); do kill -0 "$vpid" 2>/dev/null || break; sleep 0.05; done
rm -rf "$pdir"

# no Authorization over a Unix socket: a listener of the victim's own records what arrives
py=""
for p in /usr/bin/python3 /usr/local/bin/python3; do
  [ -x "$p" ] && as_v "$p" -c 1 2> /dev/null && py=$p && break
done
if [ -n "$py" ]; then
  as_v mkdir -m 700 "$pdir"
  cat > "$tmp/rec.py" << 'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(1); s.settimeout(20)
c, _ = s.accept(); c.settimeout(5); data = b""
try:
    while b"\r\n\r\n" not in data:
        b = c.recv(65536)
        if not b: break
        data += b
except Exception: pass
open(sys.argv[2], "wb").write(data)
c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\nConnection: close\r\n\r\n{\"jobs\":[]}")
c.close()
EOF
  chmod 644 "$tmp/rec.py"
  rec=$tmp/rec && mkdir -p "$rec" && chown "$V" "$rec"
  bg_as "$V" "$py" "$tmp/rec.py" "$pdir/gsched.sock" "$rec/req" &
  rpid=$!
  DPIDS="$DPIDS $rpid"
  for _ in $(seq 100); do [ -S "$pdir/gsched.sock" ] && break; sleep 0.05; done
  as_v env GSCHED_TOKEN=victim.secret-token-0123456789 "$ub" queue > /dev/null 2>&1
  wait "$rpid" 2> /dev/null
  check "the CLI reached its own socket" test -s "$rec/req"
  check "... and sent no Authorization header over it" eval '! grep -qi "^Authorization:" "$rec/req"'
  rm -rf "$pdir"
else
  echo "# no python3 the test user can run: the no-Authorization-over-the-socket part is not checked"
fi
finish
