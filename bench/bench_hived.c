/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_hived.c - cost of ONE scheduling pass of the hived policy (and of
 * the quota baseline) on a large cluster with a long queue.
 *
 * usage: bench_hived [--runs N] [--jobs N] [--seed N] [--dump-config FILE] [POLICY...]
 *
 * Cluster: a HiveD config built in code, one chain of 8 racks x 256 nodes x
 * 8 GPUs = 16,384 GPUs, 4 cell levels (GPU, 4-GPU PCIe switch, node, rack).
 * 20 VCs: vc00 and vc01 own one whole rack each; vc02..vc19 own 80 nodes and
 * 4 PCIe-switch cells each; the last 60 nodes belong to no VC (free for
 * opportunistic jobs).
 *
 * Workload (seeded, same for every policy): at t=0 long "background" gang
 * jobs fill about 85% of every VC's guarantee (half prod, half test); at t=1
 * 10,000 gang jobs arrive, 500 per VC: 1, 2, 4 or 8 GPUs on one node or
 * 2/4/8 tasks of 8 GPUs, priority prod (30%), test (60%) or opportunistic
 * (10%).  The measured pass is the policy's schedule() call at t=1: it sees
 * all 10,000 pending jobs and nothing cached from earlier passes ("cold").
 * A "warm" pass is also measured: at t=2, 3, ... one background job of one
 * VC finishes and the pass that follows is timed (median over 20 such).
 *
 * Each repetition builds a fresh cluster and engine; the median (and min,
 * max) over the repetitions is printed.  Goal: cold pass <= 5 ms.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "gsched/gsched.h"
#include "gsched/policy.h"

#define RACKS          8
#define NODES_PER_RACK 256
#define NVC            20
#define BIG_NODES      80 /* node cells of vc02..vc19 */
#define BIG_SW         4  /* switch cells of vc02..vc19 */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* xorshift64*: the bench's own deterministic generator */
static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}
static int rndn(int n)
{
    return (int)(rnd() % (uint64_t)n);
}

typedef struct buf {
    char *s;
    size_t n, cap;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap ? b->cap * 2 : 1 << 16;
        b->s = realloc(b->s, b->cap);
        if (!b->s) abort();
    }
}

static char *make_config(void)
{
    buf b = {0};
    put(&b,
        "physicalCluster:\n  cellTypes:\n"
        "    V100-SWITCH: {childCellType: V100, childCellNumber: 4}\n"
        "    V100-NODE: {childCellType: V100-SWITCH, childCellNumber: 2, isNodeLevel: true}\n"
        "    V100-RACK: {childCellType: V100-NODE, childCellNumber: %d}\n"
        "  physicalCells:\n",
        NODES_PER_RACK);
    for (int r = 0; r < RACKS; r++) {
        put(&b, "  - cellType: V100-RACK\n    cellChildren:\n");
        for (int k = 0; k < NODES_PER_RACK; k++)
            put(&b, "    - cellAddress: n%d\n", r * NODES_PER_RACK + k);
    }
    put(&b, "virtualClusters:\n");
    for (int v = 0; v < NVC; v++) {
        if (v < 2)
            put(&b, "  vc%02d: {virtualCells: [{cellType: V100-RACK, cellNumber: 1}]}\n", v);
        else
            put(&b,
                "  vc%02d: {virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: %d}, "
                "{cellType: V100-RACK.V100-NODE.V100-SWITCH, cellNumber: %d}]}\n",
                v, BIG_NODES, BIG_SW);
    }
    return b.s;
}

static int vc_gpus(int v)
{
    return v < 2 ? NODES_PER_RACK * 8 : BIG_NODES * 8 + BIG_SW * 4;
}

typedef struct jobdef {
    int vc, prio, ntasks, gpt;
    double submit, duration;
} jobdef;

