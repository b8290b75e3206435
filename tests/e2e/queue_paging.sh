#!/usr/bin/env bash
# `gsched queue` paging (issue 16: fast at 10,000+ pending jobs): one page by default
# (500 jobs) with a footer saying how many jobs the selection has and how to see the
# others, --limit N (jobs per page), --page K, --all-pages; the footer on stderr under
# --noheader; --json whole unless paged; paging of a selection the CLI filters itself
# (names, several users) counts only the selected jobs; --format fields still get their
# values though the CLI now asks the daemon only for the keys it prints; POS skips held jobs.
# usage: queue_paging.sh GSCHED_BIN SOURCE_DIR
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

d_start paging --cluster 1x1 --grace 1s || { bad "daemon start"; finish; }

# one job holds the only GPU until the end; then 26 pending jobs: 13 named even, 13 odd,
# and a held one (no queue position)
hold="while [ ! -f '$tmp/go' ]; do sleep 0.05; done"
blocker=$("$bin" submit --parsable --server "$SERVER" --name blocker -G 1 -- sh -c "$hold")
for i in $(seq 1 26); do
  n=odd; [ $((i % 2)) = 0 ] && n=even
  "$bin" submit --parsable --server "$SERVER" --name "$n" -G 1 -t 10 -- true > /dev/null
done
held=$("$bin" submit --parsable --server "$SERVER" --name held -H -G 1 -- true)
check "28 jobs submitted" test "$held" = 28 -a "$blocker" = 1

rows() { grep -Ec '^ *[0-9]+(_[^ ]*)? ' <<< "$1"; }

out=$(g queue --limit 10)
check "--limit 10: 10 rows (got $(rows "$out"))" [ "$(rows "$out")" = 10 ]
check "--limit 10: footer" grep -qxF '(jobs 1-10 of 28; 18 more: --page 2 for the next 10, --all-pages for all)' <<< "$out"
check "--limit 10: the first jobs" sh -c "echo '$out' | sed -n 2p | grep -Eq '^ *1 +default +blocker'"
out=$(g queue --limit 10 --page 3)
check "--page 3: 8 rows" [ "$(rows "$out")" = 8 ]
check "--page 3: jobs 21-28" sh -c "echo '$out' | sed -n 2p | grep -Eq '^ *21 ' && echo '$out' | grep -Eq '^ *28 +default +held'"
check "--page 3: footer without more" grep -qxF '(jobs 21-28 of 28)' <<< "$out"
out=$(g queue --limit 10 --page 2)
check "--page 2: footer" grep -qxF '(jobs 11-20 of 28; 8 more: --page 3 for the next 8, --all-pages for all)' <<< "$out"
expect 0 'page 4 is empty: 28 jobs, 10 per page' -- "$bin" queue --limit 10 --page 4 --server "$SERVER"
out=$(g queue)
check "default: every job of a short queue, no footer" sh -c "[ $(rows "$out") = 28 ] && ! echo '$out' | grep -q '^(jobs'"
out=$(g queue --all-pages)
check "--all-pages: every job" [ "$(rows "$out")" = 28 ]

# positions: the queued jobs 2..27 are 1..26, the held job has none
out=$(g queue --all-pages -o '%i %t %r' -h)
check "held job listed" grep -qx '28 PD JobHeldUser' <<< "$out"
pos=$(g queue --all-pages | awk 'NR > 1 { print $1 ":" $NF }' | tr '\n' ' ')
want="1:- "; for i in $(seq 2 27); do want="$want$i:$((i - 1)) "; done; want="${want}28:- "
check "POS: 1..26 in submission order, none for the running and the held job" [ "$pos" = "$want" ]

# --noheader: the rows on stdout, the footer on stderr
g queue --limit 5 -h > "$tmp/o" 2> "$tmp/e"
check "-h: 5 lines on stdout" [ "$(wc -l < "$tmp/o")" = 5 ]
check "-h: footer on stderr" grep -qF '(jobs 1-5 of 28; 23 more' "$tmp/e"

# a selection the CLI filters (names): pages count the selected jobs only
out=$(g queue -n even,nosuch --limit 4 --page 2 -o '%i %j')
ids=$(sed -n '2,5p' <<< "$out" | cut -d' ' -f1 | tr '\n' ' ')
check "-n: page 2 of the even jobs: 5th to 8th (got $ids)" [ "$ids" = "11 13 15 17 " ]
check "-n: footer counts the selection" grep -qxF '(jobs 5-8 of 13; 5 more: --page 3 for the next 4, --all-pages for all)' <<< "$out"

