#!/usr/bin/env bash
# Issue 11 item 6: a rejected submit must leave no VC behind. Before the fix, every submit
# interned its VC name even when the job was rejected (422, it can never fit), so junk names
# showed in `GET /v1/vcs` to everyone and consumed the GSD_MAX_VCS cap until a restart.
# usage: vc_junk.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

d_start vcj --cluster 1x2 --grace 1s || { bad "daemon start"; finish; }

# 20 submits with distinct junk VCs, each asking for more GPUs than the cluster has: 422
rejected=0
for i in $(seq 20); do
  code=$(dcurl -s -o "$tmp/out" -w '%{http_code}' -X POST -H 'X-Gsched-Client: 1' -H 'Content-Type: application/json' \
    --data "{\"command\":\"true\",\"vc\":\"junkvc$i\",\"tasks\":\"4x2\"}" "$URL/v1/jobs")
  [ "$code" = 422 ] && rejected=$((rejected+1))
done
check "20 impossible submits are rejected with 422 ($rejected)" [ "$rejected" -eq 20 ]

# one accepted job in its own VC: that VC (and only that one) appears
code=$(dcurl -s -o "$tmp/out" -w '%{http_code}' -X POST -H 'X-Gsched-Client: 1' -H 'Content-Type: application/json' \
  --data '{"command":"true","vc":"realvc","gpus":1}' "$URL/v1/jobs")
check "an accepted job's submit answers 201 ($code)" [ "$code" = 201 ]

dcurl -s "$URL/v1/vcs" > "$tmp/vcs.json"
check "GET /v1/vcs lists no junk VC" bash -c "! grep -q junkvc '$tmp/vcs.json'"
check "GET /v1/vcs lists the accepted job's VC" grep -q '"realvc"' "$tmp/vcs.json"
check "gsched vcs shows no junk VC" bash -c "! '$bin' vcs --server '$SERVER' | grep -q junkvc"
check "metrics carry no junk VC label" bash -c "! dcurl -s '$URL/metrics' | grep -q junkvc"

# a junk VC later used by an accepted job becomes a real one
code=$(dcurl -s -o "$tmp/out" -w '%{http_code}' -X POST -H 'X-Gsched-Client: 1' -H 'Content-Type: application/json' \
  --data '{"command":"true","vc":"junkvc7","gpus":1}' "$URL/v1/jobs")
check "an accepted job in a once-rejected VC answers 201 ($code)" [ "$code" = 201 ]
check "that VC is now listed" bash -c "dcurl -s '$URL/v1/vcs' | grep -q '\"junkvc7\"'"

d_stop
finish
