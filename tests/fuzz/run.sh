#!/usr/bin/env bash
# Seed the corpora and run the libFuzzer harnesses (docs/testing.md).
#
#   tests/fuzz/run.sh BUILD_DIR [SECONDS_EACH] [NAME...]
#
# BUILD_DIR was configured with -DCMAKE_C_COMPILER=clang -DGSCHED_FUZZ=ON and
# built with --target fuzzers.  Corpora live in BUILD_DIR/fuzz-corpus/NAME
# (seeded from data/ and tests/ on every run; what the fuzzer finds is kept),
# crashes in BUILD_DIR/fuzz-artifacts/NAME/.  Exit status 1 if a fuzzer found
# something.  NAME: csv trace cluster hived events params scenario sim pollux.
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:?usage: run.sh BUILD_DIR [SECONDS] [NAME...]}"
secs="${2:-60}"
shift $(($# < 2 ? $# : 2))
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(csv trace cluster hived events params scenario sim pollux)
build="$(cd "$build" && pwd)"
fz="$build/tests/fuzz"

put() { # put NAME PREFIX-BYTE-OCTAL FILE [HEAD-BYTES]
    local d="$build/fuzz-corpus/$1"
    mkdir -p "$d"
    local out="$d/seed-$(basename "$3")-$2"
    { [ -n "$2" ] && [ "$2" != "-" ] && printf "\\$2"; head -c "${4:-4096}" "$3"; } > "$out"
}
text() { # text NAME ID PREFIX-OCTAL CONTENT
    local d="$build/fuzz-corpus/$1"
    mkdir -p "$d"
    { [ "$3" != "-" ] && printf "\\$3"; printf '%s' "$4"; } > "$d/seed-$2"
}

traces=("$src"/data/tiresias/60_job.csv "$src"/data/philly-1day/philly_20171002_tiresias.csv
        "$src"/data/philly/philly.csv "$src"/data/examples/mini.csv "$src"/tests/golden/*/trace.csv)
for f in "${traces[@]}" "$src"/data/tiresias/cluster_spec.csv "$src"/data/philly-1day/*.csv \
         "$src"/tests/golden/*/expected-jobs.csv; do
    put csv - "$f"
done
for f in "${traces[@]}" "$src"/data/gavel/traces/physical_cluster/*.trace \
         "$src"/data/gavel/traces/msr/seed=0/51b7ef.trace; do
    put trace - "$f"
done
put trace - "$src"/data/pollux/workloads/workload-1.csv
put pollux 000 "$src"/data/pollux/traces/cifar10/placements.csv
put pollux 001 "$src"/data/pollux/traces/cifar10/scalability.csv
for f in "$src"/data/pollux/traces/cifar10/validation-*.csv; do put pollux 002 "$f"; done
text trace native-all - 'id,submit,duration,gpus,tasks,gpus_per_task,gpu_type,user,vc,priority,model,iterations,name,cpus,mem,gpu_mem,gang,min_gpus,max_gpus,pinned_cell,lazy_preemption
1,0,3600,8,2,4,V100,alice,VC1,prod,resnet50,10,"a, ""b""",4,32G,16G,true,4,8,VC2-K80,false
2,1.5,60,,3,,,,VC2,oppo,,,,,,,false,,,,true
'
for s in 8 4x8 2x16x8:V100 1x1x1 "3X2:K80" "9x4:V100,9x4:P100,9x4:K80" "36/4:V100,2x2x2:K80,8"; do
    text cluster "sh-${s//\//_}" 000 "$s"
done
for f in "$src"/data/gavel/traces/msr/cluster_specs*.json; do put cluster 003 "$f"; done
text cluster gavel-two 003 '{"a": ["8:0:0"], "b": "0:4:2"}
'
text cluster tiresias-typed 001 'num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node,gpu_type
2,4,8,64,256,V100
1,2,4,32,128,K80
'
for f in "$src"/data/tiresias/cluster_spec.csv "$src"/data/philly-1day/n*.csv "$src"/data/tiresias/n256g8.csv; do
    put cluster 001 "$f"
done
for f in "$src"/data/examples/hived-basic.yaml "$src"/tests/scenarios/clusters/*.yaml \
  "$src"/tests/hived-configs/*/*.yaml "$src"/tests/hived-configs/*/*/*.yaml; do
  put hived - "$f" 16384
done
text events plain - '0,n0,down
3600,n0,up
'
text events header - 'time,node,state
# comment
12.5,node1,down
"13",node1,up
'
i=0
for p in "slowdown=off
preempt_cost=30s" "queues=100,3600,7200
promote_knob=8" "quotas=VC1:4,VC2:8
relax=on
relax_rack=1m
relax_any=2m
borrow=off
hol=on" "intra=tiresias-las
queues=60" "fit=best
slowdown_default=1,1,1.1,1.2,1.5,2
heavy_models=vgg,gpt
ckpt_bw=1e9
init_base=5s
init_per_gpu=3750ms
optimizer_slots=2" "gittins_samples=x.csv
%%samples
gpu_time
10
200.5
3600
99999"; do
    for b in 000 100 200 300 001 102 203 304 305 206 107 010 211 312; do
        text params "p$i-$b" "$b" "$p"
    done
    i=$((i + 1))
done
for f in "$src"/tests/scenarios/*.yaml "$src"/tests/scenario-format/*.yaml "$src"/tests/scenario-format/fail/*.yaml; do put scenario - "$f" 16384; done
tir="$(mktemp)" # the first jobs of the 1-day Philly window, whole lines
head -c 1500 "$src"/data/philly-1day/philly_20171002_tiresias.csv | sed '$d' > "$tir"
for b in 000 001 002 003 004 005 006 007 010 011 012 013 014 015 016 017 200 240 300 340; do
    put sim "$b" "$src"/data/examples/mini.csv
    put sim "$b" "$src"/tests/golden/0002-backfill/trace.csv
    text sim "events-$b" "$b" 'id,submit,duration,gpus,gpus_per_task,vc,priority,model,gang
1,0,500,4,4,VC1,0,resnet50,true
2,0,300,4,2,VC2,prod,vgg16,true
3,10,50,1,1,VC1,oppo,bert,true
4,20,900,4,1,VC3,10,gpt2,false
5,30,100,8,8,VC3,0,,true
%%events
100,n1,down
200,node2,down
400,n1,up
450,node2,up
%%set
preempt_cost=10s
'
    put sim "$b" "$tir"
done
rm -f "$tir"

status=0
for n in "${names[@]}"; do
    dict=""
    case "$n" in
    trace | csv | events | sim) dict="-dict=$src/tests/fuzz/trace.dict" ;;
    hived | scenario) dict="-dict=$src/tests/fuzz/hived.dict" ;;
    params) dict="-dict=$src/tests/fuzz/params.dict" ;;
    esac
    mkdir -p "$build/fuzz-artifacts/$n"
    echo "== fuzz_$n for ${secs}s"
    if ! (cd "$build/fuzz-artifacts/$n" &&
        ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
            "$fz/fuzz_$n" -max_total_time="$secs" -timeout=25 -rss_limit_mb=4096 \
            -max_len=8192 -print_final_stats=1 $dict \
            -artifact_prefix="$build/fuzz-artifacts/$n/" "$build/fuzz-corpus/$n" \
            > "$build/fuzz-artifacts/$n/log.txt" 2>&1); then
        echo "   fuzz_$n FOUND A PROBLEM: see $build/fuzz-artifacts/$n/log.txt"
        status=1
    fi
    grep -E "^stat::number_of_executed_units|^stat::peak_rss|Done [0-9]+ runs" "$build/fuzz-artifacts/$n/log.txt" | sed 's/^/   /' || true
done
exit $status
