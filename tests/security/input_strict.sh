#!/usr/bin/env bash
# Issue 11 item 13: input strictness of POST /v1/jobs. Before the fix a NUL ("\u0000") in a
# name, env value or argument silently truncated it; bidi and C1 controls were accepted and
# printed raw; "gpus":"2" (a string for a number) was accepted; ?dry_run=2 made a real
# submit; a field over its limit answered 413 (which means the body is too large).
# usage: input_strict.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

d_start strict --cluster 1x2 --grace 1s || { bad "daemon start"; finish; }

# post BODY [QUERY] [CTYPE]: sets CODE and OUT (the answer's body)
post() {
  CODE=$(dcurl -s -o "$tmp/out" -w '%{http_code}' -X POST -H 'X-Gsched-Client: 1' -H "Content-Type: ${3:-application/json}" \
    --data-binary "$1" "$URL/v1/jobs${2:-}")  # BODY may be @FILE
  OUT=$(cat "$tmp/out")
}
# rejects NAME FIELD BODY [CTYPE]: a 400 problem whose "field" is FIELD
rejects() {
  local name=$1 field=$2
  post "$3" "" "${4:-application/json}"
  if [ "$CODE" = 400 ] && printf '%s' "$OUT" | grep -q "\"field\": *\"$field\""; then
    ok "$name: 400, field $field"
  else
    bad "$name: expected 400 naming '$field', got $CODE: $OUT"
  fi
}
njobs() { dcurl -s "$URL/v1/jobs?limit=1000" | grep -o '"id": *[0-9]*' | wc -l; }

rejects "NUL in name" name '{"command":"true","name":"ok\u0000evil"}'
rejects "NUL in env value" env '{"command":"true","env":{"A":"x\u0000y"}}'
rejects "NUL in an argument" command '{"command":["echo","a\u0000b"]}'
rejects "NUL in a shell command" command '{"command":"echo a\u0000; rm -rf /"}'
rejects "NUL in vc (YAML)" vc $'command: "true"\nvc: "a\\0b"\n' application/yaml
rejects "RLO (U+202E) in name" name '{"command":"true","name":"abc\u202egpj.exe"}'
rejects "LRI (U+2066) in name" name '{"command":"true","name":"a\u2066b"}'
rejects "C1 control (U+009B, CSI) in name" name '{"command":"true","name":"a\u009b2Jb"}'
rejects "ESC in name" name '{"command":"true","name":"a\u001b[2Jb"}'
rejects "bidi in an argument" command '{"command":["echo","a\u202eb"]}'
rejects "bidi in env value" env '{"command":"true","env":{"A":"a\u2067b"}}'
rejects "string for gpus" gpus '{"command":"true","gpus":"2"}'
rejects "string for cpus" cpus '{"command":"true","cpus":"4"}'
rejects "string for tasks" tasks '{"command":"true","tasks":"1"}'
rejects "string for gang" gang '{"command":"true","gang":"true"}'
rejects "numeric string for priority" priority '{"command":"true","priority":"5"}'
rejects "quoted YAML number for gpus" gpus $'command: "true"\ngpus: "1"\n' application/yaml
rejects "name over its limit is 400, not 413" name "{\"command\":\"true\",\"name\":\"$(head -c 300 /dev/zero | tr '\0' a)\"}"
rejects "too many arguments is 400, not 413" command "{\"command\":[$(for i in $(seq 5000); do printf '"a",'; done)\"a\"]}"

# what stays accepted: numbers as numbers, a multi-line command, tabs in a command, YAML ints
post '{"command":"printf \"a\\tb\\n\"\necho c","gpus":1,"tasks":1,"priority":5,"gang":true}' "?dry_run=1"
check "numbers, a tab and a newline in a command are accepted ($CODE)" [ "$CODE" = 200 ]
post $'command: "true"\ntasks: 2x1\npriority: prod\ngang: yes\n' "?dry_run=true" application/yaml
check "YAML plain scalars and COUNTxGPUS still parse ($CODE)" [ "$CODE" = 200 ]
post $'command: "true"\ngpus: 1\ncpus: 2\npriority: 5\n' "?dry_run=true" application/yaml
check "YAML unquoted numbers still parse ($CODE)" [ "$CODE" = 200 ]

# dry_run: only true/false forms; anything else 400 and no job created
before=$(njobs)
for q in "dry_run=2" "dry_run=maybe" "dry_run=tru" "dry_run=-1"; do
  post '{"command":"true"}' "?$q"
  check "?$q is a 400 naming dry_run ($CODE)" bash -c "[ '$CODE' = 400 ] && grep -q '\"dry_run\"' '$tmp/out'"
done
for q in "dry_run=1" "dry_run=TRUE" "dry_run=Yes" "dry_run"; do
  post '{"command":"true"}' "?$q"
  check "?$q is a dry run ($CODE)" [ "$CODE" = 200 ]
done
check "no job was created by any of them" [ "$(njobs)" = "$before" ]
post '{"command":"true"}' "?dry_run=no"
check "?dry_run=no submits for real ($CODE)" [ "$CODE" = 201 ]

# 413 stays for a body over --max-body (default 1 MiB)
{ printf '{"command":"true"'; head -c 2000000 /dev/zero | tr '\0' ' '; printf '}'; } > "$tmp/big.json"
post "@$tmp/big.json"
check "a body over --max-body is 413 ($CODE)" [ "$CODE" = 413 ]

check "nothing with a NUL or control character got in" bash -c "! dcurl -s '$URL/v1/jobs?limit=1000' | grep -q 'evil\|gpj'"
d_stop
finish
