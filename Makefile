# gsched - top-level convenience targets (the build itself is CMake).
#
#   make demo    install missing Debian packages, build, simulate the bundled
#                1-day Philly window under several policies -> demo-out/
#   make test    build and run every test (unit, golden, CLI, fidelity)
#   make test-asan  the same under AddressSanitizer + UBSan (build-asan/)
#   make bench   simulator benchmark on the full Philly trace (82,247 jobs),
#                then one hived scheduling pass on 16,384 GPUs (bench-hived)
#   make bench-hived  one hived / quota pass: 16,384 GPUs, 10,000 pending jobs
#   make bench-scale  1,000,000 generated jobs (Gavel's mix) at 90 % load of 16,384 GPUs under
#                every policy that is not an emulation (bench/bench_scale.sh; long: minutes)
#   make bench-elastic  one pollux (and afs) decision: 1,000 elastic jobs on 2,048 GPUs
#   make bench-gavel  one Gavel round (LP solve + mechanism): 1,000 jobs, 3 GPU types, 2,048 GPUs
#   make bench-daemon  live scheduler benchmark: durable submits/s, cycle latency, queue latency
#   make bench-slurm   gsched on Slurm vs Slurm's own scheduler on a private Slurm
#                fixture (root, Debian's Slurm packages; bench/bench_slurm.sh, a few minutes)
#   make bench-elastic-live  rescale latency of a live elastic PyTorch job on the CPU, from the
#                decision to the first step at the new size (python3-torch; about a minute)
#   make format  clang-format every tracked *.c / *.h in place (never *.h.in: the
#                @VAR@ placeholders of CMake templates do not survive it)
#   make format-check  the same files, checked only (CI runs it; fails on any change)
#
# CMAKE_ARGS is passed to every cmake configure, e.g. `make test CMAKE_ARGS=-DGSCHED_WERROR=ON`
# (what .ci/run does).
# Only Debian packages are used; `make deps` installs what is missing
# (as root, or through sudo).

BUILD      ?= build
BUILD_ASAN ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
DEPS       := cmake gcc make pkg-config libjansson-dev libfyaml-dev nettle-dev \
              libsqlite3-dev libmicrohttpd-dev libcurl4-openssl-dev libslurm-dev \
              libglpk-dev

DAY  := data/philly-1day/philly_20171002_tiresias.csv
SPEC := data/philly-1day/n32g8_2sw.csv
DEMO_POLICIES ?= fifo,fifo-backfill,yarn-cs,tiresias-las,gandiva

.PHONY: all deps build demo test test-asan bench bench-hived bench-scale bench-elastic bench-gavel bench-daemon bench-slurm bench-elastic-live format format-check clean

all: build

deps:
	@missing=""; for p in $(DEPS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS) > /dev/null
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	$(BUILD)/gsched sim --cluster $(SPEC) --trace $(DAY) --policy $(DEMO_POLICIES) --out demo-out
	@echo "outputs in demo-out/ (summary.json, jobs.csv, timeline.csv per policy; compare.csv, report.html)"

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-asan: deps
	@cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DGSCHED_SANITIZE=ON $(CMAKE_ARGS) > /dev/null
	@cmake --build $(BUILD_ASAN) -j$(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j$(JOBS)

bench: build
	$(BUILD)/bench/bench_sim
	$(BUILD)/bench/bench_hived

bench-hived: build
	$(BUILD)/bench/bench_hived

bench-scale: build
	BUILD=$(BUILD) bench/bench_scale.sh $(BENCH_ARGS)

bench-elastic: build
	$(BUILD)/bench/bench_elastic $(BENCH_ARGS)

bench-gavel: build
	$(BUILD)/bench/bench_gavel $(BENCH_ARGS)

bench-daemon: build
	$(BUILD)/bench/bench_daemon

bench-slurm: build
	GSCHED_BIN=$(BUILD)/gsched bench/bench_slurm.sh $(BENCH_ARGS)

bench-elastic-live: build
	GSCHED_BIN=$(BUILD)/gsched bench/bench_elastic_live.sh $(BENCH_ARGS)

FORMAT_FILES = $$(git ls-files '*.c' '*.h')

format:
	clang-format -i $(FORMAT_FILES)

format-check:
	clang-format --dry-run -Werror $(FORMAT_FILES)

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) demo-out sim-out
