#!/usr/bin/env bash
# Node administration is admin-only (issue 16): POST /v1/nodes/{name}/drain|resume|down (and
# bad|good) over TCP with tokens: 401 without a token or with a wrong one, 403 for a user's
# token (nothing changes), 404 for an unknown node, 409 for a transition that makes no sense,
# 400 for a malformed body; an admin's token works; the CLI with a user's token is refused.
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

U=alice.alice-secret-0123456789abcdef
A=ops.ops-admin-secret-0123456789abc
tok=$tmp/tokens
{
  "$bin" token hash --user alice --token "$U" --iterations 1000
  "$bin" token hash --user ops --admin --token "$A" --iterations 1000
} > "$tok" 2> /dev/null
chmod 600 "$tok"
export GSCHED_TOKEN=$A # the helpers look as the admin

d_start auth --cluster 2x2 --tokens "$tok" --listen 127.0.0.1:0 --grace 1s ||
  { bad "daemon start"; finish; }

# hit WANT DESC [curl args...]: POST status
hit() {
  local want=$1 desc=$2; shift 2
  local st
  st=$(curl -s -o "$tmp/out" -w '%{http_code}' -X POST -H 'X-Gsched-Client: 1' \
    -H 'Content-Type: application/json' "$@")
  if [ "$st" = "$want" ]; then ok "$desc: $want"; else
    bad "$desc: want $want, got $st: $(head -c 300 "$tmp/out")"; fi
}
admin_state() {
  curl -s -H "Authorization: Bearer $A" "$SERVER/v1/nodes/$1" |
    python3 -c 'import json,sys; print(json.load(sys.stdin).get("admin_state", "absent"))'
}

for v in drain resume down bad good; do
  hit 401 "$v without a token" "$SERVER/v1/nodes/n0/$v" --data '{"reason":"x"}'
  hit 401 "$v with a wrong token" -H "Authorization: Bearer ops.not-the-secret-000000000" \
    "$SERVER/v1/nodes/n0/$v" --data '{"reason":"x"}'
  hit 403 "$v with a user's token" -H "Authorization: Bearer $U" "$SERVER/v1/nodes/n0/$v" \
    --data '{"reason":"x"}'
  check "... names the rule" grep -q "only an admin may" "$tmp/out"
  hit 404 "$v of an unknown node (admin)" -H "Authorization: Bearer $A" \
    "$SERVER/v1/nodes/n9/$v"
done
check "no user's request changed n0" [ "$(admin_state n0)" = None ]
check "... nor marked it bad" bash -c "! curl -s -H 'Authorization: Bearer $A' '$SERVER/v1/nodes/n0' | grep -q '\"bad\": true'"

hit 400 "drain with a malformed body" -H "Authorization: Bearer $A" "$SERVER/v1/nodes/n0/drain" \
  --data '{"why":"x"}'
hit 409 "resume of a node in service" -H "Authorization: Bearer $A" \
  "$SERVER/v1/nodes/n0/resume"
# a reason is printed in every user's `gsched nodes` and the dashboard: one line, no escapes
for v in drain down bad; do
  hit 400 "$v with a terminal escape in the reason" -H "Authorization: Bearer $A" \
    "$SERVER/v1/nodes/n0/$v" --data '{"reason":"\u001b[2J\u001b]0;x\u0007"}'
  check "... names the character" grep -q "control character (U+001B)" "$tmp/out"
  hit 400 "$v with a newline in the reason" -H "Authorization: Bearer $A" \
    "$SERVER/v1/nodes/n0/$v" --data '{"reason":"a\nn0 idle"}'
  hit 400 "$v with a repeated key" -H "Authorization: Bearer $A" \
    "$SERVER/v1/nodes/n0/$v" --data '{"reason":"a","reason":"b"}'
done
check "refused reasons changed nothing" [ "$(admin_state n0)" = None ]
expect 2 "control character" -- "$bin" node drain n1 --reason $'fan\e[31m' --server "$SERVER"
hit 200 "drain by an admin" -H "Authorization: Bearer $A" "$SERVER/v1/nodes/n0/drain" \
  --data '{"reason":"maintenance"}'
check "... n0 is drained" [ "$(admin_state n0)" = drain ]
check "... the answer says so" grep -q '"admin_state": "drain"' "$tmp/out"
hit 403 "resume with a user's token" -H "Authorization: Bearer $U" "$SERVER/v1/nodes/n0/resume"
check "... n0 stays drained" [ "$(admin_state n0)" = drain ]
out=$(curl -s -H "Authorization: Bearer $U" "$SERVER/v1/nodes/n0")
check "a user reads the admin state" contains "$out" '"admin_state": "drain"'
check "... and who set it" contains "$out" '"admin_by": "ops"'
hit 200 "down by an admin" -H "Authorization: Bearer $A" "$SERVER/v1/nodes/n0/down"
hit 409 "drain of a down node" -H "Authorization: Bearer $A" "$SERVER/v1/nodes/n0/drain"
hit 200 "resume by an admin" -H "Authorization: Bearer $A" "$SERVER/v1/nodes/n0/resume"
check "... n0 is back in service" [ "$(admin_state n0)" = None ]

# the CLI: a user's token is refused, an admin's works
GSCHED_TOKEN=$U expect 1 "only an admin may drain nodes" -- "$bin" node drain n1 --server "$SERVER"
expect 0 "^Node n1 drained$" -- "$bin" node drain n1 --reason "fan" --server "$SERVER"
GSCHED_TOKEN=$U expect 1 "only an admin may resume nodes" -- "$bin" node resume n1 \
  --server "$SERVER"
expect 0 "^Node n1 resumed$" -- "$bin" node resume n1 --server "$SERVER"
d_stop && ok "graceful stop" || bad "graceful stop"
finish