/* The workload: background jobs then the pending ones (see the header). */
static jobdef *make_jobs(int npending, uint64_t seed, int *nbg_out, int *n_out)
{
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    int cap = npending + NVC * 400;
    jobdef *j = calloc((size_t)cap, sizeof *j);
    if (!j) abort();
    int n = 0;
    for (int v = 0; v < NVC; v++) {
        int left = vc_gpus(v) * 85 / 100, k = 0;
        while (left >= 8) {
            /* 8-GPU single-node and 2x8 jobs; the k-th finishes at t = 2 + k*NVC + v */
            int tasks = left >= 16 && rndn(3) == 0 ? 2 : 1;
            j[n++] = (jobdef){
                v, rndn(2) ? GS_PRIO_PROD : GS_PRIO_TEST, tasks, 8, 0, 2.0 + (double)(k * NVC + v)};
            left -= 8 * tasks;
            k++;
        }
    }
    *nbg_out = n;
    static const int sizes[][2] = {{1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 8}, {4, 8}, {8, 8}};
    static const int weight[] = {40, 15, 15, 15, 8, 5, 2};
    for (int i = 0; i < npending; i++) {
        int w = rndn(100), s = 0;
        while (w >= weight[s]) w -= weight[s++];
        int p = rndn(10);
        j[n++] = (jobdef){
            i % NVC,     p < 3 ? GS_PRIO_PROD : p < 9 ? GS_PRIO_TEST : GS_PRIO_OPPORTUNISTIC,
            sizes[s][0], sizes[s][1],
            1.0,         1e6 + rndn(1000)};
    }
    *n_out = n;
    return j;
}

/* ---- timing the policy's schedule() ---------------------------------------------------------- */

static gs_policy_ops timed_ops;
static int (*inner_schedule)(void *st);
static gs_engine *cur_engine;
static double pass_s[64], pass_cpu[64];
static gs_time pass_t[64];
static int npass;

/* The cold pass goes through its own function, so that a profiler can be told to look at it
 * alone (valgrind --tool=callgrind --toggle-collect=cold_pass). */
static int __attribute__((noinline)) cold_pass(void *st)
{
    return inner_schedule(st);
}

static int timed_schedule(void *st)
{
    double c0 = cpu_s(), t0 = now_s();
    int rc = npass == 1 ? cold_pass(st) : inner_schedule(st);
    double dt = now_s() - t0, dc = cpu_s() - c0;
    if (npass < 64) {
        pass_t[npass] = gs_engine_now(cur_engine);
        pass_cpu[npass] = dc;
        pass_s[npass++] = dt;
    }
    return rc;
}

typedef struct result {
    double cold_s, cold_cpu_s, warm_s;
    size_t pending_before, started, pending_after;
    int ok;
} result;

static result run_once(const char *policy, const char *cfg, const jobdef *jobs, int nbg, int n)
{
    result r = {0};
    gs_diag d;
    gs_diag_init(&d, "bench.yaml");
    gs_cluster *c = NULL;
    if (gs_cluster_parse_hived("bench.yaml", cfg, strlen(cfg), &c, &d)) {
        fprintf(stderr, "bench_hived: config: %s\n", d.msg);
        return r;
    }
    const gs_policy_ops *ops = gs_policy_find(policy);
    if (!ops) {
        fprintf(stderr, "bench_hived: unknown policy %s\n", policy);
        gs_cluster_destroy(c);
        return r;
    }
    timed_ops = *ops;
    inner_schedule = ops->schedule;
    timed_ops.schedule = timed_schedule;
    gs_params p;
    gs_params_init(&p);
    /* ideal speed: placement does not change the work (the pass is what is timed) */
    gs_params_set(&p, "slowdown", "off");
    gs_engine_opts eo;
    gs_engine_opts_init(&eo);
    gs_engine *e = NULL;
    gs_diag_init(&d, NULL);
    if (gs_engine_create_ops(c, &timed_ops, &p, &eo, &e, &d)) {
        fprintf(stderr, "bench_hived: %s: %s\n", policy, d.msg);
        gs_params_release(&p);
        gs_cluster_destroy(c);
        return r;
    }
    cur_engine = e;
    npass = 0;
    gs_engine_reserve_ids(e, n);
    char vcname[NVC][8];
    for (int v = 0; v < NVC; v++) snprintf(vcname[v], sizeof vcname[v], "vc%02d", v);
    for (int i = 0; i < n; i++) {
        gs_job_spec s;
        gs_job_spec_init(&s);
        s.id = i;
        s.vc = vcname[jobs[i].vc];
        s.priority = jobs[i].prio;
        s.ntasks = jobs[i].ntasks;
        s.gpus_per_task = jobs[i].gpt;
        s.submit = gs_time_from_sec(jobs[i].submit);
        s.duration = gs_time_from_sec(jobs[i].duration);
        if (gs_engine_add_job(e, &s, NULL, &d)) {
            fprintf(stderr, "bench_hived: job %d: %s\n", i, d.msg);
            goto out;
        }
    }
    /* t=0: background jobs start */
    if (gs_engine_step(e) != 1) goto out;
    if (gs_engine_nrunning(e) != (size_t)nbg)
        fprintf(stderr, "bench_hived: %s: only %zu of %d background jobs started\n", policy,
                gs_engine_nrunning(e), nbg);
    size_t run0 = gs_engine_nrunning(e);
    /* t=1: the pending jobs arrive; the pass that follows is the measured one */
    int before = npass;
    if (gs_engine_step(e) != 1 || npass != before + 1) goto out;
    r.cold_s = pass_s[before];
    r.cold_cpu_s = pass_cpu[before];
    r.pending_before = (size_t)(n - nbg);
    r.started = gs_engine_nrunning(e) > run0 ? gs_engine_nrunning(e) - run0 : 0;
    r.pending_after = gs_engine_npending(e);
    /* warm passes: one background completion each */
    double w[20];
    int nw = 0;
    while (nw < 20 && npass < 64) {
        before = npass;
        if (gs_engine_step(e) != 1) break;
        if (npass > before) w[nw++] = pass_s[before];
    }
    qsort(w, (size_t)nw, sizeof *w, cmp_d);
    r.warm_s = nw ? w[nw / 2] : 0;
    r.ok = 1;
out:
    gs_engine_destroy(e);
    gs_params_release(&p);
    gs_cluster_destroy(c);
    return r;
}