# --json: whole unless paged; paged: the page, the selection's total, page and per_page
expect 0 '"total": 28' -- "$bin" queue --json --server "$SERVER"
n=$("$bin" queue --json --server "$SERVER" | grep -c '"id":')
check "--json: every job ($n)" [ "$n" = 28 ]
"$bin" queue --json --limit 10 --page 2 --server "$SERVER" > "$tmp/j"
check "--json page: 10 jobs" [ "$(grep -c '"id":' "$tmp/j")" = 10 ]
check "--json page: total, page, per_page" sh -c "grep -q '\"total\": 28' '$tmp/j' && grep -q '\"page\": 2' '$tmp/j' && grep -q '\"per_page\": 10' '$tmp/j'"
check "--json: the daemon's whole objects" grep -q '"gpus_per_task": 1' "$tmp/j"

# --format fields have their values (the CLI asks only for the keys it prints)
line=$(g queue -j 2 -h -o '%i|%j|%u|%t|%T|%l|%L|%M|%D|%b|%P|%r|%R|%q|%Q|%V|%S|%N')
IFS='|' read -r i j u t T l L M D b P r R q Q V S N <<< "$line"
check "-o: id name user state ($line)" test "$i $j $t $T" = "2 odd PD PENDING" -a -n "$u"
check "-o: time limit, time left, time used" [ "$l $L $M" = "10:00 10:00 0:00" ]
check "-o: nodes, GPUs per task, partition" [ "$D $b $P" = "1 gpu:1 default" ]
check "-o: reason" test "$R" = "($r)" -a -n "$r"
check "-o: QOS and priority" [ "$q $Q" = "normal 0" ]
check "-o: submit time set, no start" sh -c "[ '$V' != N/A ] && [ '$S' = N/A ] && [ -z '$N' ]"
out=$(g queue -j 1 -h -o '%i %t %N %R %S')
check "-o: the running job's nodes and start ($out)" sh -c "echo '$out' | grep -Eq '^1 R n0:0 n0:0 [0-9]{4}-'"

# usage errors
expect 2 "takes no --limit or --page" -- "$bin" queue --all-pages --limit 5 --server "$SERVER"
expect 2 "--page: expected a positive integer, got '0'" -- "$bin" queue --page 0 --server "$SERVER"
expect 0 "--all-pages" -- "$bin" queue --help

# the default page is 500 jobs: 1,010 more pending jobs (one curl, keep-alive)
urls=()
for _ in $(seq 1010); do urls+=("$URL/v1/jobs"); done
dcurl -s -X POST -H 'Content-Type: application/json' -H 'X-Gsched-Client: 1' \
  --data-binary '{"command": "true", "gpus": 1, "name": "many"}' "${urls[@]}" > /dev/null
out=$(g queue)
check "default: 500 rows (got $(rows "$out"))" [ "$(rows "$out")" = 500 ]
check "default: footer" grep -qxF '(jobs 1-500 of 1038; 538 more: --page 2 for the next 500, --all-pages for all)' <<< "$out"
out=$(g queue --page 3)
check "default size, page 3: 38 rows" [ "$(rows "$out")" = 38 ]
check "default size, page 3: footer" grep -qxF '(jobs 1001-1038 of 1038)' <<< "$out"
out=$(g queue --all-pages)
check "--all-pages: 1,038 rows" [ "$(rows "$out")" = 1038 ]

# a job array's pending elements share a row (123_[4-99]): the footer still counts jobs
"$bin" submit --server "$SERVER" --array 0-29 -G 1 -- true > /dev/null
out=$(g queue --limit 1050)
r=$(rows "$out")
check "array: its 12 elements on page 1 in one row ($r rows)" [ "$r" = 1039 ]
check "array: footer counts jobs" grep -qxF '(jobs 1-1050 of 1068; 18 more: --page 2 for the next 18, --all-pages for all)' <<< "$out"
out=$(g queue --limit 1050 --page 2)
check "array: page 2, the other 18 in one row" [ "$(rows "$out")" = 1 ]
check "array: page 2 footer" grep -qxF '(jobs 1051-1068 of 1068)' <<< "$out"

touch "$tmp/go"
"$bin" cancel --server "$SERVER" -u "$(id -un)" > /dev/null 2>&1
check "daemon stops" d_stop
finish
