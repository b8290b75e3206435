#!/usr/bin/env bash
# Issue 11 item 1: every job ran as the daemon's Unix user (root): a job of alice read bob's
# log, the tokens file and the database, and killed bob's task through its pid file; any local
# user's unauthenticated submit ran as root.  Now a daemon running as root runs each job as
# its owner's Unix account (uid, gid and supplementary groups set in the task's process by the
# shim, which keeps root for the daemon's bookkeeping); what the daemon trusts (runs/: pid and
# status files), the database, the tokens file and other users' job directories are out of a
# job's reach; a job of root is refused unless `serve --allow-root-jobs`; an unauthenticated
# (X-Gsched-User) submit to a root daemon is refused; a name without a Unix account is refused
# at submit, and a job whose account is gone by launch time FAILS with the reason.
# Needs root (it creates the users gst-alice, gst-bob, gst-carol and the group gst-team, and
# removes those it created).
# usage: privsep.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
. "$src/tests/e2e/lib/root.sh"
need_root "creates Unix users and runs a daemon that switches to them" privsep useradd userdel groupadd groupdel
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

# users and a supplementary group; remove at exit only what this test created
made_users="" made_group=""
cleanup_users() {
  local u
  for u in $made_users; do userdel "$u" 2> /dev/null; done
  [ -n "$made_group" ] && groupdel "$made_group" 2> /dev/null
  return 0
}
trap 'd_cleanup; cleanup_users' EXIT
if ! getent group gst-team > /dev/null; then
  groupadd gst-team || { echo "SKIP: groupadd failed"; exit 77; }
  made_group=gst-team
fi
for u in gst-alice gst-bob gst-carol; do
  if ! id "$u" > /dev/null 2>&1; then
    useradd -M -d /nonexistent -s /bin/sh "$u" || { echo "SKIP: useradd $u failed"; exit 77; }
    made_users="$made_users $u"
  fi
done
usermod -a -G gst-team gst-alice

A=gst-alice.alice-secret-0123456789
B=gst-bob.bob-secret-0123456789abc
C=gst-carol.carol-secret-0123456789
R=root.root-admin-secret-0123456789
D=lab-dave.dave-secret-0123456789 E=lab-erin.erin-secret-0123456789 # mapped by the tokens file
tok=$tmp/tokens
{
  "$bin" token hash --user gst-alice --token "$A" --iterations 1000
  "$bin" token hash --user gst-bob --token "$B" --iterations 1000
  "$bin" token hash --user gst-carol --token "$C" --iterations 1000
  "$bin" token hash --user root --admin --token "$R" --iterations 1000
  "$bin" token hash --user lab-dave --token "$D" --iterations 1000 --unix-user gst-alice
  "$bin" token hash --user lab-erin --token "$E" --iterations 1000 --unix-user gst-nobody-here
} > "$tok" 2> /dev/null
chmod 600 "$tok"
export GSCHED_TOKEN=$R # the helpers (wait_state, field...) look as the admin
chmod 711 "$tmp" # jobs may pass through to their own directory under the log directory

D_MULTIUSER=1 d_start multi --cluster 1x2 --tokens "$tok" --listen 127.0.0.1:0 --grace 2s || exit 1
S=$DDIR/gsched.d L=$DDIR/logs # state and log directories (tests/e2e/lib/daemon.sh)
sub() { local t=$1; shift; "$bin" submit --parsable --server "$SERVER" --token "$t" -D "$tmp" "$@"; }
lg() { "$bin" logs "$1" --server "$SERVER" --token "$R" 2> /dev/null; }