int main(int argc, char **argv)
{
    int runs = 7, npending = 10000;
    uint64_t seed = 1;
    const char *policies[16];
    int np = 0;
    const char *dump = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
            npending = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--dump-config") && i + 1 < argc)
            dump = argv[++i];
        else if (argv[i][0] == '-') {
            fprintf(stderr,
                    "usage: bench_hived [--runs N] [--jobs N] [--seed N] [--dump-config FILE] "
                    "[POLICY...]\n");
            return 2;
        } else if (np < 16)
            policies[np++] = argv[i];
    }
    if (runs < 1) runs = 1;
    if (npending < 1) npending = 1;
    if (!np) policies[np++] = "hived", policies[np++] = "quota";
    char *cfg = make_config();
    if (dump) {
        FILE *f = fopen(dump, "w");
        if (!f || fputs(cfg, f) < 0 || fclose(f)) {
            perror(dump);
            return 1;
        }
    }
    int nbg, n;
    jobdef *jobs = make_jobs(npending, seed, &nbg, &n);
    printf("cluster: 1 chain, %d racks x %d nodes x 8 GPUs = %d GPUs, 4 cell levels, %d VCs\n",
           RACKS, NODES_PER_RACK, RACKS * NODES_PER_RACK * 8, NVC);
    printf("workload: %d running background gang jobs; %d pending gang jobs arrive at t=1; "
           "%d runs\n",
           nbg, npending, runs);
    printf("%-8s %12s %10s %10s %12s %12s %9s %9s\n", "policy", "cold_med_ms", "min_ms", "max_ms",
           "cold_cpu_ms", "warm_med_ms", "started", "pending");
    int bad = 0;
    for (int pi = 0; pi < np; pi++) {
        double *cold = calloc((size_t)runs, sizeof *cold);
        double *warm = calloc((size_t)runs, sizeof *warm);
        double *ccpu = calloc((size_t)runs, sizeof *ccpu);
        if (!cold || !warm || !ccpu) abort();
        result last = {0};
        int ok = 1;
        for (int k = 0; k < runs && ok; k++) {
            last = run_once(policies[pi], cfg, jobs, nbg, n);
            ok = last.ok;
            cold[k] = last.cold_s;
            ccpu[k] = last.cold_cpu_s;
            warm[k] = last.warm_s;
        }
        if (!ok) {
            printf("%-8s failed\n", policies[pi]);
            bad = 1;
        } else {
            qsort(cold, (size_t)runs, sizeof *cold, cmp_d);
            qsort(warm, (size_t)runs, sizeof *warm, cmp_d);
            qsort(ccpu, (size_t)runs, sizeof *ccpu, cmp_d);
            printf("%-8s %12.3f %10.3f %10.3f %12.3f %12.3f %9zu %9zu\n", policies[pi],
                   cold[runs / 2] * 1e3, cold[0] * 1e3, cold[runs - 1] * 1e3, ccpu[runs / 2] * 1e3,
                   warm[runs / 2] * 1e3, last.started, last.pending_after);
        }
        fflush(stdout);
        free(cold);
        free(warm);
        free(ccpu);
    }
    free(jobs);
    free(cfg);
    return bad;
}
