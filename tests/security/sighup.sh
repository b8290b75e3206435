#!/usr/bin/env bash
# Issue 11 item 7: SIGHUP killed the daemon (exit 129), so closing the terminal of a
# `gsched serve ... &` stopped the scheduler.  Now SIGHUP reloads the tokens file (a file that
# fails to load keeps the tokens in force and the log says why) or, without --tokens, is only
# logged; the daemon keeps serving either way, and SIGTERM still stops it cleanly.  With
# --log-file FILE the daemon's log goes to FILE (mode 0600) and SIGHUP reopens it, so logrotate
# can move it away (item "What to build" 5: SIGHUP reopens logs).
# usage: sighup.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

A=alice.alice-secret-0123456789
B=bob.bob-secret-0123456789abc
tokline() { "$bin" token hash --user "$1" --token "$2" --iterations 1000 2>/dev/null; }
# answers TOKEN: the daemon answers an authenticated request with this token
answers() { "$bin" queue --server "$SERVER" --token "$1" > /dev/null 2>&1; }
# refused TOKEN: the daemon is up and answers 401 (the CLI's hint names the token)
refused() { "$bin" queue --server "$SERVER" --token "$1" 2>&1 | grep -q -- "--token"; }
# logged PATTERN [N]: the daemon log gets N (default 1) lines matching PATTERN (bounded wait)
logged() {
  for _ in $(seq 100); do
    [ "$(grep -Ec -- "$1" "$DDIR/daemon.log")" -ge "${2:-1}" ] && return 0
    sleep 0.05
  done
  return 1
}
alive() { sleep 0.3; kill -0 "$DPID" 2>/dev/null; }

tok=$tmp/tokens
tokline alice "$A" > "$tok"
chmod 600 "$tok"

d_start hup --cluster 1x1 --tokens "$tok" --listen 127.0.0.1:0 || exit 1
check "token works before SIGHUP" answers "$A"
kill -HUP "$DPID"
check "alive after SIGHUP" alive
check "reload logged" logged "SIGHUP: tokens file .* reloaded: 1 token"
check "still answers after SIGHUP" answers "$A"

# a changed tokens file takes effect at the next SIGHUP: bob in, alice out
tokline bob "$B" > "$tok.new" && chmod 600 "$tok.new" && mv "$tok.new" "$tok"
check "bob refused before the reload" refused "$B"
kill -HUP "$DPID"
check "second reload logged" logged "SIGHUP: tokens file .* reloaded: 1 token" 2
check "new token works after SIGHUP" answers "$B"
check "removed token gets 401 after SIGHUP" refused "$A"

# a tokens file that fails to load keeps the tokens in force
echo "garbage" > "$tok"
kill -HUP "$DPID"
check "failed reload logged" logged "not reloaded, the previous tokens stay in force"
check "alive after a failed reload" alive
check "old tokens still work after a failed reload" answers "$B"
check "SIGTERM still stops cleanly" d_stop

# without --tokens SIGHUP is only logged
d_start notok --cluster 1x1 || exit 1
kill -HUP "$DPID"
check "alive after SIGHUP without tokens" alive
check "SIGHUP without tokens logged" logged "SIGHUP: nothing to reload"
quiet_queue() { g queue > /dev/null; }
check "answers after SIGHUP without tokens" quiet_queue
check "SIGTERM stops cleanly after SIGHUP" d_stop

# --log-file: the daemon's log goes to FILE; SIGHUP reopens it (logrotate: move, then HUP)
lf=$tmp/gsched.log
inlog() {
  for _ in $(seq 100); do grep -Eq -- "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  return 1
}
d_start logf --cluster 1x1 --log-file "$lf" || exit 1
check "the log file gets the daemon's lines" inlog "$lf" "serving on "
check "the log file is mode 0600" [ "$(stat -c %a "$lf")" = 600 ]
check "nothing left on stderr" sh -c "! grep -q 'serving on' '$DDIR/daemon.log'"
mv "$lf" "$lf.1"
kill -HUP "$DPID"
check "alive after SIGHUP with a log file" alive
check "SIGHUP opens a new file at the same path" inlog "$lf" "SIGHUP: log file .* reopened"
"$bin" submit --server "$SERVER" --name after-hup -- true > /dev/null
check "later lines go to the new file" inlog "$lf" "job 1 .*started"
check "the moved file gets no new line" sh -c "! grep -q 'job 1' '$lf.1'"
check "SIGTERM stops cleanly with a log file" d_stop
check "the stop is logged in the new file" inlog "$lf" "shutting down"
out=$("$bin" serve --cluster 1x1 --db "$tmp/x.db" --socket "$tmp/x.sock" --single-user \
      --log-file "$tmp/no-such-dir/gsched.log" 2>&1); rc=$?
check "an unopenable log file is refused at start (exit 2)" [ "$rc" -eq 2 ]
check "... saying why" sh -c "printf '%s' \"\$1\" | grep -q 'cannot open log file'" sh "$out"
finish
