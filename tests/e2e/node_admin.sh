#!/usr/bin/env bash
# Node administration (issue 16): gsched node drain|resume|down on a live daemon with fake
# GPUs and the local executor.  drain: the job running there finishes, no new job starts
# there (another node takes it, or it waits while the other node is busy); down: the job
# running there is preempted (SIGTERM) and requeued, and restarts on the other node; resume:
# the node takes jobs again; a restart keeps the admin state; node events are rows shown by
# describe node; transitions that make no sense are refused (409).
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

d_start nadm --cluster 2x2 --grace 2s || { bad "daemon start"; finish; }

# a job that runs until its go-file exists (SIGTERM ends it like any sh)
waiter() { gsub -G 2 -- sh -c "while [ ! -f $tmp/go-$1 ]; do sleep 0.1; done"; }
# the node a running job is placed on ("n0:0-1" -> n0)
node_of() { field "$1" Placement | sed 's/:.*//'; }
nstate() { g nodes | awk -v n="$1" '$1 == n { print $2 }'; }
# poll until node $1 is in state $2 (bounded)
wait_node() {
  for _ in $(seq 200); do [ "$(nstate "$1")" = "$2" ] && return 0; sleep 0.1; done
  echo "  node $1: $(nstate "$1"), wanted $2"; return 1
}

a=$(waiter a)
check "job a runs" wait_state "$a" RUNNING 30
na=$(node_of "$a")
case $na in n0) nb=n1 ;; n1) nb=n0 ;; *) bad "job a's node: '$na'"; finish ;; esac

# ---- drain: a's node stays busy with a, takes nothing new
expect 0 "^Node $na drained$" -- g node drain "$na" --reason "disk swap"
expect 0 "^Node $na already drained$" -- g node drain "$na"
check "a draining node with a job says draining" wait_node "$na" draining
expect 0 "^$na +draining .*drained by [^ ]+: disk swap" -- g nodes
b=$(waiter b)
check "job b starts (on the other node)" wait_state "$b" RUNNING 30
check "... on $nb" [ "$(node_of "$b")" = "$nb" ]
c=$(waiter c)
sleep 1.5 # a few cycles: c must not start on the drained node
check "job c waits while $nb is busy and $na drained" [ "$(state "$c")" = PENDING ]
check "job a still runs on the drained node" [ "$(state "$a")" = RUNNING ]
touch "$tmp/go-a"
check "job a finishes on the drained node" wait_state "$a" DONE 30
check "... not preempted" [ "$(field "$a" Preemptions)" = 0 ]
check "the empty drained node says drained" wait_node "$na" drained
sleep 1.5
check "job c still waits (nothing starts on a drained node)" [ "$(state "$c")" = PENDING ]
touch "$tmp/go-b"
check "job c starts once $nb is free" wait_state "$c" RUNNING 30
check "... on $nb" [ "$(node_of "$c")" = "$nb" ]

# ---- refusals
expect 1 "node $nb is not drained or down" -- g node resume "$nb"
expect 4 "no node 'n9'" -- g node drain n9
expect 2 "usage: gsched node drain\|resume\|down\|bad\|good NAME" -- g node sideways "$na"

# ---- resume: the node takes jobs again
expect 0 "^Node $na resumed$" -- g node resume "$na" --reason "disk swapped"
check "a resumed node is idle" wait_node "$na" idle
d=$(waiter d)
check "job d starts on the resumed node" wait_state "$d" RUNNING 30
check "... on $na" [ "$(node_of "$d")" = "$na" ]

# ---- down: d is preempted (SIGTERM), requeued, and restarts on the other node once free
touch "$tmp/go-c"
check "job c finishes" wait_state "$c" DONE 30
expect 0 "^Node $na down \(preempted and requeued: $d\)$" -- g node down "$na" --reason "PSU"
expect 1 "is down: its jobs were requeued" -- g node drain "$na"
check "job d is requeued and runs again" wait_state "$d" RUNNING 30
check "... on $nb" [ "$(node_of "$d")" = "$nb" ]
check "... after one preemption" [ "$(field "$d" Preemptions)" = 1 ]
ev=$(events "$d")
check "d's events: preempted, requeued, then run again ($ev)" \
  bash -c "case '$ev' in *preempted*requeued\ resumed\ *|*preempted*requeued\ started\ *) exit 0;; esac; exit 1"
check "... its second run" [ "$(field "$d" Runs)" = 2 ]
check "the down node says down" wait_node "$na" down
expect 0 "^$na +down .*down by [^ ]+: PSU" -- g nodes

# node bad/good write node events too
expect 0 "^Node $nb marked bad$" -- g node bad "$nb" --reason "ECC"
expect 0 "^Node $nb marked good$" -- g node good "$nb"

# ---- the API shows the admin state
out=$(dcurl -s "$URL/v1/nodes/$na")
check "GET /v1/nodes/$na: admin_state down" contains "$out" '"admin_state": "down"'
check "... admin_reason" contains "$out" '"admin_reason": "PSU"'
check "... admin_by" contains "$out" '"admin_by": "'
check "... admin_since" contains "$out" '"admin_since": "'
dcurl -s "$URL/v1/nodes" > "$tmp/nodes.json"
adm() { python3 -c 'import json,sys; print({n["name"]: n.get("admin_state", "absent") for n in json.load(open(sys.argv[1]))["nodes"]}[sys.argv[2]])' "$tmp/nodes.json" "$1"; }
check "GET /v1/nodes: admin_state down for $na" [ "$(adm "$na")" = down ]
check "GET /v1/nodes: admin_state null for $nb" [ "$(adm "$nb")" = None ]

# ---- a restart keeps the admin state (and d keeps running on nb)
d_stop && ok "graceful stop" || bad "graceful stop"
d_start nadm --cluster 2x2 --grace 2s || { bad "daemon restart"; finish; }
check "after a restart the node is still down" wait_node "$na" down
expect 0 "^Admin: +down by [^ ]+ since [0-9T:.-]+Z: PSU" -- g describe node "$na"
desc=$(g describe node "$na")
evs=$(printf '%s\n' "$desc" | awk '/^Events:/ { on = 1; next } on && $1 != "TIME" { printf "%s ", $2 }')
check "describe node: events drain, resume, down ($evs)" [ "$evs" = "drain resume down " ]
evb=$(g describe node "$nb" | awk '/^Events:/ { on = 1; next } on && $1 != "TIME" { printf "%s ", $2 }')
check "describe node: events bad, good ($evb)" [ "$evb" = "bad good " ]
check "daemon log says the node stays down" grep -q "node $na stays down" "$DDIR/daemon.log"
check "job d still runs after the restart" wait_state "$d" RUNNING 10
e=$(waiter e)
sleep 1.5
check "job e waits: the down node takes nothing after the restart" [ "$(state "$e")" = PENDING ]
expect 0 "^Node $na resumed$" -- g node resume "$na"
check "job e starts on the resumed node" wait_state "$e" RUNNING 30
check "... on $na" [ "$(node_of "$e")" = "$na" ]
touch "$tmp/go-d" "$tmp/go-e"
check "d done" wait_state "$d" DONE 30
check "e done" wait_state "$e" DONE 30
check "admin changes logged" grep -q "node $na: down by .*: PSU" "$DDIR/daemon.log"
d_stop && ok "graceful stop" || bad "graceful stop"
finish
