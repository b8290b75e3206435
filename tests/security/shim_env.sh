#!/usr/bin/env bash
# Two holes of the root daemon's local executor (multi-user mode):
#  1. the task shim (`gsched __shim`, which keeps root) was exec'd with the job's environment:
#     its dynamic loader honoured the job's LD_PRELOAD (LD_LIBRARY_PATH, LD_AUDIT,
#     GCONV_PATH...), so any user's `submit --env LD_PRELOAD=$HOME/x.so` ran code as root.
#     Now the shim's environment is empty; the job's environment reaches it through a
#     descriptor and becomes the command's after the privilege drop (the user's own command
#     still sees LD_PRELOAD, and PATH search still uses the job's PATH);
#  2. the shim was exec'd by the daemon binary's path: whoever could replace that file (root
#     serving from a normal user's clone) got root at the next launch.  Now the shim is the
#     daemon's own running binary (/proc/self/exe), whatever is at its path later.
# Needs root (creates the user gst-eve and removes it if it created it); the LD_PRELOAD part
# needs a C compiler (cc), skipped with a note without one.
# usage: shim_env.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
. "$src/tests/e2e/lib/root.sh"
need_root "a root daemon running jobs as a normal user's account" privsep useradd userdel
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"
made_user=""
trap 'd_cleanup; [ -n "$made_user" ] && userdel "$made_user" 2> /dev/null' EXIT
if ! id gst-eve > /dev/null 2>&1; then
  useradd -M -d /nonexistent -s /bin/sh gst-eve || { echo "SKIP: useradd gst-eve failed"; exit 77; }
  made_user=gst-eve
fi
euid=$(id -u gst-eve)
chmod 711 "$tmp" # the job passes through to its own directory under the log directory

E=gst-eve.eve-secret-0123456789abcdef R=root.root-admin-secret-0123456789
tok=$tmp/tokens
{
  "$bin" token hash --user gst-eve --token "$E" --iterations 1000
  "$bin" token hash --user root --admin --token "$R" --iterations 1000
} > "$tok" 2> /dev/null
chmod 600 "$tok"
export GSCHED_TOKEN=$R # the helpers (wait_state, field...) look as the admin

# the daemon runs from a copy of the binary, later replaced by a program that leaves a mark
# (what a user owning the build directory could do); clients use the real binary
mkdir -p "$tmp/build"
cp "$bin" "$tmp/build/gsched"
real=$bin bin=$tmp/build/gsched
D_MULTIUSER=1 d_start multi --cluster 1x2 --tokens "$tok" --listen 127.0.0.1:0 --grace 2s || exit 1
bin=$real
S=$DDIR/gsched.d L=$DDIR/logs
sub() { "$bin" submit --parsable --server "$SERVER" --token "$E" -D "$tmp" "$@"; }
lg() { "$bin" logs "$1" --server "$SERVER" --token "$R" 2> /dev/null; }

# a library that notes the euid of every process that loads it
mkdir -p "$tmp/lib" "$tmp/mark"
chmod 755 "$tmp/lib"
chmod 1777 "$tmp/mark"
so=""
if command -v cc > /dev/null; then
  cat > "$tmp/lib/evil.c" << 'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void note(void)
{
    const char *m = getenv("GST_MARK");
    FILE *f = m ? fopen(m, "a") : NULL;
    if (f) {
        fprintf(f, "euid=%d\n", (int)geteuid());
        fclose(f);
    }
}
EOF
  if cc -shared -fPIC -o "$tmp/lib/evil.so" "$tmp/lib/evil.c" 2> "$tmp/cc.err"; then
    chmod 755 "$tmp/lib/evil.so"
    so=$tmp/lib/evil.so
  else
    echo "# cc failed: $(head -3 "$tmp/cc.err")"
  fi
fi
[ -z "$so" ] && echo "# no working C compiler: the LD_PRELOAD part is skipped (the shim's environment is still checked)"
mark=$tmp/mark/loaded

