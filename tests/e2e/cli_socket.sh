#!/usr/bin/env bash
# The CLI over the daemon's Unix socket speaks HTTP itself: it neither links nor loads libcurl
# (whose dependencies cost each CLI process about 5 ms), so it works where libcurl cannot be
# loaded at all; over TCP it loads libcurl when it needs it.  Also
# the answers the socket client must read whole: a large queue, a job's log, errors (problem
# documents with their status), and the exit code of a socket nobody serves.
# usage: cli_socket.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

# a libcurl.so.4 the dynamic loader cannot load: a program that needs it does not start
mkdir -p "$tmp/badlib"
echo 'not a library' > "$tmp/badlib/libcurl.so.4"
cli() { LD_LIBRARY_PATH=$tmp/badlib "$bin" "$@"; }

d_start sock --cluster 2x2 --grace 1s || { bad "daemon start"; finish; }
expect 0 "gsched" -- cli version
id=$(cli submit --parsable --server "$SERVER" -G 1 -- sh -c 'echo hello from the task') ||
  bad "submit without libcurl"
check "submit without libcurl gives an id" [ -n "$id" ]
check "the job ran" wait_state "$id" DONE 20
expect 0 "hello from the task" -- cli logs --server "$SERVER" "$id"
expect 0 "State: +DONE" -- cli describe --server "$SERVER" job "$id"
expect 4 "" -- cli describe --server "$SERVER" job 999999
expect 2 "needs 99 GPUs" -- cli submit --server "$SERVER" -G 99 -- true
# a queue answer larger than one read (several tens of KB)
for i in $(seq 150); do
  cli submit --parsable --server "$SERVER" --hold -J "a-rather-long-job-name-to-fill-the-answer-$i" -- true > /dev/null
done
n=$(cli queue --server "$SERVER" -h | wc -l)
check "queue lists the 150 held jobs ($n)" [ "$n" -ge 150 ]
n=$(cli queue --server "$SERVER" --json | grep -o '"id"' | wc -l)
check "queue --json lists them too ($n)" [ "$n" -ge 150 ]
# the socket client loads no libcurl; TCP loads it when it needs it
loaded=$(LD_DEBUG=files "$bin" queue --server "$SERVER" 2>&1 | grep -c 'file=libcurl')
check "no libcurl loaded for a socket request ($loaded)" [ "$loaded" = 0 ]
loaded=$(LD_DEBUG=files "$bin" queue --server "http://127.0.0.1:1" 2>&1 | grep -c 'file=libcurl')
check "libcurl loaded for a TCP request ($loaded)" [ "$loaded" -gt 0 ]
expect 3 "cannot reach the gsched daemon" -- "$bin" queue --server "http://127.0.0.1:1"
# a socket nobody serves: unreachable (3), the socket named
d_stop
expect 3 "cannot reach the gsched daemon at unix:" -- cli queue --server "unix:$SOCK"
finish
