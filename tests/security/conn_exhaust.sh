#!/usr/bin/env bash
# Connection exhaustion (issue 11, defect 5): 256 idle half-open connections locked every
# client out (no header timeout, no per-client cap).  Now a connection must send its request
# head within --header-timeout (default 5 s; trickling bytes does not extend it), a client
# address holds at most --max-conn-per-client connections, 1/8 of --max-connections is kept
# for clients that send a request at once, the Unix socket has its own listener, and a
# connection silent for --idle-timeout after its head is closed.
# Loopback only; the flood is a python3 helper bounded in time, stopped by its PID.
# usage: conn_exhaust.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

if ! command -v python3 > /dev/null; then
  echo "SKIP: python3 is not installed (it opens the idle connections)"
  exit 77
fi

# flood.py PORT N TRICKLE SECS OUT: open N connections to 127.0.0.1:PORT (the first TRICKLE
# of them send a partial request head, one byte a second: slow loris; the others send
# nothing), touch OUT.ready, then record for SECS seconds when the daemon closes each one.
# OUT gets: opened N, closed C, still-open O, max-close-seconds S (from the ready time)
cat > "$tmp/flood.py" <<'EOF'
import socket, sys, time
port, n, trickle, secs, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
socks = []
for i in range(n):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
    except OSError:
        continue
    s.setblocking(False)
    if i < trickle:
        try:
            s.send(b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n")
        except OSError:
            pass
    socks.append([s, i < trickle, None])
open(out + ".ready", "w").close()
t0 = time.time()
last_trickle = t0
while time.time() - t0 < secs and any(c[2] is None for c in socks):
    now = time.time()
    tick = now - last_trickle >= 1.0
    if tick:
        last_trickle = now
    for c in socks:
        if c[2] is not None:
            continue
        try:
            d = c[0].recv(4096)
            if d == b"":
                c[2] = now - t0
                continue
        except BlockingIOError:
            pass
        except OSError:
            c[2] = now - t0
            continue
        if c[1] and tick:
            try:
                c[0].send(b"X")
            except OSError:
                c[2] = now - t0
    time.sleep(0.05)
closed = [c[2] for c in socks if c[2] is not None]
with open(out, "w") as f:
    f.write("opened %d closed %d open %d max %.1f\n" % (len(socks), len(closed), len(socks) - len(closed), max(closed) if closed else -1))
EOF

d_start flood --cluster 1x1 --listen 127.0.0.1:0 --insecure-tcp --idle-timeout 3 ||
  { bad "daemon start"; finish; }
port=${SERVER##*:}

# 300 connections from one address, 40 of them slow loris: more than the 256 of the old
# lock-out, more than the per-client cap (64) and the head-waiting pool (224)
python3 "$tmp/flood.py" "$port" 300 40 15 "$tmp/fl.out" 2> "$tmp/fl.err" & fpid=$!
for _ in $(seq 300); do [ -e "$tmp/fl.out.ready" ] && break; kill -0 "$fpid" 2>/dev/null || break; sleep 0.1; done
check "the flood is in place" test -e "$tmp/fl.out.ready"

# a normal client still gets an answer within a few seconds, on TCP and on the socket
t0=$(date +%s%N)
out=$(timeout 8 "$bin" queue --server "$SERVER" 2>&1); rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "TCP client answered during the flood (rc $rc, ${ms} ms): $out" test "$rc" = 0 -a "$ms" -lt 5000
out=$(timeout 8 "$bin" queue --server "unix:$SOCK" 2>&1); rc=$?
check "socket client answered during the flood (rc $rc)" test "$rc" = 0
id=$(timeout 8 "$bin" submit --parsable --server "$SERVER" -- true 2>&1)
check "a submit over TCP goes through during the flood ($id)" test -n "$id" -a "${id//[0-9]/}" = ""

# every idle or trickling connection is closed after the header timeout (5 s) + slack
for _ in $(seq 250); do [ -s "$tmp/fl.out" ] && break; kill -0 "$fpid" 2>/dev/null || break; sleep 0.1; done
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null
res=$(cat "$tmp/fl.out" 2>/dev/null)
echo "# flood: $res"; [ -s "$tmp/fl.err" ] && sed "s/^/# /" "$tmp/fl.err"
read -r _ opened _ closed _ still _ maxs <<< "${res:-opened 0 closed 0 open 1 max -1}"
check "connections were opened ($opened)" test "${opened:-0}" -gt 200
check "every idle / slow-loris connection was closed (still open: $still)" test "$still" = 0
check "... within 8 s of the flood (slowest: ${maxs}s)" awk -v m="$maxs" 'BEGIN { exit !(m >= 0 && m <= 8) }'

# idle timeout: a complete head announcing a body that never comes is closed after 3 s
if exec 3<> "/dev/tcp/127.0.0.1/$port"; then
  printf 'POST /v1/jobs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-Gsched-Client: 1\r\nContent-Length: 100\r\n\r\n{' >&3
  t0=$(date +%s%N)
  timeout 12 cat <&3 > /dev/null
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  exec 3<&-
  check "a stalled body is closed by the idle timeout (${ms} ms)" test "$ms" -ge 2000 -a "$ms" -lt 10000
else
  bad "cannot connect to 127.0.0.1:$port"
fi

check "the daemon still answers" g queue
check "daemon stops cleanly" d_stop
finish
