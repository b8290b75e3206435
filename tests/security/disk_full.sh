#!/usr/bin/env bash
# Issue 11 item 3: job output filled the disk -> "FATAL: cannot commit" -> the daemon exited,
# could not start again while the disk was full, and after space was freed crashed again.
# Here the database, the state directory and the logs live on a small tmpfs (8 MiB) the test
# mounts; a job writing endlessly (`yes`) must be capped by --log-cap (marker line, job not
# killed); with the filesystem filled by the test the daemon must stay up read-only (submits
# 503 with Retry-After, reads 200), start read-only after a graceful stop and after a kill -9
# while full, and recover once space is freed: the held submit is found again through its
# Idempotency-Key, a new job runs to DONE, no job is lost or duplicated.  Also: without
# --log-dir, logs go outside the database's directory (root: /var/log/gsched/NAME-ID).
# Needs root (mount); skips elsewhere.
# usage: disk_full.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: needs root to mount a small tmpfs for the full filesystem"
  exit 77
fi
tmp=$(mktemp -d)
mnt=$tmp/fs
mkdir -p "$mnt"
if ! mount -t tmpfs -o size=8m,mode=0755 gsched-disk-full "$mnt" 2>/dev/null; then
  rmdir "$mnt" "$tmp"
  echo "SKIP: cannot mount a tmpfs here (not allowed in this container)"
  exit 77
fi
. "$src/tests/e2e/lib/daemon.sh"
deflog=""
DDIR=$tmp # where d_stop looks for the daemon log

