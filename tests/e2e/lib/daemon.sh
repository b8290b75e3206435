# Helpers for the live-scheduler end-to-end tests (sourced, not run).
# Daemons serve on a Unix socket in their state directory ($DDIR/gsched.sock; the CLI's
# identity comes from the kernel).  A test about TCP passes --listen 127.0.0.1:0 (with
# --tokens FILE or --insecure-tcp): the daemon then serves both, on a random free port
# (--port-file), and SERVER is the TCP address;
# every wait is bounded; the EXIT trap stops the daemons this script started (by pid) and
# kills task process groups left in their state directories (by the pids in their pid files)
# and the task cgroups those name (runs/*/cgroup), which it removes.
#
# Usage: bin=$1 src=$2; tmp=$(mktemp -d); . "$src/tests/e2e/lib/daemon.sh"
#   d_start NAME [serve args...]   start a daemon with state in $tmp/NAME (logs: $tmp/NAME/logs),
#                                  sets SERVER, DPID,
#                                  DDIR, SOCK (its socket), URL (http://... base for curl)
#   dcurl CURL-ARGS...             curl to the current daemon (through the socket unless TCP):
#                                  dcurl "$URL/v1/jobs"
#   d_spawn NAME [serve args...]   the same without waiting for it to serve
#                                  (both pass --single-user unless D_MULTIUSER=1)
#   d_stop / d_kill9               graceful stop / kill -9 of the current daemon
#   g ARGS...                      run the CLI against the current daemon
#   field ID KEY                   a "Key: value" line of 'gsched describe job ID'
#   wait_state ID STATE [SECS]     poll until the job is in STATE (exit 1 on timeout)
#   check NAME CMD...              count a result: ok/not ok
#   expect CODE PATTERN -- CMD...  exit code CODE and output matching PATTERN: ok/not ok
#   finish                         print "N passed, N failed" and exit accordingly

