#!/usr/bin/env bash
# The web dashboard (docs/dashboard.md) in a real headless chromium (issue 16, What to build
# 2): a daemon with tokens (an admin, alice, bob) on loopback TCP and fake GPUs in racks
# (2x2x4: racks r0, r1 of two 4-GPU nodes), VCs with quotas, jobs of two users (running, one on
# two nodes, pending in queue order, held, waiting on a dependency, finished), then every page
# of the DOM contract checked against the API by tests/browser/dashboard.js: GPU cells carry
# the job GET /v1/nodes?gpus=1 says and one colour per job, queue rows in position order with
# the API's reasons, VC numbers = GET /v1/vcs, job pages (state, spec, events, log tail), a
# cancel clicked on alice's job page reaching the daemon, bob seeing only what the API shows
# him, no console errors, no horizontal scrolling on a laptop screen. A screenshot of every page
# goes to BUILD/Testing/browser/ (BUILD: the directory of the gsched binary; or
# $GSCHED_BROWSER_SHOTS). Skips (exit 77) without node or chromium (.ci/run installs both).
# usage: dashboard_browser.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"
. "$src/tests/browser/env.sh"
trap 'browser_cleanup; d_cleanup' EXIT

shots=${GSCHED_BROWSER_SHOTS:-$(cd "$(dirname "$bin")" && pwd)/Testing/browser}
mkdir -p "$shots" && rm -f "$shots"/*.png

R=root.root-secret-0123456789ab
A=alice.alice-secret-0123456789
B=bob.bob-secret-0123456789abc
tok=$tmp/tokens
{ "$bin" token hash --user root --admin --token "$R" --iterations 1000
  "$bin" token hash --user alice --token "$A" --iterations 1000
  "$bin" token hash --user bob --token "$B" --iterations 1000; } > "$tok" 2>/dev/null
chmod 600 "$tok"

# a simulation report for the report page (two policies: report.html)
"$bin" sim --trace "$src/tests/golden/0001-fifo-hol/trace.csv" --cluster 1x4 --policy fifo,las \
  --out "$tmp/sim" -q > /dev/null || { bad "sim report"; finish; }

d_start dash --cluster 2x2x4:V100 --policy yarn-cs --set quotas=research:8,prod:8 --grace 1s \
  --stats-interval 1 --tokens "$tok" --listen 127.0.0.1:0 || { bad "daemon start"; finish; }
export GSCHED_TOKEN=$R # wait_state and g as the admin
as() { local t=$1; shift; "$bin" submit --parsable --server "$SERVER" --token "$t" "$@"; }

# finished jobs first (history), then 15 of the 16 GPUs busy, then the waiting ones
done1=$(as "$A" --vc research -J quick -G 1 -- true)
fail1=$(as "$B" --vc prod -J broken -G 1 -- sh -c 'exit 3')
wait_state "$done1" DONE && wait_state "$fail1" FAILED || { bad "finished jobs"; finish; }
a1=$(as "$A" --vc research -J train-a -G 4 -- sh -c 'echo hello from a1; exec sleep 600')
b1=$(as "$B" --vc prod -J bert --tasks 2x4 -- sleep 600)
a2=$(as "$A" --vc research -J victim -G 2 -- sleep 600)
b2=$(as "$B" --vc prod -J small -G 1 -- sleep 600)
a3=$(as "$A" --vc research -J big -G 4 -- sleep 600)
b3=$(as "$B" --vc prod -J waiting -G 2 -- sleep 600)
b5=$(as "$B" --vc prod -J waiting2 -G 2 -- sleep 600)
a4=$(as "$A" --vc research -J held -G 1 --hold -- sleep 600)
b4=$(as "$B" --vc prod -J after -G 1 -d "afterok:$b1" -- sleep 600)
# an array of 4 (at most 2 at once), all waiting behind the big job of its VC
arr=$(as "$A" --vc research -J sweep -G 4 --array 0-3%2 -- sleep 600)
for j in "$a1" "$b1" "$a2" "$b2"; do wait_state "$j" RUNNING || { bad "job $j running"; finish; }; done
check "the setup: 4 running, 9 pending" [ "$(g queue -r --no-headers | wc -l)" = 13 ]

export GS_URL=$URL GS_ADMIN=$R GS_ALICE=$A GS_BOB=$B GS_SHOTS=$shots GS_TMP=$tmp
export GS_REPORT=$tmp/sim/report.html
export GS_RACKS='{"n0":"r0","n1":"r0","n2":"r1","n3":"r1"}'
export GS_JOBS="{\"running_alice\":$a1,\"multinode\":$b1,\"cancel\":$a2,\"bob_running\":$b2,
  \"held\":$a4,\"done\":$done1,\"failed\":$fail1,\"bob_jobs\":[$fail1,$b1,$b2,$b3,$b5,$b4]}"
if timeout -k 5 480 "$NODE" "$src/tests/browser/dashboard.js"; then
  ok "the dashboard's pages in chromium (screenshots in $shots)"
else
  bad "the dashboard's pages in chromium (screenshots in $shots)"
  echo "  chromium's log (without its D-Bus noise):"
  grep -v -e dbus -e 'interface_endpoint_client' "$tmp/chromium.log" 2>/dev/null | tail -20 | sed 's/^/    /'
fi
check "the daemon stops cleanly" d_stop

# --insecure-tcp (loopback, no tokens: every TCP client is an admin): no token asked
d_start open --cluster 1x4:V100 --insecure-tcp --listen 127.0.0.1:0 || { bad "daemon start"; finish; }
unset GSCHED_TOKEN
j=$("$bin" submit --parsable --server "$SERVER" -G 2 -- sleep 600)
wait_state "$j" RUNNING || bad "job $j running"
q=$("$bin" submit --parsable --server "$SERVER" -G 4 -- sleep 600)
export GS_URL=$URL GS_RACKS='{}' GS_JOBS="{\"running_alice\":$j,\"queued\":$q}"
if timeout -k 5 120 "$NODE" "$src/tests/browser/dashboard.js" --insecure; then
  ok "the dashboard without tokens (--insecure-tcp)"
else
  bad "the dashboard without tokens (--insecure-tcp)"
fi
check "the daemon stops cleanly" d_stop
finish