# daemons and their tasks first, then the tmpfs, then what the library cleans
disk_cleanup() {
  local p f pid
  for p in $DPIDS; do kill -TERM "$p" 2>/dev/null; done
  for p in $DPIDS; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
  done
  for f in "$mnt"/gsched.d/runs/*/task-*.pid "$tmp"/def/gsched.d/runs/*/task-*.pid; do
    [ -f "$f" ] || continue
    pid=$(cut -d' ' -f1 "$f")
    [ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null
  done
  DPIDS=""
  sleep 0.2
  umount "$mnt" 2>/dev/null || umount -l "$mnt"
  [ -n "$deflog" ] && rm -rf "$deflog" && rmdir /var/log/gsched 2>/dev/null
  d_cleanup
}
trap disk_cleanup EXIT

CAP=262144
# start the daemon: database, state and logs on the tmpfs; port file and its log outside
# (--single-user --insecure-tcp: as root, TCP without tokens, like tests/e2e/lib/daemon.sh)
start() {
  rm -f "$tmp/port"
  "$bin" serve --cluster 1x2 --db "$mnt/gsched.db" --log-dir "$mnt/logs" --log-cap 256K \
    --listen 127.0.0.1:0 --insecure-tcp --port-file "$tmp/port" --grace 1s --single-user >> "$tmp/daemon.log" 2>&1 &
  DPID=$!
  DPIDS="$DPIDS $DPID"
  for _ in $(seq 300); do
    if [ -s "$tmp/port" ]; then
      SERVER=http://127.0.0.1:$(cat "$tmp/port")
      return 0
    fi
    kill -0 "$DPID" 2>/dev/null || break
    sleep 0.05
  done
  echo "  daemon did not start:"; tail -5 "$tmp/daemon.log" | sed 's/^/    /'
  return 1
}
# fill the filesystem to the last block (files named fill-*)
fill() {
  local n=0
  while [ $n -lt 8 ]; do
    dd if=/dev/zero of="$mnt/fill-$RANDOM$RANDOM" bs=4k 2>/dev/null
    [ "$(df -P "$mnt" | awk 'NR == 2 { print $4 }')" = 0 ] && return 0
    n=$((n + 1))
  done
}
# post KEY CMD: submit through the API; prints "STATUS RETRY-AFTER"
post() {
  curl -s -o "$tmp/post.out" -D "$tmp/post.hdr" -w '%{http_code}' -X POST \
    -H 'Content-Type: application/json' -H 'X-Gsched-Client: 1' -H "Idempotency-Key: $1" \
    -d "{\"command\": \"$2\", \"gpus\": 1}" "$SERVER/v1/jobs"
  printf ' %s\n' "$(awk 'tolower($1) == "retry-after:" { print $2 + 0 }' "$tmp/post.hdr")"
}
code() { curl -s -o /dev/null -w '%{http_code}' "$SERVER$1"; }
health() { curl -s "$SERVER/v1/health" | sed -n 's/.*"status": *"\([a-z-]*\)".*/\1/p' | head -1; }
alive() { kill -0 "$DPID" 2>/dev/null; }
size() { stat -c %s "$1" 2>/dev/null || echo 0; }

start || exit 1

# 1. a job that writes endlessly is capped, marked, and not killed by it
y=$(gsub --gpus 1 --idempotency-key flood -- yes)
wait_state "$y" RUNNING 20 || bad "flood job runs"
ylog=$mnt/logs/$y/task-0.log
for _ in $(seq 100); do [ "$(size "$ylog")" -ge $CAP ] && break; sleep 0.1; done
sleep 1
s1=$(size "$ylog")
check "log capped: $s1 <= cap $CAP + 512" [ "$s1" -ge $CAP ] && [ "$s1" -le $((CAP + 512)) ]
check "truncation marker in the log" grep -q "=== gsched: log truncated at $CAP bytes (serve --log-cap)" "$ylog"
sleep 1
check "log stays capped while the job writes on ($(size "$ylog"))" [ "$(size "$ylog")" = "$s1" ]
check "the flood job still runs (not killed by its log)" [ "$(state "$y")" = RUNNING ]
j1=$(gsub --gpus 1 -- echo before-the-fill)
wait_state "$j1" DONE 20 || bad "a job runs before the disk fills"

# 2. the disk fills: the daemon stays up read-only
fill
r=$(post held-1 "echo held-1")
check "submit while full: 503 with Retry-After (got $r)" [ "${r% *}" = 503 ] && [ "${r#* }" -gt 0 ]
r=$(post held-2 "echo held-2")
check "second submit while full: 503 with Retry-After (got $r)" [ "${r% *}" = 503 ] && [ "${r#* }" -gt 0 ]
check "the daemon is alive" alive
check "GET /v1/jobs works while full" [ "$(code '/v1/jobs?state=all')" = 200 ]
check "GET /v1/jobs/$y works while full" [ "$(code "/v1/jobs/$y")" = 200 ]
check "health says read-only" [ "$(health)" = read-only ]
check "metric gsched_read_only 1" contains "$(curl -s "$SERVER/metrics")" "gsched_read_only 1"
check "gsched nodes shows READ-ONLY" contains "$(g nodes 2>&1)" "READ-ONLY"
out=$(g cancel "$y" 2>&1)
check "cancel while full is refused with the reason" contains "$out" "read-only"
check "the flood job still runs" [ "$(state "$y")" = RUNNING ]

# 3. restart while full: after a graceful stop, then after kill -9
check "graceful stop while full" d_stop
fill
start || bad "daemon starts while the disk is full (graceful stop before)"
check "started read-only" [ "$(health)" = read-only ]
check "GET /v1/jobs after a start on a full disk" [ "$(code '/v1/jobs?state=all')" = 200 ]
check "the flood job was adopted (still RUNNING)" [ "$(state "$y")" = RUNNING ]
d_kill9
fill
start || bad "daemon starts while the disk is full (after kill -9)"
check "started read-only after kill -9" [ "$(health)" = read-only ]
r=$(post held-3 "echo held-3")
check "submit after the full restart: 503 (got $r)" [ "${r% *}" = 503 ]
check "the flood job is still RUNNING, never requeued" [ "$(state "$y")" = RUNNING ] && [ "$(field "$y" Runs)" = 1 ]

# 4. space is freed: the daemon recovers by itself, nothing lost, nothing twice
rm -f "$mnt"/fill-*
for _ in $(seq 100); do [ "$(health)" = ok ] && break; sleep 0.1; done
check "writable again: health ok" [ "$(health)" = ok ]
check "metric gsched_read_only 0" contains "$(curl -s "$SERVER/metrics")" "gsched_read_only 0"
check "the daemon is alive" alive
r1=$(post held-1 "echo held-1"); id1=$(sed -n 's/.*"id": *\([0-9]*\).*/\1/p' "$tmp/post.out" | head -1)
r1b=$(post held-1 "echo held-1"); id1b=$(sed -n 's/.*"id": *\([0-9]*\).*/\1/p' "$tmp/post.out" | head -1)
check "held-1 once: $r1 then $r1b, ids $id1 = $id1b" [ -n "$id1" ] && [ "$id1" = "$id1b" ] && [ "${r1b% *}" = 200 ]
r2=$(post held-2 "echo held-2"); id2=$(sed -n 's/.*"id": *\([0-9]*\).*/\1/p' "$tmp/post.out" | head -1)
check "held-2 accepted once (got $r2, id $id2)" [ -n "$id2" ] && [ "$id2" != "$id1" ]
wait_state "$id1" DONE 20 || bad "held-1 runs to DONE"
wait_state "$id2" DONE 20 || bad "held-2 runs to DONE"
j2=$(gsub --gpus 1 -- echo after-the-fill)
wait_state "$j2" DONE 20 || bad "a new job runs to DONE after recovery"
check "job output after recovery" contains "$(g logs "$j2" 2>&1)" "after-the-fill"
check "flood job: one run, still RUNNING" [ "$(state "$y")" = RUNNING ] && [ "$(field "$y" Runs)" = 1 ]
n=$(curl -s "$SERVER/v1/jobs?state=all" | grep -o '"id": *[0-9]*' | sort -u | wc -l)
check "no job lost or duplicated: 5 jobs ($n)" [ "$n" = 5 ]
g cancel "$y" > /dev/null 2>&1
wait_state "$y" CANCELLED 20 || bad "the flood job can be cancelled"
check "its log is still capped ($(size "$ylog"))" [ "$(size "$ylog")" -le $((CAP + 1024)) ]
check "graceful stop" d_stop

# 5. without --log-dir the logs are not in the database's directory (root: /var/log/gsched)
mkdir -p "$tmp/def"
DDIR=$tmp/def
rm -f "$tmp/port"
( cd "$tmp/def" && exec "$bin" serve --cluster 1x1 --db "$tmp/def/gsched.db" --listen 127.0.0.1:0 --insecure-tcp \
    --port-file "$tmp/port" --single-user >> "$tmp/def/daemon.log" 2>&1 ) &
DPID=$!
DPIDS="$DPIDS $DPID"
for _ in $(seq 300); do [ -s "$tmp/port" ] && break; sleep 0.05; done
SERVER=http://127.0.0.1:$(cat "$tmp/port")
deflog=$(sed -n 's/.*, logs \(\/var\/log\/gsched\/gsched-[0-9a-f]\{16\}\), .*/\1/p' "$tmp/def/daemon.log")
check "default log directory /var/log/gsched/gsched-ID ($deflog)" [ -n "$deflog" ]
j=$(gsub -- echo default-dir)
wait_state "$j" DONE 20 || bad "job with the default log directory"
check "its log is there" [ -n "$deflog" ] && grep -q default-dir "$deflog/$j/task-0.log"
check "nothing under the database's directory" [ -z "$(find "$tmp/def" -name 'task-*.log')" ]
check "gsched logs reads it" contains "$(g logs "$j" 2>&1)" "default-dir"
check "graceful stop" d_stop

finish