# bob: a secret in his log, then he runs until the test has seen alice's attack (a file the
# test creates; at most 60 s)
bob=$(sub "$B" --gpus 1 -- sh -c 'echo BOB-SECRET-LINE; i=0
  while [ ! -e "$0" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; echo bob-finished' "$tmp/bob-go")
check "bob's job accepted" test -n "$bob"
wait_state "$bob" RUNNING 20
for _ in $(seq 100); do [ -s "$S/runs/$bob.1/task-0.pid" ] && break; sleep 0.05; done
bobpid=$(cut -d' ' -f1 "$S/runs/$bob.1/task-0.pid" 2> /dev/null)
check "bob's task has a pid file" test -n "$bobpid"
for _ in $(seq 100); do grep -q BOB-SECRET-LINE "$L/$bob/task-0.log" 2> /dev/null && break; sleep 0.05; done

# alice: every attempt prints DENIED or OPEN
cat > "$tmp/attack.sh" << 'EOF'
try() { local what=$1; shift; if "$@" > /dev/null 2>&1; then echo "OPEN: $what"; else echo "DENIED: $what"; fi; }
try "read bob's log" cat "$BOBLOG"
try "read the tokens file" cat "$TOKENS"
try "read the database" cat "$DB"
try "open the database for writing" sh -c ': >> "$DB"'
try "query the database" sqlite3 "$DB" 'select count(*) from jobs'
try "read bob's pid file" cat "$BOBPIDF"
try "kill bob's task group" kill -9 -"$BOBPID"
try "kill bob's task shim" kill -9 "$BOBPID"
try "write into runs/" touch "$STATE/runs/alice-was-here"
try "list the state directory" ls "$STATE"
try "list the log directory" ls "$LOGS"
try "list bob's job directory" ls "$LOGS/$BOBJOB"
try "list runs/" ls "$STATE/runs"
echo "UID=$(id -u)"
echo "GROUPS=$(id -G | tr ' ' '\n' | sort -n | tr '\n' ' ')"
echo "HOME=$HOME USER=$USER"
touch "$GSCHED_JOB_DIR/scratch" && echo "JOBDIR-WRITABLE"
EOF
chmod 644 "$tmp/attack.sh"
alice=$(sub "$A" --gpus 1 --env "BOBLOG=$L/$bob/task-0.log" --env "TOKENS=$tok" \
          --env "DB=$DDIR/gsched.db" --env "BOBPIDF=$S/runs/$bob.1/task-0.pid" --env "BOBPID=$bobpid" \
          --env "STATE=$S" --env "LOGS=$L" --env "BOBJOB=$bob" -- sh "$tmp/attack.sh")
check "alice's job accepted" test -n "$alice"
check "alice's job DONE" wait_state "$alice" DONE 60
out=$(lg "$alice")
opened=$(printf '%s\n' "$out" | grep '^OPEN:')
check "every attempt of alice's job failed${opened:+: $opened}" test -z "$opened"
check "13 attempts made" test "$(printf '%s\n' "$out" | grep -c '^DENIED:')" = 13
check "id -u in the job is gst-alice's ($(id -u gst-alice))" \
  contains "$out" "UID=$(id -u gst-alice)"$'\n'
want_groups=$(id -G gst-alice | tr ' ' '\n' | sort -n | tr '\n' ' ')
check "id -G in the job is gst-alice's groups ($want_groups)" contains "$out" "GROUPS=$want_groups"
check "HOME and USER from gst-alice's passwd entry" contains "$out" "HOME=/nonexistent USER=gst-alice"
check "the job's directory is writable by the job" contains "$out" "JOBDIR-WRITABLE"
check "bob's job still running after the attack" test "$(state "$bob")" = RUNNING
touch "$tmp/bob-go"
check "bob's job finishes DONE" wait_state "$bob" DONE 30
check "bob's log intact" contains "$(lg "$bob")" "bob-finished"
check "nothing written into runs/" test ! -e "$S/runs/alice-was-here"

# files: runs/ is the daemon's; a job's directory and logs are its owner's only
own() { stat -c '%U %a' "$1" 2> /dev/null; }
check "runs/ root 700 ($(own "$S/runs"))" test "$(own "$S/runs")" = "root 700"
check "state dir root 700 ($(own "$S"))" test "$(own "$S")" = "root 700"
check "log dir root 711 ($(own "$L"))" test "$(own "$L")" = "root 711"
check "alice's job dir gst-alice 700 ($(own "$L/$alice"))" test "$(own "$L/$alice")" = "gst-alice 700"
check "alice's log gst-alice 600 ($(own "$L/$alice/task-0.log"))" \
  test "$(own "$L/$alice/task-0.log")" = "gst-alice 600"
check "the database 600" test "$(stat -c %a "$DDIR/gsched.db")" = 600

# a link planted in the job's directory is not followed by the daemon (logs, next run)
ln -sf "$tok" "$L/$alice/task-0.log"
check "a symlink in place of a log is not served" eval '! lg "$alice" | grep -q pbkdf2'

# submit-time refusals: root without --allow-root-jobs, a user without an account
out=$("$bin" submit --server "$SERVER" --token "$R" -D "$tmp" -- id -u 2>&1); rc=$?
check "a job of root is refused without --allow-root-jobs (exit $rc)" test "$rc" != 0
check "... naming --allow-root-jobs" contains "$out" "--allow-root-jobs"
out=$("$bin" submit --server "$SERVER" --token "$R" --user gst-nobody-here -D "$tmp" -- true 2>&1); rc=$?
check "a user without a Unix account is refused at submit (exit $rc)" test "$rc" != 0
check "... saying so" contains "$out" "no Unix user 'gst-nobody-here'"

# the tokens file's 7th field names the account: lab-dave runs as gst-alice
id=$(sub "$D" --gpus 1 -- id -u)
check "a token user mapped by the tokens file is accepted" wait_state "$id" DONE 30
check "... and runs as the account it names" contains "$(lg "$id")" $'\n'"$(id -u gst-alice)"$'\n'
out=$("$bin" submit --server "$SERVER" --token "$E" -C "$tmp" -- true 2>&1); rc=$?
check "a mapping to a missing account is refused at submit (exit $rc)" test "$rc" != 0
check "... saying so" contains "$out" "the tokens file names"

# an account deleted between submit and launch: FAILED with the reason, not requeued
hold=$(sub "$A" --gpus 2 -- sleep 5)
wait_state "$hold" RUNNING 20
carol=$(sub "$C" --gpus 1 -- true)
check "carol's job waits" test "$(state "$carol")" = PENDING
if [[ " $made_users " == *" gst-carol "* ]]; then
  userdel gst-carol
  made_users=${made_users/gst-carol/}
  check "carol's job FAILED once her account is gone" wait_state "$carol" FAILED 30
  check "... with the reason" contains "$(field "$carol" Reason)" "no Unix user 'gst-carol'"
fi
# gsched run (issue 16): an interactive job runs as its owner too, its stdin a pipe it inherits
# (nothing to open: no file another account could reach)
out=$(printf 'hi\n' | "$bin" run --server "$SERVER" --token "$A" -D "$tmp" -- sh -c 'read l; echo "$l $(id -un)"' 2>&1)
check "gsched run: stdin reaches alice's task, which runs as alice (got '$out')" test "$out" = "hi gst-alice"
check "graceful stop" d_stop

# --allow-root-jobs: root's job runs as root
D_MULTIUSER=1 d_start rootok --cluster 1x1 --tokens "$tok" --listen 127.0.0.1:0 --allow-root-jobs || exit 1
id=$("$bin" submit --parsable --server "$SERVER" --token "$R" -D "$tmp" -- id -u 2>&1)
check "a job of root is accepted with --allow-root-jobs" wait_state "$id" DONE 30
check "... and runs as root" contains "$("$bin" logs "$id" --server "$SERVER" --token "$R")" $'\n0\n'
check "graceful stop" d_stop

# no tokens (TCP with --insecure-tcp): X-Gsched-User is a claim, and a root daemon refuses to
# run it as anyone
D_MULTIUSER=1 d_start claimed --cluster 1x1 --listen 127.0.0.1:0 --insecure-tcp || exit 1
unset GSCHED_TOKEN
out=$(USER=gst-alice "$bin" submit --server "$SERVER" -D "$tmp" -- id -u 2>&1); rc=$?
check "an unauthenticated submit to a root daemon is refused (exit $rc)" test "$rc" != 0
check "... pointing to tokens" contains "$out" "token"
check "nothing was queued" test -z "$("$bin" queue --all --no-headers --server "$SERVER" 2> /dev/null)"
check "graceful stop" d_stop
finish