# a program only the job's PATH finds
mkdir -p "$tmp/ubin"
printf '#!/bin/sh\necho "HELLO-FROM-JOB-PATH $GST_SECRET"\n' > "$tmp/ubin/gst-hello"
chmod 755 "$tmp/ubin" "$tmp/ubin/gst-hello"

envargs=(--env "GST_SECRET=job-secret-4242" --env "GST_MARK=$mark"
         --env "PATH=$tmp/ubin:/usr/bin:/bin" --env "LD_LIBRARY_PATH=$tmp/lib"
         --env "GLIBC_TUNABLES=glibc.malloc.check=3")
[ -n "$so" ] && envargs+=(--env "LD_PRELOAD=$so")
# the job prints what it sees, then runs until the test has looked at its shim (<= 60 s)
j=$(sub --gpus 1 "${envargs[@]}" -- sh -c 'echo "LDP=${LD_PRELOAD:-none}"; echo "UID=$(id -u)"
  gst-hello; i=0; while [ ! -e "$0" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
  echo job-finished' "$tmp/go")
check "the job is accepted" test -n "$j"
wait_state "$j" RUNNING 20
for _ in $(seq 100); do [ -s "$S/runs/$j.1/task-0.pid" ] && break; sleep 0.05; done
shim=$(cut -d' ' -f1 "$S/runs/$j.1/task-0.pid" 2> /dev/null)
check "the task has a pid file" test -n "$shim"
shimenv=$(tr '\0' '\n' < "/proc/$shim/environ" 2> /dev/null)
shimuid=$(awk '/^Uid:/ {print $3}' "/proc/$shim/status" 2> /dev/null)
check "the shim runs as root (euid $shimuid)" test "$shimuid" = 0
for v in GST_SECRET LD_PRELOAD LD_LIBRARY_PATH GLIBC_TUNABLES GST_MARK PATH GSCHED_JOB_ID; do
  check "the root shim's environment has no $v" test -z "$(printf '%s\n' "$shimenv" | grep "^$v=")"
done
touch "$tmp/go"
check "the job is DONE" wait_state "$j" DONE 60
out=$(lg "$j")
check "the job runs as gst-eve" contains "$out" "UID=$euid"
check "the job's command gets its environment (PATH search with the job's PATH)" \
  contains "$out" "HELLO-FROM-JOB-PATH job-secret-4242"
check "the job ran to its end" contains "$out" "job-finished"
if [ -n "$so" ]; then
  check "the job's own command sees LD_PRELOAD" contains "$out" "LDP=$so"
  check "the library ran in the job's processes (as uid $euid)" grep -qx "euid=$euid" "$mark"
  check "no code of the job's library ran as root ($(grep -c 'euid=0' "$mark" 2> /dev/null) times)" \
    test -z "$(grep -x 'euid=0' "$mark" 2> /dev/null)"
fi

# the daemon's binary path now holds someone else's program: launches still run gsched's shim
rm -f "$tmp/build/gsched"
printf '#!/bin/sh\necho "replaced binary ran as uid $(id -u)" >> %s/replaced-ran\nexit 0\n' \
  "$tmp" > "$tmp/build/gsched"
chmod 755 "$tmp/build/gsched"
j2=$(sub --gpus 1 -- sh -c 'echo SHIM-OK')
check "a job after the binary was replaced is accepted" test -n "$j2"
check "... is DONE" wait_state "$j2" DONE 30
out2=$(lg "$j2")
check "... ran its command under gsched's shim" contains "$out2" "SHIM-OK"
check "... whose exit line is in the log" contains "$out2" "task exited with code 0"
check "the program put at the binary's path never ran $(head -1 "$tmp/replaced-ran" 2> /dev/null)" \
  test ! -e "$tmp/replaced-ran"
check "graceful stop" d_stop
finish
