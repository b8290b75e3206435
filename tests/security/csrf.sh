#!/usr/bin/env bash
# Cross-site request forgery and DNS rebinding against a TCP daemon without tokens
# (--insecure-tcp; issue 11, item 2): a web page can POST text/plain or form bodies with a foreign Origin, and a
# rebinding page reaches loopback under its own Host name.  The daemon must refuse them
# (415 / 403 / 421, problem+json, no job created) while the CLI still submits and cancels and
# plain GETs (read-only) still work.
# usage: csrf.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

if ! command -v curl > /dev/null; then
  echo "SKIP: curl is not installed (needed to send browser-like requests)"
  exit 0
fi

d_start csrf --cluster 1x2 --grace 1s --listen 127.0.0.1:0 --insecure-tcp || { bad "daemon start"; finish; }
port=${SERVER##*:}
body='{"command": ["sleep", "30"], "name": "forged"}'

# hit STATUS CODE DESC curl-args...: HTTP status and problem code of one raw request
hit() {
  local want=$1 code=$2 desc=$3; shift 3
  local st
  st=$(curl -s -o "$tmp/out" -w '%{http_code}' --max-time 10 "$@")
  if [ "$st" = "$want" ] && { [ -z "$code" ] || grep -q "\"code\": \"$code\"" "$tmp/out"; }; then
    ok "$desc -> $st"
  else
    bad "$desc: want $want $code, got $st: $(head -c 300 "$tmp/out")"
  fi
}

# the forms a web page can send without a CORS preflight
# (the Origin check comes first: a foreign Origin is a 403 whatever the body)
hit 403 GS_EPERM "text/plain POST from evil origin" -X POST "$SERVER/v1/jobs" \
  -H 'Content-Type: text/plain' -H 'Origin: http://evil.example' --data-binary "$body"
hit 415 GS_EUNSUPPORTED "text/plain POST (no Origin)" -X POST "$SERVER/v1/jobs" \
  -H 'Content-Type: text/plain' --data-binary "$body"
hit 415 GS_EUNSUPPORTED "form-urlencoded POST" -X POST "$SERVER/v1/jobs" \
  -H 'Content-Type: application/x-www-form-urlencoded' --data-binary "$body"
hit 415 GS_EUNSUPPORTED "multipart POST" -X POST "$SERVER/v1/jobs" \
  -H 'Content-Type: multipart/form-data; boundary=x' --data-binary "$body"
hit 415 GS_EUNSUPPORTED "POST with a body and no Content-Type" -X POST "$SERVER/v1/jobs" \
  -H 'Content-Type:' -H 'X-Gsched-Client: 1' --data-binary "$body"
# JSON with every other header right but a foreign Origin
hit 403 GS_EPERM "JSON POST with Origin: http://evil.example" -X POST "$SERVER/v1/jobs" \
  -H 'Content-Type: application/json' -H 'X-Gsched-Client: 1' \
  -H 'Origin: http://evil.example' --data-binary "$body"
hit 403 GS_EPERM "JSON POST with Origin: null" -X POST "$SERVER/v1/jobs" \
  -H 'Content-Type: application/json' -H 'X-Gsched-Client: 1' -H 'Origin: null' \
  --data-binary "$body"
# DNS rebinding: the page's own name in Host
hit 421 GS_EPERM "JSON POST with Host: evil.example" -X POST "$SERVER/v1/jobs" \
  -H 'Host: evil.example' -H 'Content-Type: application/json' -H 'X-Gsched-Client: 1' \
  --data-binary "$body"
hit 421 GS_EPERM "GET with Host: evil.example:$port" "$SERVER/v1/jobs" -H "Host: evil.example:$port"
hit 421 GS_EPERM "GET with Host: localhost on another port" "$SERVER/v1/jobs" -H "Host: localhost:1"
# HTTP/1.1 without Host (RFC 9112: 400); curl cannot leave it out, bash's /dev/tcp can
if exec 3<> "/dev/tcp/127.0.0.1/$port"; then
  printf 'GET /v1/jobs HTTP/1.1\r\nConnection: close\r\n\r\n' >&3
  line=$(timeout 10 head -1 <&3 | tr -d '\r')
  exec 3>&-
  check "HTTP/1.1 without Host -> 400 (got '$line')" test "${line#HTTP/1.1 }" != "$line" -a "${line#HTTP/1.1 400}" != "$line"
else
  bad "cannot connect to 127.0.0.1:$port"
fi
# a state-changing request without the CLI's header (what fetch() without preflight sends)
hit 403 GS_EPERM "JSON POST without X-Gsched-Client" -X POST "$SERVER/v1/jobs" \
  -H 'Content-Type: application/json' --data-binary "$body"
check "the 403 names the header to send" grep -q 'X-Gsched-Client' "$tmp/out"
hit 403 GS_EPERM "DELETE without X-Gsched-Client" -X DELETE "$SERVER/v1/jobs/1"

# none of that created a job
out=$(g queue --all 2>&1)
check "no forged job exists" eval '! printf "%s\n" "$out" | grep -q forged'

# what must keep working: the CLI, and read-only GETs from a browser-like request
id=$("$bin" submit --parsable --server "$SERVER" -- sleep 30)
check "the CLI submits (id '$id')" test -n "$id"
check "the job runs" wait_state "$id" RUNNING 30
check "the CLI cancels" g cancel "$id"
check "the cancelled job is CANCELLED" wait_state "$id" CANCELLED 30
hit 200 "" "GET /v1/jobs from a browser (same origin, no header)" "$SERVER/v1/jobs" \
  -H "Origin: http://127.0.0.1:$port" -H 'Accept: text/html'
hit 200 "" "GET /v1/health with Host: localhost" "$SERVER/v1/health" -H "Host: localhost"
hit 200 "" "GET /v1/jobs with Host: [::1]:$port" "$SERVER/v1/jobs" -H "Host: [::1]:$port"
hit 201 "" "JSON POST with the header, own Origin, charset" -X POST "$SERVER/v1/jobs" \
  -H 'Content-Type: application/json; charset=utf-8' -H 'X-Gsched-Client: 1' \
  -H "Origin: http://localhost:$port" -H "Host: localhost:$port" \
  --data-binary '{"command": "true", "name": "legit"}'
hit 201 "" "YAML POST (text/yaml) with the header" -X POST "$SERVER/v1/jobs" \
  -H 'Content-Type: text/yaml' -H 'X-Gsched-Client: 1' --data-binary $'command: "true"\n'

check "daemon stops cleanly" d_stop
finish