pass=0 fail=0
DPIDS=""
case $bin in /*) ;; *) bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin") ;; esac
case $src in /*) ;; *) src=$(cd "$src" && pwd) ;; esac

ok() { pass=$((pass+1)); echo "ok - $*"; }
bad() { fail=$((fail+1)); echo "not ok - $*"; }
check() {
  local name=$1; shift
  if "$@"; then ok "$name"; else bad "$name"; fi
}

d_cleanup() {
  local p f pid
  for p in $DPIDS; do
    kill -TERM "$p" 2>/dev/null
  done
  for p in $DPIDS; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
  done
  # tasks survive their daemon by design: end the ones our daemons started
  for f in "$tmp"/*/gsched.d/runs/*/task-*.pid; do
    [ -f "$f" ] || continue
    pid=$(cut -d' ' -f1 "$f")
    [ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null
  done
  # and their task cgroups (serve --cgroup): kill what is in them, remove them and the base
  local bases c
  bases=$(cat "$tmp"/*/gsched.d/runs/*/cgroup 2>/dev/null | sort -u)
  for b in $bases; do
    for c in "$b"/job-*; do [ -d "$c" ] && echo 1 > "$c/cgroup.kill" 2>/dev/null; done
  done
  for b in $bases; do
    for _ in $(seq 20); do
      for c in "$b"/job-*; do [ -d "$c" ] && rmdir "$c"/* "$c" 2>/dev/null; done
      rmdir "$b" 2>/dev/null && break
      sleep 0.1
    done
  done
  rm -rf "$tmp"
}
trap d_cleanup EXIT

# d_spawn NAME [args...]: start a daemon (random loopback port, state in $tmp/NAME), no wait
d_spawn() {
  local name=$1; shift
  DDIR=$tmp/$name
  mkdir -p "$DDIR"
  rm -f "$DDIR/port" "$DDIR/gsched.sock" # a stale socket of a killed daemon is no sign of life
  SOCK=$DDIR/gsched.sock
  DTCP=""
  case " $* " in *" --listen "*) DTCP=1 ;; esac
  export SOCK DTCP # for dcurl in child shells (bash -c)
  # --single-user: these tests run as root in CI and submit without tokens; a root daemon
  # otherwise runs each job as its owner's Unix account and refuses unauthenticated submits
  # (tests/security/privsep.sh tests that mode; it sets D_MULTIUSER=1)
  local mode=--single-user
  [ "${D_MULTIUSER:-0}" = 1 ] && mode=
  ( cd "$DDIR" && exec "$bin" serve --db "$DDIR/gsched.db" --socket "$SOCK" \
      --port-file "$DDIR/port" --log-dir "$DDIR/logs" $mode "$@" >> "$DDIR/daemon.log" 2>&1 ) &
  DPID=$!
  DPIDS="$DPIDS $DPID"
}

# d_start NAME [args...]: d_spawn, then wait until it serves (sets SERVER); bounded by 60 s
# of polls, generous for a sanitizer build on a loaded machine recovering many jobs (a
# daemon that exits ends the wait at once)
d_start() {
  d_spawn "$@"
  for _ in $(seq 1200); do
    # the socket appears only once the daemon listens (bound under another name, renamed)
    if [ -S "$SOCK" ] && { [ -z "$DTCP" ] || [ -s "$DDIR/port" ]; }; then
      if [ -n "$DTCP" ]; then
        SERVER=http://127.0.0.1:$(cat "$DDIR/port")
        URL=$SERVER
      else
        SERVER=unix:$SOCK
        URL=http://localhost
      fi
      return 0
    fi
    kill -0 "$DPID" 2>/dev/null || break
    sleep 0.05
  done
  echo "daemon $1 did not start:"; cat "$DDIR/daemon.log"
  return 1
}

# graceful stop: the daemon must exit 0 (under ASan that also means no leak report)
d_stop() {
  local rc
  kill -TERM "$DPID" 2>/dev/null
  for _ in $(seq 1200); do
    if ! kill -0 "$DPID" 2>/dev/null; then
      wait "$DPID" 2>/dev/null
      rc=$?
      [ "$rc" = 0 ] && return 0
      echo "  daemon exited with $rc:"; tail -20 "$DDIR/daemon.log" | sed 's/^/    /'
      return 1
    fi
    sleep 0.05
  done
  kill -KILL "$DPID" 2>/dev/null
  echo "  daemon did not stop within 60s"
  return 1
}

d_kill9() {
  kill -KILL "$DPID" 2>/dev/null
  wait "$DPID" 2>/dev/null
  return 0
}

g() { "$bin" "$@" --server "$SERVER"; }
dcurl() {
  if [ -n "$DTCP" ]; then curl "$@"; else curl --unix-socket "$SOCK" "$@"; fi
}
export -f dcurl
# submit and print the id (--parsable); flags first, then -- CMD
gsub() { "$bin" submit --parsable --server "$SERVER" "$@"; }

field() {
  "$bin" describe job "$1" --server "$SERVER" 2>/dev/null |
    awk -v k="$2:" 'index($0, k) == 1 { s = substr($0, length(k) + 1); sub(/^ +/, "", s); print s; exit }'
}
state() { field "$1" State | awk '{print $1}'; }

wait_state() {
  local id=$1 want=$2 secs=${3:-30} s="" rc
  for _ in $(seq $((secs * 10))); do
    "$bin" describe job "$id" --server "$SERVER" > "$tmp/.ws" 2>&1
    rc=$?
    # unreachable daemon or unknown job: waiting longer cannot help
    if [ "$rc" = 3 ] || [ "$rc" = 4 ] || [ "$rc" = 2 ]; then
      echo "  job '$id': $(head -1 "$tmp/.ws")"
      return 1
    fi
    s=$(awk '/^State:/ { print $2; exit }' "$tmp/.ws")
    [ "$s" = "$want" ] && return 0
    sleep 0.1
  done
  echo "  job $id: state '$s' after ${secs}s, wanted $want"
  return 1
}

# events ID: the TYPE column of the Events table, space-separated
events() {
  "$bin" describe job "$1" --server "$SERVER" 2>/dev/null |
    awk '/^Events:/ { on = 1; next } on && NF >= 2 && $1 != "TIME" { printf "%s ", $2 }'
}

has() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }
# contains HAYSTACK NEEDLE: plain substring test (no quoting pitfalls)
contains() { [[ $1 == *"$2"* ]]; }

# wait until no job is active (bounded)
wait_idle() {
  local secs=${1:-60}
  for _ in $(seq $((secs * 10))); do
    [ -z "$("$bin" queue --no-headers --server "$SERVER" 2>/dev/null)" ] && return 0
    sleep 0.1
  done
  echo "  still active after ${secs}s:"; "$bin" queue --server "$SERVER"
  return 1
}

finish() {
  # sanitizer reports from daemons or task shims (ASan builds) fail the test
  local hits
  hits=$(grep -rlE "AddressSanitizer|LeakSanitizer|runtime error:" "$tmp" 2>/dev/null | head -5)
  if [ -n "$hits" ]; then
    bad "sanitizer report in: $hits"
    grep -rhE -A12 "AddressSanitizer|LeakSanitizer|runtime error:" $hits | head -60
  fi
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit $?
}

# expect CODE PATTERN -- command...: exit code and output (stdout+stderr) matching PATTERN
expect() {
  local code=$1 pat=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -eq "$code" ] && printf '%s\n' "$out" | grep -Eq -- "$pat"; then
    ok "exit $code: $pat"
  else
    bad "expected exit $code and /$pat/, got exit $rc: $out"
  fi
}
