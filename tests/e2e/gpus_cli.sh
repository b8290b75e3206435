#!/usr/bin/env bash
# `gsched gpus` (issue 17): this machine's GPUs through NVML without a daemon, against a fake
# libnvidia-ml.so.1 (tests/fake_nvml.c, build/tests/fake-nvml) whose health a file drives
# (GSCHED_FAKE_NVML_HEALTH, read again at every NVML call): the readings, a GPU with pages
# pending retirement / row remapping / lost is UNHEALTHY with the reason (table and --json),
# an application Xid is not; no NVML is exit 1 with the reason; a library without the health
# functions (build/tests/fake-nvml-old, an older driver) lists the GPUs with HEALTH n/a and
# says why.
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
. "$src/tests/e2e/lib/daemon.sh"

fake=$(dirname "$bin")/tests/fake-nvml
if [ ! -f "$fake/libnvidia-ml.so.1" ]; then
  echo "not ok - no fake NVML library at $fake (built with the tests)"; exit 1
fi
export LD_LIBRARY_PATH=$fake GSCHED_FAKE_NVML="2:NVIDIA H200" GSCHED_FAKE_NVML_HEALTH=$tmp/health
: > "$tmp/health"

expect 0 "^ +0 +NVIDIA H200 +ok +40C +1024/81559MiB +0% +0 +-$" -- "$bin" gpus
expect 0 "^ +1 +NVIDIA H200 +ok " -- "$bin" gpus
expect 0 "^INDEX +NAME +HEALTH" -- "$bin" gpus
check "-H: no header" sh -c "! '$bin' gpus -H | grep -q INDEX"
printf '1 pending_retire\n0 temp 71\n0 mem_used 2048\n0 util 35\n1 ecc 2\n' > "$tmp/health"
expect 0 "^ +1 +NVIDIA H200 +UNHEALTHY .* 2 +pages pending retirement \(reset the GPU\)$" -- "$bin" gpus
expect 0 "^ +0 +NVIDIA H200 +ok +71C +2048/81559MiB +35%" -- "$bin" gpus
expect 0 '"reason": "pages pending retirement' -- "$bin" gpus --json
expect 0 '"ecc_uncorrected": 2' -- "$bin" gpus --json
expect 0 '"uuid": "GPU-fa4e0000-0000-0000-0000-000000000001"' -- "$bin" gpus --json
printf '0 remap_pending\n1 remap_failure\n' > "$tmp/health"
expect 0 "^ +0 .*UNHEALTHY .*row remapping pending \(reset the GPU\)$" -- "$bin" gpus
expect 0 "^ +1 .*UNHEALTHY .*row remapping failed$" -- "$bin" gpus
printf '1 lost\n0 xid 13\n' > "$tmp/health"
expect 0 "^ +1 .*UNHEALTHY .*GPU lost \(GPU is lost\)$" -- "$bin" gpus
expect 0 "^ +0 +NVIDIA H200 +ok " -- "$bin" gpus
expect 0 '"lost": true' -- "$bin" gpus --json
expect 0 '"healthy": true' -- "$bin" gpus --json
: > "$tmp/health"
expect 1 "NVML not available" -- env LD_LIBRARY_PATH=$tmp/none "$bin" gpus
expect 1 "NVML reports no GPUs" -- env GSCHED_FAKE_NVML=0 "$bin" gpus
expect 1 "nvmlInit failed: Driver Not Loaded" -- env GSCHED_FAKE_NVML=init-fail "$bin" gpus
expect 0 "lacks the GPU health functions" -- env LD_LIBRARY_PATH=${fake}-old "$bin" gpus
expect 0 "^ +0 +NVIDIA H200 +n/a " -- env LD_LIBRARY_PATH=${fake}-old "$bin" gpus
expect 2 "unexpected argument" -- "$bin" gpus extra
expect 0 "usage: gsched gpus" -- "$bin" gpus --help
finish
