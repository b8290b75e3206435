#!/usr/bin/env bash
# Issue 11 (cli): `gsched submit` sent no Idempotency-Key unless asked.  A daemon in read-only
# mode (disk full) answers a submit 503 "could not record this request ... retry with the same
# Idempotency-Key", yet may commit the job later: a user who retried submitted twice, and had
# no key to retry with.  Now every submit carries a fresh key, a 503 with Retry-After is
# retried a bounded number of times with the same key, and a failure prints the key with the
# option that reuses it.  The daemon side is played by a small python3 HTTP server on loopback
# (503 on demand; it records each request's Idempotency-Key); the real daemon's read-only mode
# is tests/security/disk_full.sh.
# usage: submit_retry.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
if ! command -v python3 > /dev/null; then
  echo "SKIP: python3 is not installed (it plays the daemon)"
  exit 77
fi
tmp=$(mktemp -d)
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
check() {
  local what=$1; shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
spid=""
cleanup() {
  [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# fake.py PORTFILE KEYLOG N503: the first N503 POSTs get 503 + Retry-After: 1 (the read-only
# daemon's answer), later ones 201 (or 200 + replay for a key seen before a 201); at most 60 s
cat > "$tmp/fake.py" << 'EOF'
import http.server, json, sys, threading
portfile, keylog, n503 = sys.argv[1], sys.argv[2], int(sys.argv[3])
state = {"posts": 0, "done": {}}
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def send(self, code, obj, extra=()):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        key = self.headers.get("Idempotency-Key") or "-"
        with open(keylog, "a") as f:
            f.write(key + "\n")
        state["posts"] += 1
        if state["posts"] <= n503:
            self.send(503, {"code": "GS_EIO", "detail": "could not record this request (the "
                            "database cannot be written); retry with the same Idempotency-Key "
                            "to find out"}, [("Retry-After", "1")])
        elif key in state["done"]:
            self.send(200, {"id": state["done"][key], "ids": [state["done"][key]],
                            "state": "PENDING", "idempotent_replay": True})
        else:
            jid = 7 + len(state["done"])
            state["done"][key] = jid
            self.send(201, {"id": jid, "ids": [jid], "state": "PENDING"})
s = http.server.HTTPServer(("127.0.0.1", 0), H)
threading.Timer(60, s.shutdown).start()
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
EOF

# serve N503: start a fake daemon; SERVER, and an empty key log
serve() {
  [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
  rm -f "$tmp/port" "$tmp/keys"
  python3 "$tmp/fake.py" "$tmp/port" "$tmp/keys" "$1" & spid=$!
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
  SERVER=http://127.0.0.1:$(cat "$tmp/port")
}
sub() { timeout 60 "$bin" submit --server "$SERVER" --token t.fake-token-for-the-fake-daemon "$@"; }

# 1. every submit carries a key, a different one per invocation
serve 0
sub -- true > /dev/null 2>&1
sub -- true > /dev/null 2>&1
k1=$(sed -n 1p "$tmp/keys") k2=$(sed -n 2p "$tmp/keys")
check "a submit sends an Idempotency-Key by default ($k1)" eval '[[ $k1 =~ ^gsched-[0-9a-f]{32}$ ]]'
check "a fresh one per invocation ($k2)" eval '[ -n "$k2" ] && [ "$k2" != "$k1" ]'
sub --idempotency-key my-key-1 -- true > /dev/null 2>&1
check "--idempotency-key KEY sends KEY" test "$(sed -n 3p "$tmp/keys")" = my-key-1
sub --dry-run -- true > /dev/null 2>&1
# (the fake answers a dry run like a submit; only the header matters here)
check "a dry run (changes nothing) sends none" test "$(sed -n 4p "$tmp/keys")" = -

# 2. 503 + Retry-After twice: retried with the same key, then submitted once
serve 2
out=$(sub -- true 2> "$tmp/err"); rc=$?
check "two 503s then 201: exit 0 (got $rc: $(cat "$tmp/err"))" test "$rc" = 0
check "... Submitted job 7 ($out)" test "$out" = "Submitted job 7"
check "... three requests, one key" test "$(wc -l < "$tmp/keys")/$(sort -u "$tmp/keys" | wc -l)" = 3/1
check "... each retry said on stderr" test "$(grep -c 'retrying in 1 s with the same Idempotency-Key gsched-' "$tmp/err")" = 2

# 3. 503 every time: bounded retries, then exit 1 with the key and how to reuse it
serve 100
out=$(sub -- true 2> "$tmp/err"); rc=$?
key=$(sed -n 1p "$tmp/keys")
check "always 503: gives up with exit 1 (got $rc)" test "$rc" = 1
check "... after 1 + 3 attempts with one key" test "$(wc -l < "$tmp/keys")/$(sort -u "$tmp/keys" | wc -l)" = 4/1
check "... printing the daemon's reason" grep -q "could not record this request" "$tmp/err"
check "... and the key with the option that reuses it" grep -q -- "--idempotency-key $key" "$tmp/err"
cat "$tmp/err" | sed 's/^/# /'

# 4. retrying with the printed key: the daemon answers with the job it recorded (no second job)
serve 0
sub --idempotency-key "$key" -- true > /dev/null 2>&1
out=$(sub --idempotency-key "$key" -- true 2>&1)
check "the same key again is the same job ($out)" \
  test "$out" = "Submitted job 7 (already submitted with this idempotency key)"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
