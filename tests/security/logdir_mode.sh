#!/usr/bin/env bash
# Review of the local-executor hardening, defect 3: on a multi-user daemon a job reaches its own
# directory (GSCHED_JOB_DIR = LOGDIR/JOB, also the workdir of a job whose user has no home)
# only through every directory above it.  The systemd unit made /var/log/gsched 0700
# (LogsDirectoryMode=0700) while the docs said 0711: every job of a user without a home failed
# three launches with "cannot start the task as the job's user: Permission denied" (the real
# cause: it could not enter its job directory), and nothing said why.  Also the workdir check
# at submit ran as root, so any user could probe paths only root can see (`-D /root/secret`
# accepted, `-D /root/nonexistent` refused).  Now:
#   - the unit says LogsDirectoryMode=0711; a directory above the log directory that others
#     cannot pass gets a warning at start naming it and the fix; the directories the daemon
#     creates for the log directory are 0711;
#   - a task that cannot enter its workdir says so ("cannot enter the workdir ...");
#   - on a multi-user daemon the submit-time workdir check runs as the job's account: a path
#     it cannot see gets the same answer as one that does not exist.
# Needs root (creates the user gst-nohome, removed at exit if this test made it).
# usage: logdir_mode.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
# the unit file (any user)
if ! grep -qx 'LogsDirectoryMode=0711' "$src/contrib/gsched.service"; then
  echo "not ok - contrib/gsched.service: LogsDirectoryMode is not 0711"
  exit 1
fi
echo "ok - contrib/gsched.service: LogsDirectoryMode=0711"
. "$src/tests/e2e/lib/root.sh"
need_root "a multi-user daemon and a Unix user" privsep useradd userdel
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"
U=gst-nohome MADE=""
trap 'd_cleanup; [ -n "$MADE" ] && userdel "$MADE" 2> /dev/null' EXIT
if ! id "$U" > /dev/null 2>&1; then
  useradd -M -d /nonexistent -s /bin/sh "$U" || { echo "SKIP: useradd $U failed"; exit 77; }
  MADE=$U
fi
UT=$U.nohome-secret-0123456789abcdef R=root.root-admin-secret-0123456789
{
  "$bin" token hash --user "$U" --token "$UT" --iterations 1000
  "$bin" token hash --user root --admin --token "$R" --iterations 1000
} > "$tmp/tokens" 2> /dev/null
chmod 600 "$tmp/tokens"
export GSCHED_TOKEN=$R
usub() { "$bin" submit --parsable --server "$SERVER" --token "$UT" "$@"; }
# a job without a workdir (the CLI sends its current directory): through the API; prints its id
nowd() {
  curl -s -H "Authorization: Bearer $UT" -H 'Content-Type: application/json' -H 'X-Gsched-Client: 1' \
    -d "{\"command\": \"$1\", \"gpus\": 1}" "$URL/v1/jobs" | grep -o '"id": *[0-9]*' | grep -o '[0-9]*$'
}

# 1. a log directory below a directory others cannot pass ($tmp/closed, 0700)
mkdir -m 0700 "$tmp/closed"
chmod 0711 "$tmp"
D_MULTIUSER=1 d_start closed --cluster 1x1 --tokens "$tmp/tokens" --listen 127.0.0.1:0 \
  --log-dir "$tmp/closed/logs" --launch-attempts 1 || exit 1
check "a warning at start names the directory others cannot pass" \
  grep -q "warning: '$tmp/closed' (mode 0700) cannot be passed by other users" "$DDIR/daemon.log"
# no home, no workdir: the job starts in its job directory, which it cannot reach
id=$(nowd 'pwd')
[ -n "$id" ] || bad "submit as $U"
check "the job of a user without a home fails" wait_state "$id" FAILED 30
r=$(field "$id" Reason)
check "its reason names the real cause: the workdir ($r)" contains "$r" "cannot enter the workdir '$tmp/closed/logs/$id' as the job's user"
check "... not 'cannot start the task as the job's user'" eval '! contains "$r" "cannot start the task as the job"'
d_stop

# 2. the directories the daemon creates for the log directory are 0711, jobs reach theirs
D_MULTIUSER=1 d_start open --cluster 1x1 --tokens "$tmp/tokens" --listen 127.0.0.1:0 \
  --log-dir "$tmp/new1/new2/logs" || exit 1
check "no warning when every directory above is passable" eval '! grep -q "cannot be passed by other users" "$DDIR/daemon.log"'
for d in new1 new1/new2 new1/new2/logs; do
  check "$d: created 0711 ($(stat -c %a "$tmp/$d"))" test "$(stat -c %a "$tmp/$d")" = 711
done
id=$(nowd 'echo in=$(pwd) uid=$(id -u)')
[ -n "$id" ] || bad "submit as $U"
check "the job of a user without a home runs in its job directory" wait_state "$id" DONE 30
check "... there, as its user" contains "$(g logs "$id")" "in=$tmp/new1/new2/logs/$id uid=$(id -u "$U")"

# 3. workdir at submit: checked as the job's user, no probing of what only root sees
mkdir -m 0700 "$tmp/rootonly"
mkdir "$tmp/rootonly/secretdir"
mkdir -m 0755 "$tmp/pub"
chmod 0711 "$tmp" # (new1 above made it so already)
a=$(usub --gpus 1 -D "$tmp/rootonly/secretdir" -- true 2>&1) && bad "a workdir only root can enter is accepted (job $a)"
b=$(usub --gpus 1 -D "$tmp/rootonly/nonexistent" -- true 2>&1) && bad "a workdir that does not exist is accepted (job $b)"
check "refused: a workdir $U cannot enter ($a)" contains "$a" "no directory there that Unix user '$U' can enter"
check "the same answer for one that does not exist ($b)" [ "${a//secretdir/X}" = "${b//nonexistent/X}" ]
id=$(usub --gpus 1 -D "$tmp/pub" -- pwd) || bad "a workdir $U can enter is refused"
check "a workdir $U can enter is accepted and used" wait_state "$id" DONE 30
check "... as the job's working directory" contains "$(g logs "$id")" "$tmp/pub"
d_stop
finish
