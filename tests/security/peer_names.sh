#!/usr/bin/env bash
# Socket identity went uid -> name -> account (issue 11 review, MEDIUM): a Unix user whose
# name is not a gsched user name (here 'gst-pn$', with a '$') was labelled `uidN`; if an
# account literally named `uidN` existed, the first user's jobs ran as that other account,
# and that account could list, read and cancel them.  Now a socket peer's jobs run as the
# peer's uid (run_as "#UID"), and a peer whose account name is not a gsched user name, or
# does not resolve back to its uid, is refused with a message saying why.
# Root only (useradd, a multi-user root daemon); else exit 77.
# usage: peer_names.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
. "$src/tests/e2e/lib/root.sh"
need_root "Unix users and a root daemon that switches users" peer_names useradd userdel runuser
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

B='gst-pn$' # a name outside [A-Za-z0-9_.@-]
P=gst-pnok  # an ordinary user
made=""
cleanup() {
  d_cleanup
  for u in $made; do userdel "$u" > /dev/null 2>&1; done
  return 0
}
trap cleanup EXIT
mk() {
  id "$1" > /dev/null 2>&1 && return 0
  useradd -M -d /nonexistent -s /bin/sh "$1" || { echo "SKIP: useradd '$1' failed"; exit 77; }
  made="$made $1"
}
mk "$B"
mk "$P"
buid=$(id -u "$B")
S=uid$buid # the account the old label pointed at
if id "$S" > /dev/null 2>&1; then
  echo "SKIP: an account named $S already exists (not ours)"
  exit 77
fi
mk "$S"
chmod 711 "$tmp"
cp "$bin" "$tmp/gsched" && chmod 755 "$tmp/gsched"
ub=$tmp/gsched
as() { local u=$1; shift; runuser -u "$u" -- "$@"; }

D_MULTIUSER=1 d_start names --cluster 1x2 --grace 1s || { bad "daemon start"; finish; }
chmod 755 "$DDIR"

# the user with an unusable name is refused (never labelled as another account)
out=$(as "$B" "$ub" submit --server "unix:$SOCK" -- id -u 2>&1); rc=$?
echo "# '$B' submits (exit $rc): $out"
check "'$B' cannot submit (exit != 0, got $rc)" test "$rc" != 0
check "... told why" eval '[[ $out == *"not a gsched user name"* ]]'
check "... and nothing was queued" eval "! g queue --all | grep -q \"[0-9]\""
h=$(as "$B" curl -s -w '\n%{http_code}' --unix-socket "$SOCK" http://localhost/v1/health)
check "health still answers it (200), as anonymous" \
  eval '[[ $h == *"\"identity\": \"anonymous\""* && $h == *200 ]]'
out=$(as "$S" "$ub" queue --all --server "unix:$SOCK" 2>&1)
check "the account $S sees no job of '$B'" eval '! printf "%s\n" "$out" | grep -q "$S"'

# an ordinary user's job runs as its uid, recorded as "#UID"
puid=$(id -u "$P")
jid=$(as "$P" "$ub" submit --parsable --server "unix:$SOCK" --workdir / -- id -u 2>&1)
check "$P submits ($jid)" eval '[ -n "$jid" ] && [ "${jid//[0-9]/}" = "" ]'
check "... its job ends DONE" wait_state "$jid" DONE 30
check "... owned by $P" test "$(field "$jid" User)" = "$P"
check "... with run_as \"#$puid\"" \
  eval 'dcurl -s "$URL/v1/jobs/$jid" | grep -q "\"run_as\": \"#$puid\""'
check "... and it ran as uid $puid" eval 'g logs "$jid" 2> /dev/null | grep -qx "$puid"'
check "daemon stops cleanly" d_stop
finish
