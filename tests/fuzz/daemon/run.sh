#!/usr/bin/env bash
# Seed the corpora and run the live scheduler's libFuzzer harnesses.
#
#   tests/fuzz/daemon/run.sh BUILD_DIR [SECONDS_EACH] [spec|http ...]
#
# BUILD_DIR was configured with
#   CC=clang cmake -S . -B BUILD_DIR -DGSCHED_FUZZ=ON
# and built with `cmake --build BUILD_DIR --target fuzzers-daemon`.  Corpora live in
# BUILD_DIR/fuzz-corpus/daemon-NAME (seeded on every run, findings kept), crashes in
# BUILD_DIR/fuzz-artifacts/daemon-NAME/.  Exit status 1 if a fuzzer found something.
# A crash input replays with: BUILD_DIR/fuzz-daemon/fuzz_daemon_NAME FILE
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "$here/../../.." && pwd)"
build="$(cd "${1:?usage: run.sh BUILD_DIR [SECONDS] [spec|http ...]}" && pwd)"
secs="${2:-120}"
shift $(($# < 2 ? $# : 2))
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(spec http)

seed() { # seed NAME ID CONTENT (printf format: \r\n escapes)
    mkdir -p "$build/fuzz-corpus/daemon-$1"
    printf "$3" > "$build/fuzz-corpus/daemon-$1/seed-$2"
}

# job specs: the documented examples and small YAML / JSON variants
mkdir -p "$build/fuzz-corpus/daemon-spec"
for f in "$src"/docs/examples/*.yaml; do cp "$f" "$build/fuzz-corpus/daemon-spec/seed-$(basename "$f")"; done
seed spec json '{"name": "bert", "vc": "research", "priority": "prod", "tasks": "2x4", "gang": false, "command": ["python", "train.py"], "env": {"A": "1"}, "time_limit": "1h30m", "duration": "00:10:00", "checkpoint": {"dir": "/ck", "grace_period": "60s"}, "cpus": 4, "memory": "32Gi", "gpu_type": "V100", "workdir": "/tmp", "pinned_cell": "c1", "lazy_preemption": true, "user": "bob"}'
seed spec yaml 'name: x\nqueue: q\npriority: 7\ntasks: 3\ngpus_per_task: 2\ncommand: sleep 1\nenv:\n  K: v\ntime_limit: 2-01:00:00\n'
seed spec flow '{command: true, gpus: 1, priority: oppo}\n'

# HTTP: one connection's bytes each (admin and user tokens, every route)
A='Authorization: Bearer root.fuzz-admin-secret\r\n'
U='Authorization: Bearer alice.fuzz-user-secret\r\n'
body='{"name": "f", "gpus": 2, "command": "true"}'
seed http submit "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Gsched-Client: 1\r\n${U}Content-Type: application/json\r\nContent-Length: ${#body}\r\n\r\n$body"
seed http submit-key "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Gsched-Client: 1\r\n${A}Idempotency-Key: k-1\r\nContent-Type: application/yaml\r\nContent-Length: 28\r\n\r\ncommand: sleep 1\ntasks: 2x2\n"
seed http dry "POST /v1/jobs?dry_run=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Gsched-Client: 1\r\n${U}Content-Type: application/json\r\nContent-Length: ${#body}\r\n\r\n$body"
seed http chunked "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Gsched-Client: 1\r\n${A}Transfer-Encoding: chunked\r\n\r\n10\r\n{\"command\": \"a\"\r\n1\r\n}\r\n0\r\n\r\n"
seed http list "GET /v1/jobs?state=all&user=alice&vc=default&limit=5&offset=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${A}\r\n"
seed http list-user "GET /v1/jobs?state=PD,R HTTP/1.1\r\nHost: 127.0.0.1\r\n${U}\r\nGET /v1/jobs/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${U}\r\n"
seed http job "GET /v1/jobs/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${A}\r\n"
seed http events "GET /v1/jobs/2/events HTTP/1.1\r\nHost: 127.0.0.1\r\n${A}\r\n"
seed http logs "GET /v1/jobs/1/logs?task=0&offset=3&limit=10 HTTP/1.1\r\nHost: 127.0.0.1\r\n${U}\r\n"
seed http cancel "DELETE /v1/jobs/3 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Gsched-Client: 1\r\n${U}\r\n"
seed http nodes "GET /v1/nodes?gpus=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${U}\r\nGET /v1/nodes/n1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${A}\r\n"
seed http vcs "GET /v1/vcs HTTP/1.1\r\nHost: 127.0.0.1\r\n${A}\r\n"
seed http open "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /v1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
seed http bad "PUT /v1/jobs/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Gsched-Client: 1\r\n${A}Content-Length: 2\r\n\r\n{}"
seed http noauth "GET /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic abc\r\n\r\n"

rc=0
for n in "${names[@]}"; do
    bin="$build/fuzz-daemon/fuzz_daemon_$n"
    [ -x "$bin" ] || { echo "missing $bin (build --target fuzzers-daemon)"; exit 2; }
    art="$build/fuzz-artifacts/daemon-$n"
    mkdir -p "$art"
    extra=()
    [ "$n" = http ] && extra=(-dict="$here/http.dict" -detect_leaks=0 -timeout=60)
    [ "$n" = spec ] && extra=(-dict="$here/spec.dict" -timeout=25)
    echo "== fuzz_daemon_$n for ${secs}s"
    if ! ASAN_OPTIONS=abort_on_error=1 LSAN_OPTIONS=suppressions="$here/lsan.supp" "$bin" -max_total_time="$secs" -artifact_prefix="$art/" \
        -print_final_stats=1 "${extra[@]}" "$build/fuzz-corpus/daemon-$n" \
        > "$build/fuzz-daemon-$n.log" 2>&1; then
        echo "fuzz_daemon_$n found something: $art ($(ls "$art" | head -3 | tr '\n' ' '))"
        grep -m5 -E "ERROR|invariant|runtime error" "$build/fuzz-daemon-$n.log" || true
        rc=1
    fi
    grep -E "^stat::number_of_executed_units|^stat::new_units_added|cov:" "$build/fuzz-daemon-$n.log" | tail -3
done
exit $rc
